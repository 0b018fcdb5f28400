"""A series for net-next while net-next is closed (the merge window).

What it catches:
    A series whose subject tag is ``net-next``, not an RFC, while net-next
    is closed: ``git config napipatch.net-next closed``, set from the
    list's own announcement. With ``open``, or unset, nothing is said:
    most of the year net-next is open, and an info on every series would
    be noise (``napipatch config`` shows the key and its value).

    netdev's rule (Documentation/process/maintainer-netdev.rst, "git
    trees and patch flow"): for about two weeks after each release (the
    merge window) net-next is closed; "please do not send new net-next
    content" then, RFCs are fine. The list's bot answers such a posting
    with its form letter ("net-next is CLOSED"), and the series has to be
    reposted when the tree reopens.

Why a reviewer cares:
    A series posted while net-next is closed is not applied and not
    reviewed for merging; the author loses the posting and, with the
    24-hour rule, at least a day.

Example:
    ``[PATCH net-next v5 0/5] net: add threaded napi busy poll`` with
    ``napipatch.net-next = closed``.

Fix:
    Wait for the "net-next is OPEN" announcement, or post the series as
    ``[RFC PATCH net-next]`` meanwhile; set ``git config napipatch.net-next
    open`` when it reopens.
"""

from __future__ import annotations

from napipatch.checks import check


@check(id="net-next-closed",
       summary="a net-next series (not RFC) while net-next is closed",
       scope="series",
       needs="diff",
       nipa=(),
       group="netdev process")
def run(ctx):
    s = ctx.series
    head = s.cover or (s.patches[0] if s.patches else None)
    if s.tree != "net-next" or head is None or head.subject.rfc:
        return
    state = ctx.config.net_next.strip().lower()
    if state == "closed":
        yield ctx.finding("warning", "net-next is closed (git config napipatch.net-next): "
                          "the list takes no new net-next content until it reopens",
                          hint="wait for the list's 'net-next is OPEN' announcement, or post "
                               "it as [RFC PATCH net-next] meanwhile")
