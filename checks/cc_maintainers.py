"""Every address get_maintainer.pl names is on the patch's To or Cc (NIPA's cc_maintainers).

What it catches:
    A patch mail whose To, Cc, From and Sender leave out someone the tree's
    ``scripts/get_maintainer.pl`` names for it: a maintainer, reviewer or
    list of the files it touches, or a signer (Signed-off-by, Reviewed-by,
    Acked-by) of a commit its ``Fixes:`` tag names, whom get_maintainer.pl
    calls ``blamed_fixes``. An address counts as present when a .mailmap
    line names it beside one that is.

    NIPA's rule (tests/patch/cc_maintainers), with its split: a blamed
    signer missing fails; other addresses missing give a warning when more
    than one of the wanted addresses is there, and fail when at most one is.
    LKML and davem@davemloft.net are never required. napipatch reports a
    fail as an error and a warning as a warning.

    Which addresses a mail has depends on what was checked:

    - mails that are addressed (an mbox, a format-patch directory made with
      ``--to``/``--cc``, a posted series, one imported from lore as the
      bot's reproduce commands do): each patch's own headers, as NIPA
      reads them;
    - a stored series (``NAME@vN``) made from git, or whose mails nobody
      addressed: what ``napipatch send --repo TREE`` would address it to without ``--to``/``--cc``: series.toml's ``to``
      and ``cc``, and get_maintainer.pl's addresses, blamed signers
      included (``kernel.getmaintainer.recipients``, the one function send
      uses). By construction that passes; the check then tells you it will;
    - mails no one has addressed yet (no To or Cc on any mail of the
      series: format-patch output, a revision range, a b4 prep branch):
      NIPA would fail every patch, but only because the mails are not sent
      yet. The series gets one info finding, with the addresses each patch
      needs in its details, and nothing more: a developer who has not
      addressed the mails is not told twenty times over that nobody is on
      Cc. For the NIPA forecast this is "not known yet", not a success.

    Where napipatch differs from NIPA, and why: get_maintainer.pl runs
    from the base commit's trusted copy with the base's MAINTAINERS, not
    the patched tree's (a series that adds its own MAINTAINERS entry is
    judged without it); and without git history (``--nogit-fallback``): NIPA
    also wants, for a file no MAINTAINERS pattern names exactly, whoever
    signed 35% of the file's last year of commits in its tree, which on
    net/ is the maintainers who apply the patches, already wanted here.
    NIPA drops blamed signers who have not posted to netdev for 3 years
    (a lore search) and accepts a few maintainers' colleagues by domain;
    napipatch, offline, does neither, so it may ask for one address more.

Why a reviewer cares:
    Maintainers read what reaches them: a patch that misses its
    maintainers waits, and the author of the commit it fixes is the one
    who can tell whether the fix is right. The netdev CI marks it in
    patchwork.

Example:
    A patch to drivers/net/ethernet/renesas/ravb_main.c sent To
    netdev@vger.kernel.org only: "3 maintainers not CCed:
    paul.barker.ct@bp.renesas.com niklas.soderlund@ragnatech.se
    linux-renesas-soc@vger.kernel.org".

Fix:
    ``napipatch send --repo TREE`` addresses each mail from
    get_maintainer.pl; with git send-email, ``--to-cmd`` /
    ``--cc-cmd='scripts/get_maintainer.pl'``; b4: ``b4 prep --auto-to-cc``.
"""

from __future__ import annotations

import email.utils

from napipatch.checks import check
from napipatch.kernel.getmaintainer import GetMaintainer, recipients
from napipatch.kernel.maintainers import FIXES
from napipatch.mails.addresses import addresses, mailmap_aliases

# Addresses NIPA never asks for: LKML (not expected on everything) and
# David Miller (listed for net, no longer required on Cc).
NOT_REQUIRED = {"linux-kernel@vger.kernel.org", "davem@davemloft.net"}


def _mail_text(mail) -> str:
    """The mail as NIPA hands it to get_maintainer.pl: as it was written."""
    return mail.raw.decode("utf-8", "replace") if mail.raw else mail.as_format_patch()


