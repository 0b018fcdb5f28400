"""The changelog links the previous version on lore.

What it catches:
    From v2 on, a cover letter (or single patch) with no lore or
    patch.msgid.link URL holding vN-1's cover Message-ID (its first patch's
    without a cover). Any inbox counts: ``lore.kernel.org/all/``,
    ``/netdev/``, ``/r/`` or ``patch.msgid.link``; the Message-ID is what
    is matched. The link to give comes from the store (``ctx.history``;
    in the bot, from the archive it follows);
    without vN-1 or its Message-ID there an info says it cannot tell.

Why a reviewer cares:
    Documentation/process/maintainer-netdev.rst: "Do not post new versions
    as a reply to the previous version; instead, include a link to the
    previous version in the changelog"; and on changes requested: "include
    a lore link to the previous versions" in the cover letter. Maintainers
    ask for it by hand on almost every v2 that lacks it.

Example:
    A v5 cover letter whose changelog says "v5: - Rebased" and no URL.

Fix:
    Add the link to the changelog: ``v4: https://lore.kernel.org/all/<v4
    cover Message-ID>/`` (``napipatch series export`` writes it).
"""

from __future__ import annotations

from napipatch.checks import check

from napipatch.mails.revisions import linked_msgids, previous


@check(id="version-link",
       summary="from v2 on, the changelog links the previous version on lore",
       scope="series",
       needs="diff",
       nipa=(),
       group="netdev process",
       history=True)
def run(ctx):
    s = ctx.series
    if s.inputs.synthetic_cover:
        return  # format-patch's placeholder: nothing written to judge yet
    prev = yield from previous(ctx, "the link to the previous version")
    if prev is None:
        return
    p = prev["version"]
    target = prev.get("cover-message-id") or next(iter(prev.get("message-ids") or []), "")
    if not target:
        yield ctx.finding("info", f"the link to the previous version: unknown, v{p}'s Message-ID "
                          "is not in the store (never sent, or imported from format-patch files)")
        return
    head = s.cover or s.patches[0]
    if target in linked_msgids(head.body):
        return
    where = "changelog of the cover letter" if s.cover else "changelog (below ---)"
    yield ctx.finding("warning", f"the {where} has no lore link to v{p} <{target}>",
                      hint=f"v{p}: {prev['lore']}")
