"""A new version posted as a reply in the previous version's thread.

What it catches:
    vN's cover letter (or its first patch, without a cover) whose
    ``In-Reply-To`` or ``References`` names a mail of vN-1's thread: its
    cover letter, a patch, or a reply imported with it (the Message-IDs
    come from the store, or in the bot from the archive it follows:
    ``ctx.history``). Without vN-1's Message-IDs in
    the store an info says it cannot tell.

Why a reviewer cares:
    Documentation/process/maintainer-netdev.rst: "Do not post new versions
    as a reply to the previous version; instead, include a link to the
    previous version in the changelog." A series buried in an old thread
    is missed by patchwork and by reviewers' mail filters; netdev's own bot
    mails a form letter about it.

Example:
    ``git send-email --in-reply-to=<v4 cover Message-ID> v5/*.patch``.

Fix:
    Send vN as a new thread (no ``--in-reply-to``) and link vN-1 in the
    changelog of the cover letter.
"""

from __future__ import annotations

from napipatch.checks import check

from napipatch.mails.revisions import previous


@check(id="new-thread",
       summary="a new version starts a new thread, not a reply to the last",
       scope="series",
       needs="diff",
       nipa=(),
       group="netdev process",
       history=True)
def run(ctx):
    s = ctx.series
    head = s.cover or s.patches[0]
    refs = [r for r in [head.in_reply_to, *head.references] if r]
    if not refs:
        return
    prev = yield from previous(ctx, "threading")
    if prev is None:
        return
    p, what = prev["version"], "cover letter" if s.cover else "first patch"
    thread = set(prev.get("thread-ids") or [])
    if not thread:
        yield ctx.finding("info", f"threading: unknown, v{p}'s Message-IDs are not in the store "
                          f"(never sent, or imported from format-patch files)")
        return
    hit = next((r for r in refs if r in thread), None)
    if hit:
        header = "In-Reply-To" if hit == head.in_reply_to else "References"
        yield ctx.finding("warning", f"v{s.version}'s {what} is threaded under v{p}: its "
                          f"{header} names <{hit}>",
                          hint=f"send v{s.version} as a new thread (no --in-reply-to) and link "
                               f"v{p} in the changelog: {prev.get('lore', '')}".rstrip(": "))
