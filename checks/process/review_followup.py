"""Review comments of the previous version that this version leaves open.

What it catches:
    A comment a reviewer wrote on vN-1 -- the words after lines quoted from
    a patch -- that vN neither changed (the quoted lines still stand in vN,
    by content, with their quoted context around them), nor answered (no
    reply of the author's below it explains; a "will fix in v2" that vN did
    not keep stays open), nor mentioned (vN's changelog credits the reviewer
    or names what the comment named). It warns at the FILE:LINE where those
    lines stand at vN's tip, with the reviewer, the comment's first line and
    its lore link. The comments handled are one info each, and so are the
    general ones (quoting prose, or the whole patch) left unanswered. vN-1's
    thread comes from the store (``series import`` keeps its replies) or, in
    the bot, from the archive it follows; without it the check says so.

Why a reviewer cares:
    A review round costs the reviewer an hour; a comment ignored in the next
    version costs another round, and reviewers say so ("Is there any
    particular reason why that feedback was not addressed?", on v4 of the
    threaded busy poll series). Documentation/process/submitting-patches
    asks to answer every review comment and to list the changes since the
    previous version.

Example:
    v1 1/2 adds ``dev->max_mtu = 65535;``, the reviewer answers "Please use
    ETH_MAX_MTU here.", the author "Will do in v2." and v2 still has 65535.

Fix:
    Change the code, or answer the reviewer in the thread, and say what was
    done in the changelog (``napipatch series changelog NAME@vN`` drafts its
    lines, one per comment, with the reviewer and the link).
"""

from __future__ import annotations

from napipatch.checks import check

from napipatch.mails import followup, patchtext
from napipatch.mails.revisions import previous

RULE = "review follow-up"


@check(id="review-followup",
       summary="review comments on the previous version changed, answered or mentioned",
       scope="series",
       needs="diff",
       nipa=(),
       group="netdev process",
       history=True)
def run(ctx):
    prev = yield from previous(ctx, RULE)
    if prev is None:
        return
    got = prev.get("review-comments") or {"unknown": f"v{prev['version']}'s record has no "
                                                     "review comments"}
    if "unknown" in got:
        yield ctx.finding("info", f"{RULE}: unknown, {got['unknown']}",
                          hint=f"import v{prev['version']}'s thread again: napipatch series "
                               f"import MBOX-OR-MESSAGE-ID --name {prev['name']} --force")
        return
    s = ctx.series
    lines = [patchtext.patch_lines(p.diff) for p in s.patches]
    found = followup.entries(s)
    for c in got["comments"]:
        v = followup.judge(c, s, lines, found)
        yield _finding(ctx, prev["version"], c, v)


def _finding(ctx, p: int, c: dict, v: followup.Verdict):
    on = f"v{p} {c['patch']}/{c['total']}"
    said = f"{c['reviewer']} on {on}: \"{c['first']}\""
    if v.state == "open":
        return ctx.finding("warning", f"{said} left open: {v.why} ({c['link']})",
                           file=v.file, line=v.line, patch=v.patch,
                           hint="change it, answer it in the thread, or say in the changelog "
                                "why not")
    where = f" [{c['file']}:{c['line']} in v{p}]" if "file" in c else ""
    return ctx.finding("info", f"{v.state}: {said}{where}: {v.why} ({c['link']})")
