"""Signed-off-by from the author and from the sender (NIPA's verify_signedoff).

What it catches:
    A patch whose author has no ``Signed-off-by:``; a patch sent by someone
    else (an in-body ``From:`` names the author) whose sender has none; a
    sign-off chain that does not end with the sender's.

    NIPA's rule (tests/patch/verify_signedoff): fail unless a
    Signed-off-by matches the author and one matches the committer; a
    match is the address or the name, in any case. The committer is NIPA's
    own: it applies each patch with ``git am -s``, which adds its sign-off,
    so in practice NIPA fails only on the author's. The author is the mail's
    From, or the in-body ``From:`` when the sender is not the author.

    napipatch matches the author the same way (address or name) and fails
    the same patches. The rest is napipatch's own, from the kernel's
    submitting-patches.rst, and NIPA does not flag it: the sender's
    sign-off (error: a sender vouches for the patch they pass on) and the
    chain ending with it (warning). ``Fixes:`` tags are the fixes-tag check's.

Why a reviewer cares:
    The sign-off is the Developer's Certificate of Origin: maintainers
    cannot apply a patch without its author's, and the netdev CI marks it
    failed in patchwork within the hour.

Example:
    A patch ``From: Jane <jane@example.org>`` whose only trailer is
    ``Signed-off-by: John <john@example.org>``.

Fix:
    ``git commit -s --amend`` as the author; whoever sends someone else's
    patch adds their own sign-off last.
"""

from __future__ import annotations

import email.utils

from napipatch.checks import check
from napipatch.mails.addresses import readable


def _signers(trailers) -> list[tuple[str, str]]:
    """(name, address) of each Signed-off-by, lower-case."""
    out = []
    for key, value, _line in trailers:
        if key.lower() == "signed-off-by":
            name, addr = email.utils.parseaddr(value)
            out.append((name.strip().lower(), addr.strip().lower()))
    return out


def _signed(signers, name: str, addr: str) -> bool:
    """NIPA's match: the address, or the name, of one Signed-off-by."""
    name, addr = name.strip().lower(), addr.strip().lower()
    return any((addr and a == addr) or (name and n == name) for n, a in signers)


@check(id="signoff",
       summary="Signed-off-by from the author and the sender, the sender's last",
       scope="patch",
       needs="diff",
       version=3,
       nipa=("verify_signedoff",))
def run(ctx):
    mail = ctx.mail
    signers = _signers(mail.trailers)
    a_name, a_addr = mail.commit_author
    author = readable(a_name, a_addr)
    if not signers:
        yield ctx.finding("error", "no Signed-off-by", hint="git commit -s --amend")
        return
    if not _signed(signers, a_name, a_addr):
        yield ctx.finding("error", f"no Signed-off-by from the author {author}",
                          hint="the author must sign off (git commit -s)")
    sender = mail.author_email.strip().lower()
    if sender != a_addr.lower() and not _signed(signers, mail.author_name, sender):
        yield ctx.finding("error", f"no Signed-off-by from the sender {mail.author}, who "
                          f"sends {author}'s patch",
                          hint="add your own Signed-off-by after the author's",
                          nipa={})  # NIPA's own git am -s is the committer's
    elif not _signed(signers[-1:], mail.author_name, sender) and \
            _signed(signers, mail.author_name, sender):
        last = signers[-1][1] or signers[-1][0]
        yield ctx.finding("warning", f"Signed-off-by chain ends with {last}, not the "
                          f"sender <{mail.author_email}>",
                          hint="whoever sends the patch adds their sign-off last",
                          nipa={})
