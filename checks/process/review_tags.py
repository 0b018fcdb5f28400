"""Review tags given on the previous version, dropped from unchanged patches.

What it catches:
    A ``Reviewed-by``, ``Acked-by`` or ``Tested-by`` given on vN-1 -- in
    the patch itself, in a reply to it, or in a reply to the cover letter
    (every patch) -- for a patch whose diff did not change in vN (same
    ``git patch-id --stable``) and that vN's patch lacks. vN-1's patches
    and the trailers its imported thread gave, with who gave them, come
    from the store (``ctx.history``, kept by ``series import``), or in the
    bot from the archive it follows.

Why a reviewer cares:
    Documentation/process/maintainer-netdev.rst (and submitting-patches):
    review tags are carried over to the next version of a patch that did
    not change; dropping them throws the reviewer's work away and sends
    the patch back to the end of the queue. Maintainers ask "you dropped
    my tag?" on the list.

Example:
    v1 2/3 got "Reviewed-by: Joe Damato <jdamato@fastly.com>" in a reply;
    v2 2/3 is the same diff without it.

Fix:
    Add the trailer to the patch (``napipatch fix`` on the b4 prep branch
    makes an ``amend!`` commit adding it; ``b4 trailers -u``, or ``napipatch
    series export --carry-tags`` for a stored series), unless the patch
    changed enough that the reviewer should look again: then say so in the
    changelog.
"""

from __future__ import annotations

from napipatch.checks import check

from napipatch.mails.revisions import has_trailer, previous
from napipatch.report.findings import add_trailers
from napipatch.tree.gitutil import patch_id


@check(id="review-tags",
       summary="review tags from the previous version carried to unchanged patches",
       scope="series",
       needs="diff",
       nipa=(),
       group="netdev process",
       history=True,
       fixes="adds the trailer vN-1 gave to the unchanged patch's message (an amend! commit)")
def run(ctx):
    prev = yield from previous(ctx, "review tags carried over")
    if prev is None:
        return
    p = prev["version"]
    old = {q["patch-id"]: q for q in prev.get("patches", []) if q.get("patch-id")}
    if not old:
        yield ctx.finding("info", f"review tags carried over: unknown, v{p} is stored without "
                          "its patches (cover letter only)")
        return
    for n, mail in enumerate(ctx.series.patches, 1):
        was = old.get(patch_id(mail.diff))
        if was is None:
            continue  # changed (or new): its tags are the reviewer's call
        said = set()
        for t in was["trailers"]:
            if t["trailer"].lower() in said or has_trailer(mail.trailers, t["trailer"]):
                continue
            said.add(t["trailer"].lower())
            by = f" by {t['by']}" if t.get("by") and t["by"] not in t["trailer"] else ""
            yield ctx.finding("warning", f"{t['trailer']} given on v{p} {was['n']}/"
                              f"{len(prev['patches'])} ({t['in']}{by}) is missing; the diff "
                              "did not change", patch=n,
                              hint=f"add it to the trailers: {t['trailer']}",
                              fix=add_trailers(f"adds {t['trailer']}", t["trailer"]))
