"""The previous version of a series, from the archive the bot follows.

When the bot checks vN (N >= 2), vN-1 is the newest series of a lower
version from the same author (From:) with the same subject (stripped of
the prefix, the version and the counter), or whose cover letter carries
the same b4 ``change-id:``. Its record is the one the store gives
(``napipatch.store.history.record_of``): its posting Date:, the
Message-IDs of its mails and of every reply in its thread, and the review
trailers given on it (in the patches or in replies, read by b4 as
``series import`` does) with who gave them. It goes into
``series.inputs.history``, where the netdev process checks find it
(``ctx.history``). A vN-1 that cannot be read is a reason in words (the
checks say "unknown" as an info), never a stopped pass.

The newest "net-next is OPEN/CLOSED" announcement the bot has read goes
into ``series.inputs.net_next`` (``napipatch.mails.netnext``).
"""

from __future__ import annotations

import logging

from napipatch.bot.assemble import slots, to_series
from napipatch.bot.config import BotConfig
from napipatch.bot.state import State
from napipatch.errors import NapipatchError
from napipatch.mails import netnext
from napipatch.mails.mail import parse_message
from napipatch.mails.replies import MAX_REPLIES
from napipatch.mails.revisions import change_id
from napipatch.mails.series import Series
from napipatch.store import b4api
from napipatch.store.history import record_of
from napipatch.store.store import LORE_LINK

log = logging.getLogger("napipatch.bot")


def attach(cfg: BotConfig, state: State, row, series: Series) -> Series:
    """``series`` (the bot's series ``row``) with its history and net-next's state."""
    series.inputs.history = history_of(cfg, state, row, series)
    ann = newest_announcement(cfg, state)
    if ann:
        series.inputs.net_next = ann
    return series


def link(cfg: BotConfig, inbox: str, msgid: str) -> str:
    ib = next((i for i in cfg.inboxes if i.name == inbox), None)
    return f"{ib.url}/{msgid}/" if ib and ib.url else LORE_LINK.format(msgid=msgid)


def history_of(cfg: BotConfig, state: State, row, series: Series) -> dict:
    if series.version <= 1:
        return {"previous": None, "why": f"v{series.version} is the first version"}
    cid = change_id(series.cover.body) if series.cover else None
    found = _find(state, row, cid)
    if found is None:
        return {"previous": None,
                "why": f"no earlier version of this series from {row['author_email']} in the "
                       f"archive the bot follows ({row['inbox']})"}
    prev, how = found
    try:
        return {"previous": _record(cfg, state, prev, how), "why": ""}
    except NapipatchError as exc:
        return {"previous": None, "why": f"v{prev['version']} cannot be read: {exc}"}
    except Exception as exc:  # b4 or the email package on junk: a reason, not a crash
        log.warning("series #%d: v%d's history: %s: %s", row["id"], prev["version"],
                    type(exc).__name__, exc)
        return {"previous": None, "why": f"v{prev['version']} cannot be read "
                                         f"({type(exc).__name__}: {exc})"}


def _find(state: State, row, cid: str | None):
    """(vN-1's series row, "subject" or "change-id"), or None."""
    earlier = [r for r in state.earlier_series(row["author_email"], row["version"])
               if r["id"] != row["id"] and r["head_msgid"]]
    for r in earlier:
        if r["title"] == row["title"]:
            return r, "subject"
    if cid:
        for r in earlier:
            head = next((m for m in state.series_members(r["id"])
                         if m["msgid"] == r["head_msgid"] and m["raw"] is not None), None)
            if head is not None and head["idx"] == 0 and _cid(head) == cid:
                return r, "change-id"
    return None


def _cid(head) -> str | None:
    text = bytes(head["raw"]).decode("utf-8", "replace")
    return change_id(text.replace("\r\n", "\n"))


def _record(cfg: BotConfig, state: State, prev, how: str) -> dict:
    members = [dict(m) for m in state.series_members(prev["id"]) if m["kind"] == "patch"]
    if not members:
        raise NapipatchError(f"<{prev['head_msgid']}>", "none of its mails is in the archive")
    s = to_series(slots(members), name_hint=f"bot-{prev['id']}")
    ids = [m["msgid"] for m in members]
    replies = state.thread_replies(ids)
    cover = s.cover.msgid if s.cover else ""
    s.inputs.record.update({
        "cover-message-id": cover or "",
        "message-ids": [p.msgid for p in s.patches if p.msgid],
        "thread-ids": sorted({*ids, *(r["msgid"] for r in replies)}),
        "lore": link(cfg, prev["inbox"], cover or s.patches[0].msgid),
    })
    said = _readable(replies)
    raws = [bytes(m["raw"]) for m in members] + said
    if len(raws) > len(members):
        s.inputs.record["review"] = b4api.collect(raws, s.version).given
    # The replies whole, as series import keeps them: review-followup reads them.
    s.inputs.reply_mails = [parse_message(r, "archive") for r in said[:MAX_REPLIES]]
    s.inputs.reply_link = link(cfg, prev["inbox"], "{msgid}")  # the archive's URLs
    return record_of(s, prev["title"] or s.title, how)


def _readable(replies) -> list[bytes]:
    """The raw review replies napipatch can read; one it cannot (a body not
    in the charset it declares, an unknown charset) is left out with a
    one-line warning, as ``series import`` leaves it out."""
    out = []
    for r in replies:
        if r["raw"] is None:
            continue
        raw = bytes(r["raw"])
        try:
            parse_message(raw, r["inbox"] or "archive")
        except NapipatchError as exc:
            log.warning("%s: reply left out: %s", exc.subject, exc.reason)
            continue
        out.append(raw)
    return out


def newest_announcement(cfg: BotConfig, state: State) -> dict | None:
    """The newest "net-next is OPEN/CLOSED" mail the bot has read."""
    found = [a for r in state.net_next_mails()
             if (a := netnext.announcement(r["subject"] or "", r["date"] or "", r["msgid"],
                                           link(cfg, r["inbox"], r["msgid"])))]
    return netnext.newest(found)
