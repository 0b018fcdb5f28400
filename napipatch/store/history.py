"""A series' history from napipatch's store (series/): the record of the
version before the one checked (the bot's, from its archive: bot/archive_history.py).

The front-ends that read the store put it in ``series.inputs.history``
(``attach``); the engine offers it to the checks as ``ctx.history`` and hashes it into
every result's cache key (``engine.cache.result_key``), so a change to the
previous version's record (a reply imported, Message-IDs recorded by
``send``) never returns a stale result.

The previous version is the highest stored version below the one checked,
of the series with the same name in the store; else, for a carry (a
version re-made on another base and stored under its own name, with
``carried-from = "NAME@vN"`` in its series.toml table), the one below vN
of NAME; else of the stored series whose cover letter carries the same b4
``change-id:``. What it holds is plain data (it is hashed, and goes to the
check's process):

- ``version``, ``name``, ``found-by`` (``name``, ``carried-from`` or
  ``change-id``; in the bot, ``subject`` or ``change-id``);
- ``cover-message-id``, ``message-ids`` (its patches), ``thread-ids``
  (every mail of its thread known: cover, patches, replies), ``lore``;
- ``posted`` (ISO UTC) and ``posted-from`` (``sent`` in series.toml, else
  the Date: of its cover letter or first patch), or ``date-problem``: why
  its posting time is unknown, in words;
- ``patches``: for each, ``n``, ``subject``, ``patch-id`` and ``trailers``
  (``{"trailer", "by", "in"}``: each review trailer given on it, in the
  patch itself or in a reply, and who gave it);
- ``review-comments``: the review comments of its thread and the author's
  answers (``mails.comments.gather``: ``author``, ``comments``,
  ``skipped``), or ``{"unknown": why}`` when its replies are not known.

No previous version: ``{"previous": None, "why": ...}``; a bad record is
a reason in words, never an exception.
"""

from __future__ import annotations

import re

from napipatch.errors import NapipatchError
from napipatch.mails import comments, replies
from napipatch.mails.revisions import change_id, iso, parse_date, review_trailers
from napipatch.mails.series import Series, valid_name
from napipatch.store.store import LORE_LINK, REPLIES, Store
from napipatch.tree.gitutil import patch_id


def attach(series: Series, store: Store) -> Series:
    """``series`` with its history in ``inputs.history``, where the engine
    finds it (``ctx.history``): the front-ends that read the store (check,
    test, send, the send hook) call this before running the checks."""
    if series.inputs.history is None:
        series.inputs.history = history_of(series, store)
    if series.inputs.net_next is None and (ann := store.net_next()):
        # The newest "net-next is OPEN/CLOSED" imported (net-next-closed).
        series.inputs.net_next = ann
    return series


def history_of(series: Series, store: Store) -> dict:
    """``{"previous": RECORD or None, "why": reason when None}`` for ``series``."""
    if series.version <= 1:
        return {"previous": None, "why": f"v{series.version} is the first version"}
    try:
        found = _find(series, store)
    except NapipatchError as exc:
        return {"previous": None, "why": f"the store cannot be read: {exc}"}
    if found is None:
        return {"previous": None,
                "why": f"no earlier version of {series.name!r} in the store ({store.root})"}
    name, version, how = found
    try:
        return {"previous": _record(store, name, version, how), "why": ""}
    except NapipatchError as exc:
        return {"previous": None, "why": f"{name}@v{version} cannot be read: {exc}"}


def _find(series: Series, store: Store) -> tuple[str, int, str] | None:
    """(name, version, how) of the version before ``series`` in the store."""
    if valid_name(series.name) and (store.path(series.name) / "series.toml").is_file():
        earlier = [v for v in store.versions(series.name) if v < series.version]
        if earlier:
            return series.name, earlier[-1], "name"
    carried = _carried_from(series, store)
    if carried is not None:
        return carried
    cid = change_id(series.cover.body) if series.cover else None
    if not cid:
        return None
    for name in store.names():
        rec = store.record(name)
        for key, info in rec.get("versions", {}).items():
            v = int(key[1:])
            if v < series.version and _change_id(store, name, v, info) == cid:
                earlier = [x for x in store.versions(name) if x < series.version]
                return name, earlier[-1], "change-id"
    return None


def _carried_from(series: Series, store: Store) -> tuple[str, int, str] | None:
    """For a carry (``carried-from = "NAME@vN"``), the version of NAME below vN:
    the carry shares the history of the posting it carries."""
    m = re.fullmatch(r"([^@]+)@v(\d+)", str(series.inputs.record.get("carried-from") or ""))
    if m is None or not valid_name(m.group(1)) \
            or not (store.path(m.group(1)) / "series.toml").is_file():
        return None
    earlier = [v for v in store.versions(m.group(1)) if v < int(m.group(2))]
    return (m.group(1), earlier[-1], "carried-from") if earlier else None


