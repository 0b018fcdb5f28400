"""What two versions of one series have in common: posting times, lore
links, patch-ids and review trailers.

The history checks (``checks/process/repost_wait.py`` and its siblings) compare the
version being checked with the previous one, which the engine offers as
``ctx.history`` (built from the store by ``napipatch.store.history``).
The helpers both sides need live here, so a check imports no store code.
"""

from __future__ import annotations

import email.utils
import re
from datetime import UTC, datetime, timedelta
from urllib.parse import unquote

# netdev's rule: "wait at least 24 hours between postings"
# (Documentation/process/maintainer-netdev.rst).
REPOST_WAIT = timedelta(hours=24)
# The trailers a reviewer gives that the author carries to an unchanged patch.
REVIEW_KEYS = ("Reviewed-by", "Acked-by", "Tested-by")
ISO = "%Y-%m-%dT%H:%M:%SZ"

# Any lore inbox (/all/, /netdev/, /r/, /bpf/ ...) or patch.msgid.link,
# followed by a Message-ID (percent-encoded or not).
_LINK = re.compile(r"https?://(?:lore\.kernel\.org/[A-Za-z0-9._+-]+|patch\.msgid\.link)"
                   r"/([^/\s<>\"')\]]+(?:@|%40)[^/\s<>\"')\]]+)", re.IGNORECASE)
_CHANGE_ID = re.compile(r"^change-id: (\S+)\s*$", re.MULTILINE)


def parse_date(value: str | None) -> tuple[datetime | None, str]:
    """A Date: header (or ``sent``'s ISO time) as an aware UTC datetime, or
    (None, why) in words when it is missing or not a date."""
    if not value or not value.strip():
        return None, "has no Date:"
    text = value.strip()
    try:
        if re.fullmatch(r"\d{4}-\d\d-\d\dT[\d:]+Z?", text):
            when = datetime.strptime(text.rstrip("Z"), ISO.rstrip("Z"))
        else:
            when = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None, f"has a Date: that is not a date ({text[:60]!r})"
    if when is None:
        return None, f"has a Date: that is not a date ({text[:60]!r})"
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return when.astimezone(UTC), ""


def iso(when: datetime) -> str:
    return when.astimezone(UTC).strftime(ISO)


def linked_msgids(text: str) -> set[str]:
    """The Message-IDs that lore or patch.msgid.link URLs in ``text`` name,
    whatever the inbox in the URL."""
    return {unquote(m.group(1)).strip("<>") for m in _LINK.finditer(text)}


def change_id(body: str) -> str | None:
    """b4's ``change-id:`` in a cover letter (it names the series across versions)."""
    m = _CHANGE_ID.search(body)
    return m.group(1) if m else None



def person(value: str) -> str:
    """The address of a trailer's person, lower case: what tells two
    trailers apart ("Reviewed-by: Joe <joe@x>" and "...: JOE <Joe@X>" agree)."""
    _name, addr = email.utils.parseaddr(value)
    return (addr or value).strip().lower()


def review_trailers(trailers: list[tuple[str, str, int]]) -> list[str]:
    """``Key: value`` of the review trailers in a trailer block."""
    return [f"{k}: {v}" for k, v, _line in trailers
            if k.lower() in {r.lower() for r in REVIEW_KEYS}]


def has_trailer(trailers: list[tuple[str, str, int]], trailer: str) -> bool:
    """Whether a trailer block holds ``trailer`` (same key, same person)."""
    key, _, value = trailer.partition(":")
    return any(k.lower() == key.strip().lower() and person(v) == person(value)
               for k, v, _line in trailers)


def when(value: str) -> str:
    """An ISO UTC time as a person reads it: ``2025-03-21 02:15 UTC``."""
    got, _why = parse_date(value)
    return got.strftime("%Y-%m-%d %H:%M UTC") if got else value


def previous(ctx, rule: str):
    """The previous version's record (``ctx.history``), as a check's
    ``prev = yield from previous(ctx, rule)``: None, after yielding an info
    saying so and how to give it one, when the rule cannot be judged (no
    previous version in the store); None, silently, for a first version,
    which the rule does not concern."""
    prev = ctx.history
    if prev is None and ctx.series.version > 1:
        yield ctx.finding(
            "info", f"{rule}: unknown, {ctx.history_why}",
            hint=f"import v{ctx.series.version - 1}'s thread: napipatch series import "
                 f"MBOX-OR-MESSAGE-ID --name {ctx.series.name}")
    return prev


def posting(series) -> tuple[datetime | None, str]:
    """When ``series`` went out: (time, "") when it was sent (``sent`` in
    its record) or posted (it has a Message-ID: its Date:); (None, "") when
    it is not sent yet; (None, why) when its Date: is broken."""
    if series.inputs.record.get("sent"):
        got, why = parse_date(str(series.inputs.record["sent"]))
        return got, "" if got else f"v{series.version}'s sent time {why[4:]}"
    head = series.cover or series.patches[0]
    if not head.msgid:
        return None, ""
    got, why = parse_date(head.date)
    what = "cover letter" if series.cover else "first patch"
    return got, "" if got else f"v{series.version}'s {what} {why}"
