"""Signed-off-by chain and ``Fixes:`` tags.

What it catches:
    A patch without the author's ``Signed-off-by:``; a chain that does not
    end with the sender's; a ``Fixes:`` tag not in the form
    ``Fixes: <12+ hex digits> ("subject")``; with ``--tree``, a Fixes tag
    naming a commit the tree does not have, or whose subject differs.

Why a reviewer cares:
    The DCO sign-off is a legal requirement; maintainers drop patches
    without it. A wrong Fixes tag sends a fix to the wrong stable trees.
    The netdev CI runs ``verify_signedoff`` and ``verify_fixes`` on every
    patch.

Example:
    ``Fixes: 1234abcd ("net: foo")`` (too short) or ``Fixes: 1234abcd5678``.

Fix:
    ``git commit -s``; ``git log -1 --format='Fixes: %h ("%s")' --abbrev=12 SHA``.
"""

from __future__ import annotations

from napipatch.checks import check

import re


_FIXES = re.compile(r'^([0-9a-f]{12,40}) \("(.+)"\)$')


def _email(value: str) -> str:
    m = re.search(r"<([^>]+)>", value)
    return (m.group(1) if m else value).strip().lower()


@check(id="signoff",
       summary="author's Signed-off-by, chain ends with the sender, Fixes: tags well formed",
       scope="patch",
       needs="diff",
       version=2)
def run(ctx):
    mail = ctx.mail
    trailers = mail.trailers
    sobs = [(v, ln) for k, v, ln in trailers if k.lower() == "signed-off-by"]
    author = mail.author_email.lower()
    if not sobs:
        yield ctx.finding("error", "no Signed-off-by", hint="git commit -s --amend")
    else:
        if author not in {_email(v) for v, _ in sobs}:
            yield ctx.finding("error", f"no Signed-off-by from the author <{mail.author_email}>",
                              hint="the author must sign off (git commit -s)")
        if _email(sobs[-1][0]) != author:
            yield ctx.finding("warning", f"Signed-off-by chain ends with {sobs[-1][0]}, "
                              f"not the sender <{mail.author_email}>",
                              hint="whoever sends the patch adds their sign-off last")
    for key, value, _ln in trailers:
        if key.lower() != "fixes":
            continue
        m = _FIXES.match(value)
        if not m:
            yield ctx.finding("error", f"malformed Fixes: tag {value!r}",
                              hint="Fixes: <12+ hex digits> (\"subject of that commit\")")
            continue
        if ctx.tree is None:
            continue
        sha = ctx.tree.resolve(m.group(1))
        if not sha:
            yield ctx.finding("warning", f"Fixes: {m.group(1)} is not in the tree",
                              hint="check the hash against the tree you target")
            continue
        subj = ctx.tree.subject(sha)
        if subj != m.group(2):
            yield ctx.finding("error", f"Fixes: {m.group(1)} names \"{m.group(2)}\" but that "
                              f"commit is \"{subj}\"",
                              hint=f'Fixes: {sha[:12]} ("{subj}")')