def _has(mail, extra_to=(), extra_cc=()) -> set[str]:
    """Lower-case addresses of the mail's To, Cc, From and Sender."""
    heads = [mail.to, mail.cc, mail.author, mail.sender, *extra_to, *extra_cc]
    return {a.lower() for _n, a in email.utils.getaddresses([h for h in heads if h]) if a}


def _covered(wanted: set[str], have: set[str], alias: dict[str, set[str]]) -> set[str]:
    """The addresses of ``wanted`` that are in ``have``, or named beside one
    of ``have`` on a .mailmap line."""
    return {a for a in wanted if a in have or alias.get(a, set()) & have}


def _judge(ctx, n: int, want, have: set[str], alias):
    expected = {w.address for w in want} - NOT_REQUIRED
    blamed = {w.address for w in want if w.blamed} - NOT_REQUIRED
    covered = _covered(expected, have, alias)
    missing = sorted(expected - covered)
    missing_blamed = sorted(blamed - covered)
    if missing_blamed:
        yield ctx.finding("error", f"{len(missing_blamed)} signer(s) of the commit Fixes: "
                          f"names not CCed: {' '.join(missing_blamed)}", patch=n,
                          hint="Cc the author and reviewers of the commit you fix")
    others = [a for a in missing if a not in missing_blamed]
    if others:
        yield ctx.finding("warning" if len(covered) > 1 else "error",
                          f"{len(others)} maintainer(s) not CCed: {' '.join(others)}",
                          patch=n, hint="Cc everyone scripts/get_maintainer.pl names "
                                        "(napipatch send --repo does)")


@check(id="cc-maintainers",
       summary="To/Cc hold get_maintainer.pl's addresses and the Fixes: commit's signers",
       scope="series",
       needs="scripts",
       version=1,
       nipa=("cc_maintainers",))
def run(ctx):
    series, tree = ctx.series, ctx.tree
    patches = series.patches
    if not patches:
        return
    for mail in patches:   # what get_maintainer.pl will resolve: inputs
        for sha in FIXES.findall(_mail_text(mail)):
            tree.resolve(sha)
    runner = GetMaintainer(tree.scripts, tree.reader.read, tree.base, tree.git_dir,
                           ctx.config.get_maintainer_timeout)
    wanted = runner.wanted([_mail_text(m) for m in patches])
    alias = mailmap_aliases(runner.mailmap)
    stored = series.inputs.recipients
    addressed = any(m.addressed for m in series.mails)
    # A stored series goes where ``napipatch send`` addresses it when that is
    # how it will leave: made from git here, or not addressed by anyone yet.
    # Mails already addressed (imported from the list, as the bot reads
    # them) are judged by their own headers, as NIPA judges them.
    if stored is not None and addressed and "exported-from" not in series.inputs.record:
        stored = None
    if stored is None and not addressed:
        yield _unaddressed(ctx, wanted)
        return
    for n, (mail, want) in enumerate(zip(patches, wanted), 1):
        if stored is not None:
            to, cc = recipients(addresses(stored.get("to"), "series.toml to"),
                                addresses(stored.get("cc"), "series.toml cc"), want)
            have = _has(mail, to, cc)
        else:
            have = _has(mail)
        yield from _judge(ctx, n, want, have, alias)


def _unaddressed(ctx, wanted):
    """One info for a series nobody has addressed yet: who each patch needs."""
    need = [sorted({w.address for w in want} - NOT_REQUIRED) for want in wanted]
    every = sorted(set().union(*need))
    return ctx.finding("info", f"not addressed yet (no To or Cc on any mail): get_maintainer.pl "
                       f"names {len(every)} address(es) to send it to",
                       details="\n".join(f"patch {n}: {' '.join(a)}"
                                          for n, a in enumerate(need, 1)),
                       hint="napipatch send --repo TREE, or git send-email "
                            "--cc-cmd=scripts/get_maintainer.pl",
                       nipa={"cc_maintainers": "unknown"})
