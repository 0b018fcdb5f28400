"""The list's own "net-next is CLOSED" / "net-next is OPEN" announcements.

netdev's maintainers open and close net-next with a mail to the list
whose subject says so ("net-next is CLOSED", "[ANN] net-next is OPEN",
"net-next is closed for the merge window" ...). The newest one (by its
``Date:``) is net-next's state. An announcement is kept as plain data
(it joins the check's cache key): ``{"state": "open"|"closed", "subject",
"date" (ISO UTC), "message-id", "link"}``.

Where the state comes from, in order: ``git config napipatch.net-next``
(``open`` / ``closed``) when set, as the user's own word; else the newest
announcement, from the archive the bot follows, or imported into the
store with ``napipatch series import`` (``store/net-next.toml``).
"""

from __future__ import annotations

import re

from napipatch.mails.revisions import iso, parse_date

_ANN = re.compile(r"^\s*(?:\[ANN(?:OUNCE)?\]\s*)?net-next\s+(?:is\s+)?(?:now\s+)?"
                  r"(closed|open|re-?opened)\b", re.IGNORECASE)


def state_of(subject: str) -> str | None:
    """``closed`` or ``open`` for an announcement's subject (None: not one;
    a reply, ``Re: net-next is OPEN``, is none)."""
    m = _ANN.match(subject or "")
    if not m:
        return None
    return "closed" if m.group(1).lower() == "closed" else "open"


def announcement(subject: str, date: str, msgid: str, link: str) -> dict | None:
    """The announcement's record, or None when ``subject`` is no
    announcement or its ``Date:`` is not a date (it cannot be ordered)."""
    state = state_of(subject)
    when, _why = parse_date(date)
    if state is None or when is None:
        return None
    return {"state": state, "subject": " ".join(subject.split()), "date": iso(when),
            "message-id": msgid, "link": link}


def newest(found: list[dict]) -> dict | None:
    """The newest of ``found`` announcements (by Date:)."""
    return max(found, key=lambda a: a["date"], default=None)
