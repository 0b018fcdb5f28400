"""A series for net-next while net-next is closed (the merge window).

What it catches:
    A series whose subject tag is ``net-next``, not an RFC, while net-next
    is closed. The state is ``git config napipatch.net-next`` (``open`` /
    ``closed``) when set, the user's own word; else the newest of the
    list's own announcements ("net-next is CLOSED", "[ANN] net-next is
    OPEN" ...): the bot reads them from the archive it follows, and
    ``napipatch series import`` of an announcement mail records it in the
    store (``net-next.toml``). The warning names what it went by: the
    announcement's subject, date and lore link. With ``open``, or nothing
    known, nothing is said: most of the year net-next is open, and an info
    on every series would be noise.

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
    ``[RFC PATCH net-next]`` meanwhile; import the announcement when it
    comes (``napipatch series import MESSAGE-ID``), or set ``git config
    napipatch.net-next open``.
"""

from __future__ import annotations

from napipatch.checks import check

from napipatch.mails.revisions import when


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
    ann = s.inputs.net_next or {}
    told = ctx.config.net_next.strip().lower()
    if told:
        state, said = told, "git config napipatch.net-next"
    else:
        state = ann.get("state", "")
        said = (f"the list's announcement \"{ann.get('subject')}\" of {when(ann['date'])}, "
                f"{ann.get('link')}" if ann else "")
    if state == "closed":
        yield ctx.finding("warning", f"net-next is closed ({said}): the list takes no new "
                          "net-next content until it reopens",
                          hint="wait for the list's 'net-next is OPEN' announcement, or post "
                               "it as [RFC PATCH net-next] meanwhile")
