"""Step 1 of a pass: new archive messages into the state database.

Each inbox's epochs are fetched into their mirrors (a failed fetch reads
the local mirror only, and says so), and the commits after the last one
read become message records, stored with the archive position in
transactions of ``CHUNK`` messages: a kill -9 resumes at the last commit
committed. A mail that cannot be read is a ``bad`` record, never a
stopped pass.
"""

from __future__ import annotations

import logging
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

from napipatch.bot.archive import Follower
from napipatch.bot.assemble import record
from napipatch.bot.config import Inbox
from napipatch.bot.state import State
from napipatch.errors import NapipatchError

log = logging.getLogger("napipatch.bot")

CHUNK = 500


@dataclass
class Ingested:
    new: int = 0
    bad: int = 0
    problems: list[str] = field(default_factory=list)


def ingest(state: State, inbox: Inbox, mirror_dir: Path) -> Ingested:
    """Fetch ``inbox`` and record its messages not read before."""
    got = Ingested()
    f = Follower(inbox, mirror_dir)
    try:
        f.fetch()
    except NapipatchError as exc:
        msg = f"{inbox.name}: fetch failed: {exc} (reading the local mirror only)"
        log.error("%s", msg)
        got.problems.append(msg)
    else:
        if not state.inbox_started(inbox.name):
            _start(state, inbox, f)
    for epoch in f.local_epochs():
        try:
            commits = f.new_commits(epoch, state.position(inbox.name, epoch))
        except NapipatchError as exc:
            log.error("%s epoch %d: %s", inbox.name, epoch, exc)
            continue
        with state.batches(CHUNK) as step:
            for oid, raw in f.messages(epoch, commits):
                if raw is not None:
                    _store(state, inbox.name, epoch, oid, raw, got)
                state.set_position(inbox.name, epoch, oid)
                step()
    return got


def _start(state: State, inbox: Inbox, f: Follower) -> None:
    """The first pass over an inbox: with start = "now", from its heads."""
    with state.tx():
        if inbox.start == "now":
            # A bot started on an existing archive does not check (and
            # reply to) years of history: it starts from the heads.
            for epoch in f.local_epochs():
                state.set_position(inbox.name, epoch, f.head(epoch) or "")
            log.info("%s: following from now on (inbox start = \"now\")", inbox.name)
        state.mark_inbox_started(inbox.name)


def _bad(name: str, epoch: int, oid: str, error: str) -> dict:
    return {"msgid": f"commit:{oid}@{name}", "inbox": name, "epoch": epoch, "oid": oid,
            "kind": "bad", "error": error}


def _store(state: State, name: str, epoch: int, oid: str, raw: bytes, got: Ingested) -> None:
    try:
        rec = record(raw, name, epoch, oid)
    except Exception as exc:  # never let one mail stop the pass
        rec = _bad(name, epoch, oid, f"{name} {oid[:12]}: {type(exc).__name__}: {exc}")
    if rec["kind"] == "bad":
        got.bad += 1
        log.warning("unreadable mail, skipped: %s", rec["error"])
    try:
        added = state.add_message(rec)
    except (ValueError, sqlite3.InterfaceError, UnicodeError) as exc:
        got.bad += 1
        log.warning("unreadable mail, skipped: %s %s: %s", name, oid[:12], exc)
        added = state.add_message(_bad(name, epoch, oid, str(exc)))
    got.new += added
