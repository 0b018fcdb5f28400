"""A new version posted (or about to be) less than 24 hours after the last.

What it catches:
    vN posted less than 24 hours after vN-1: by its ``Date:`` (or ``sent``
    in series.toml) when it has gone out, or now when it has not been sent
    yet. vN-1's time is ``sent`` in series.toml or the ``Date:`` of its
    cover letter (or first patch), from the store (``ctx.history``), or in
    the bot from the archive it follows.
    Without vN-1 in the store, or with a vN-1 whose time is unknown (never
    sent, a broken ``Date:``), an info says why it cannot tell.

Why a reviewer cares:
    Documentation/process/maintainer-netdev.rst: "Make sure you address
    all the feedback in your new posting. Do not post a new version of the
    code if the discussion about the previous version is still ongoing,
    unless directly instructed by a reviewer. ... wait at least 24 hours
    between postings." netdev's own bot mails a form letter to a version
    reposted sooner, and reviewers skip it.

Example:
    v4 posted Fri 21 Mar 2025 02:15 UTC, v5 posted the same day at 18:00.

Fix:
    Wait until the time the finding gives; answer the review of vN-1 in
    its thread meanwhile.
"""

from __future__ import annotations

from napipatch.checks import check

from napipatch.mails.revisions import (
    REPOST_WAIT,
    iso,
    parse_date,
    posting,
    previous,
    when,
)


@check(id="repost-wait",
       summary="24 hours between two versions of a series",
       scope="series",
       needs="diff",
       nipa=(),
       group="netdev process",
       history=True)
def run(ctx):
    prev = yield from previous(ctx, "the 24-hour rule")
    if prev is None:
        return
    p, n = prev["version"], ctx.series.version
    if not prev.get("posted"):
        yield ctx.finding("info", f"the 24-hour rule: unknown, {prev.get('date-problem')}")
        return
    last, _ = parse_date(prev["posted"])
    may_go = last + REPOST_WAIT
    sent, problem = posting(ctx.series)
    if problem:
        yield ctx.finding("info", f"the 24-hour rule: unknown, {problem}")
        return
    said = f"v{p} was posted {when(prev['posted'])} ({prev.get('posted-from')})"
    if sent is None:
        if not ctx.passed(may_go):
            yield ctx.finding("warning", f"v{n} is not sent yet and {said}: it may go after "
                              f"{when(iso(may_go))}",
                              hint="netdev asks for 24 hours between postings: wait, and "
                                   f"answer v{p}'s review in its thread meanwhile")
        return
    if sent < may_go:
        hours = (sent - last).total_seconds() / 3600
        yield ctx.finding("warning", f"v{n} was posted {when(iso(sent))}, {hours:.1f} hours "
                          f"after v{p}: {said}; it may go after {when(iso(may_go))}",
                          hint="netdev asks for 24 hours between postings")