def _change_id(store: Store, name: str, version: int, info: dict) -> str | None:
    if info.get("change-id"):
        return info["change-id"]
    cover = store.path(name) / f"v{version}" / "0000-cover-letter.patch"
    try:
        return change_id(cover.read_text(errors="replace"))
    except OSError:
        return None


def _record(store: Store, name: str, version: int, how: str) -> dict:
    s = store.load(f"{name}@v{version}")
    data = store.replies(name, version)
    if data is not None:
        s.inputs.reply_mails = replies.unpack(data, f"{name}@v{version}/{REPLIES}", [])
    return record_of(s, name, how)


def record_of(s: Series, name: str, how: str) -> dict:
    """The record of the earlier version ``s`` (its store record, or what the
    bot knows of it, in ``s.inputs.record``: ``cover-message-id``, ``message-ids``,
    ``thread-ids``, ``lore``, ``sent``, ``review``); the bot builds the same
    record from the archive it follows (``napipatch.bot.archive_history``)."""
    info, version = s.inputs.record, s.version
    out = {"name": name, "version": version, "found-by": how,
           "cover-message-id": info.get("cover-message-id") or "",
           "message-ids": list(info.get("message-ids") or
                               [p.msgid for p in s.patches if p.msgid]),
           "lore": info.get("lore") or ""}
    if not out["lore"] and (mid := out["cover-message-id"] or next(iter(out["message-ids"]), "")):
        out["lore"] = LORE_LINK.format(msgid=mid)
    ids = [out["cover-message-id"], *out["message-ids"], *info.get("thread-ids", [])]
    out["thread-ids"] = sorted({i for i in ids if i})
    out.update(_posted(s))
    out["patches"] = _patches(s, info)
    out["review-comments"] = _comments(s)
    return out


def _comments(s: Series) -> dict:
    """The review comments of the version's thread and the author's answers
    (``mails.comments``), or ``{"unknown": why}`` when its replies were not kept."""
    if not s.patches:
        return {"unknown": f"v{s.version} is stored without its patches (cover letter only)"}
    if s.inputs.reply_mails is None:
        return {"unknown": f"v{s.version}'s thread replies are not in the store (imported "
                           "without replies, or before napipatch kept them)"}
    return comments.gather(s, s.inputs.reply_mails, s.inputs.reply_link or LORE_LINK)


def _posted(s: Series) -> dict:
    """When the version went out: ``sent`` (napipatch sent it) or the Date:
    of its cover letter (or first patch)."""
    if s.inputs.record.get("sent"):
        when, why = parse_date(str(s.inputs.record["sent"]))
        if when is not None:
            return {"posted": iso(when), "posted-from": "sent in series.toml"}
        return {"posted": None, "date-problem": f"v{s.version}'s sent time in series.toml is "
                                                f"not a time ({str(s.inputs.record['sent'])[:60]!r})"}
    what = "cover letter" if s.cover else "first patch"
    if not s.head.msgid and not s.inputs.record.get("message-ids"):
        return {"posted": None,
                "date-problem": f"v{s.version} was never sent (no Message-ID in the store)"}
    when, why = parse_date(s.head.date)
    if when is None:
        return {"posted": None, "date-problem": f"v{s.version}'s {what} {why}"}
    return {"posted": iso(when), "posted-from": f"Date: of its {what}"}


def _patches(s: Series, info: dict) -> list[dict]:
    """Each patch's patch-id and the review trailers given on it: in the
    patch, in a reply to it, or in a reply to the cover letter."""
    given = info.get("review") or [
        {"patch": int(k), "trailer": t} for k, ts in (info.get("trailers") or {}).items()
        for t in ts]
    out = []
    for n, p in enumerate(s.patches, 1):
        got = [{"trailer": t, "by": t.partition(":")[2].strip(), "in": "the patch"}
               for t in review_trailers(p.trailers)]
        for g in given:
            if int(g.get("patch", -1)) in (0, n) and _is_review(g.get("trailer", "")):
                where = "a reply to the cover letter" if int(g["patch"]) == 0 else "a reply"
                if g.get("message-id"):
                    where += f" <{g['message-id']}>"
                got.append({"trailer": g["trailer"], "by": g.get("by", ""), "in": where})
        out.append({"n": n, "subject": p.subject.title, "patch-id": patch_id(p.diff),
                    "trailers": got})
    return out


def _is_review(trailer: str) -> bool:
    return bool(review_trailers([(trailer.partition(":")[0].strip(),
                                  trailer.partition(":")[2].strip(), 0)]))

