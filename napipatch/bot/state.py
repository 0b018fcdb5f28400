"""The bot's memory: one SQLite database (WAL) under the state dir.

Tables:
    position   last archive commit read, per inbox and epoch ('' = none yet)
    inboxes    when the bot first followed each inbox
    messages   every message seen (patch mails keep their raw bytes)
    series     one row per series version: waiting, queued, checking,
               reported, incomplete, superseded, failed
    replies    every reply the bot decided to send, with its fixed
               Message-ID and bytes: queued -> sending -> sent
               (or ratelimited / failed)

Every state change is one transaction, so a kill -9 leaves either the
old or the new state, never half of it. The archive position moves in the
same transaction as the messages read up to it.

All of the bot's SQL is here: the other modules ask in words
(``series_in("queued")``, ``save_groups(...)``), so the schema has one
reader and one writer.
"""

from __future__ import annotations

import contextlib
import json
import logging
import sqlite3
import time
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from napipatch.bot.assemble import Group

log = logging.getLogger("napipatch.bot")

SCHEMA = """
CREATE TABLE IF NOT EXISTS position(
    inbox TEXT NOT NULL, epoch INTEGER NOT NULL, oid TEXT NOT NULL,
    PRIMARY KEY(inbox, epoch));
CREATE TABLE IF NOT EXISTS inboxes(name TEXT PRIMARY KEY, started REAL NOT NULL);
CREATE TABLE IF NOT EXISTS messages(
    msgid TEXT PRIMARY KEY, inbox TEXT, epoch INTEGER, oid TEXT,
    kind TEXT NOT NULL,            -- patch | other | bad
    subject TEXT, author_name TEXT, author_email TEXT, date TEXT,
    in_reply_to TEXT, refs TEXT,
    version INTEGER, idx INTEGER, total INTEGER, tree TEXT, title TEXT,
    raw BLOB, error TEXT, seen_at REAL NOT NULL, series_id INTEGER);
CREATE INDEX IF NOT EXISTS messages_open ON messages(kind, series_id);
CREATE TABLE IF NOT EXISTS series(
    id INTEGER PRIMARY KEY, key TEXT UNIQUE NOT NULL,
    title TEXT, author_name TEXT, author_email TEXT, version INTEGER, total INTEGER,
    tree TEXT, head_msgid TEXT, inbox TEXT,
    state TEXT NOT NULL, first_seen REAL NOT NULL, updated REAL NOT NULL,
    prev_id INTEGER, note TEXT DEFAULT '', errors INTEGER, warnings INTEGER, base TEXT);
CREATE INDEX IF NOT EXISTS series_state ON series(state);
CREATE TABLE IF NOT EXISTS replies(
    id INTEGER PRIMARY KEY, series_id INTEGER NOT NULL, kind TEXT NOT NULL,
    msgid TEXT UNIQUE NOT NULL, author_email TEXT, sender TEXT, rcpts TEXT, mail BLOB,
    state TEXT NOT NULL, created REAL NOT NULL, sent_at REAL, attempts INTEGER DEFAULT 0,
    last_error TEXT DEFAULT '', dry_run INTEGER DEFAULT 0,
    UNIQUE(series_id, kind));
"""

OPEN_STATES = ("waiting", "incomplete")


class State:
    def __init__(self, path: Path):
        path.parent.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(str(path), timeout=30, isolation_level=None)
        self.db.row_factory = sqlite3.Row
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=FULL")
        self.db.executescript(SCHEMA)

    def close(self) -> None:
        self.db.close()

    # ------------------------------------------------------------ helpers
    def tx(self):
        return _Tx(self.db)

    def q(self, sql: str, *args) -> list[sqlite3.Row]:
        return self.db.execute(sql, args).fetchall()

    def one(self, sql: str, *args):
        return self.db.execute(sql, args).fetchone()

    # ------------------------------------------------------------ archive
    def position(self, inbox: str, epoch: int) -> str | None:
        r = self.one("SELECT oid FROM position WHERE inbox=? AND epoch=?", inbox, epoch)
        return r["oid"] if r else None

    def set_position(self, inbox: str, epoch: int, oid: str) -> None:
        self.db.execute("INSERT INTO position(inbox, epoch, oid) VALUES(?,?,?) "
                        "ON CONFLICT(inbox, epoch) DO UPDATE SET oid=excluded.oid",
                        (inbox, epoch, oid))

    def inbox_started(self, name: str) -> bool:
        return self.one("SELECT 1 FROM inboxes WHERE name=?", name) is not None

    def mark_inbox_started(self, name: str) -> None:
        self.db.execute("INSERT OR IGNORE INTO inboxes(name, started) VALUES(?, ?)",
                        (name, time.time()))

    def add_message(self, rec: dict) -> bool:
        """Insert a message record; False when its Message-ID was seen before."""
        cols = ("msgid", "inbox", "epoch", "oid", "kind", "subject", "author_name",
                "author_email", "date", "in_reply_to", "refs", "version", "idx", "total",
                "tree", "title", "raw", "error")
        vals = [rec.get(c) for c in cols]
        vals[cols.index("refs")] = json.dumps(rec.get("refs") or [])
        cur = self.db.execute(
            f"INSERT OR IGNORE INTO messages({', '.join(cols)}, seen_at) "
            f"VALUES({', '.join('?' * len(cols))}, ?)", (*vals, time.time()))
        return cur.rowcount == 1

    def has_message(self, msgid: str) -> bool:
        return self.one("SELECT 1 FROM messages WHERE msgid=?", msgid) is not None

    @contextlib.contextmanager
    def batches(self, size: int):
        """``with state.batches(500) as step:`` one write transaction,
        committed after every ``size`` calls of ``step()`` and at the end
        (rolled back on error): ingest keeps its position and messages
        together without one transaction per mail."""
        n = 0

        def step() -> None:
            nonlocal n
            n += 1
            if n % size == 0:
                self.db.execute("COMMIT")
                self.db.execute("BEGIN IMMEDIATE")

        self.db.execute("BEGIN IMMEDIATE")
        try:
            yield step
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")

    def known(self, msgid: str) -> dict | None:
        """A stored message's series, version and the series' state (None: unseen)."""
        r = self.one("SELECT m.msgid, m.series_id, m.version, s.state FROM messages m "
                     "LEFT JOIN series s ON s.id = m.series_id WHERE m.msgid=?", msgid)
        return dict(r) if r else None

    def open_patch_messages(self) -> list[sqlite3.Row]:
        return self.q(
            "SELECT m.* FROM messages m LEFT JOIN series s ON s.id = m.series_id "
            "WHERE m.kind='patch' AND (m.series_id IS NULL OR s.state IN (?, ?)) "
            "ORDER BY m.seen_at, m.rowid", *OPEN_STATES)

    # ------------------------------------------------------------ series
    def series(self, sid: int) -> sqlite3.Row:
        return self.one("SELECT * FROM series WHERE id=?", sid)

    def series_in(self, *states: str) -> list[sqlite3.Row]:
        marks = ",".join("?" * len(states))
        return self.q(f"SELECT * FROM series WHERE state IN ({marks}) ORDER BY id", *states)

    def all_series(self) -> list[sqlite3.Row]:
        return self.q("SELECT * FROM series ORDER BY id")

    def series_members(self, sid: int) -> list[sqlite3.Row]:
        return self.q("SELECT * FROM messages WHERE series_id=? ORDER BY idx", sid)

    def set_series_state(self, sid: int, state: str, **extra) -> None:
        sets = ", ".join(f"{k}=?" for k in extra)
        self.db.execute(f"UPDATE series SET state=?, updated=?{', ' + sets if sets else ''} "
                        "WHERE id=?", (state, time.time(), *extra.values(), sid))

    def save_groups(self, groups: list[Group], late: dict[str, int],
                    now: float) -> dict[int, Group]:
        """Store the open groups as series rows in one transaction: {series
        id: group} for those still open. ``late`` mails are attached to the
        closed series they belong to; a group whose series was already
        handled only gets its mails attached (never re-checked)."""
        out: dict[int, Group] = {}
        with self.tx() as db:
            for msgid, sid in late.items():
                log.info("<%s> arrived after its series #%d was handled; not re-checked", msgid, sid)
                db.execute("UPDATE messages SET series_id=? WHERE msgid=?", (sid, msgid))
            for g in groups:
                sid = self._save_group(db, g, now)
                if sid is not None:
                    out[sid] = g
            # Groups merged into another (their cover arrived): drop the empty rows.
            db.execute("DELETE FROM series WHERE state='waiting' AND NOT EXISTS "
                       "(SELECT 1 FROM messages m WHERE m.series_id = series.id)")
        return out

    def _save_group(self, db, g: Group, now: float) -> int | None:
        members = list(g.members.values())
        head = g.head
        existing = self.one("SELECT * FROM series WHERE key=?", g.key)
        old = sorted({m["series_id"] for m in members if m["series_id"]})
        if existing is not None and existing["state"] not in OPEN_STATES:
            for m in members:
                log.info("<%s> arrived after its series #%d was handled; not re-checked",
                         m["msgid"], existing["id"])
            db.executemany("UPDATE messages SET series_id=? WHERE msgid=?",
                           [(existing["id"], m["msgid"]) for m in members])
            return None
        if existing is not None:
            sid = existing["id"]
        elif old:
            sid = old[0]
            db.execute("UPDATE series SET key=? WHERE id=?", (g.key, sid))
        else:
            sid = self._new_series(db, g, now)
        first = min(m["seen_at"] for m in members)
        db.execute("UPDATE series SET title=?, author_name=?, author_email=?, version=?, "
                   "total=?, tree=?, head_msgid=?, inbox=?, first_seen=min(first_seen, ?) "
                   "WHERE id=?",
                   (head["title"], head["author_name"], head["author_email"], g.version,
                    g.total, g.tree, head["msgid"], head["inbox"], first, sid))
        db.executemany("UPDATE messages SET series_id=? WHERE msgid=?",
                       [(sid, m["msgid"]) for m in members])
        for d in g.duplicates:
            log.warning("<%s>: a second, different patch in the same slot of series #%d; "
                        "ignored", d, sid)
            db.execute("UPDATE messages SET series_id=? WHERE msgid=?", (sid, d))
        return sid

    def _new_series(self, db, g: Group, now: float) -> int:
        """A new series row, linked to the author's previous version of it
        (whose still-open versions are superseded)."""
        head = g.head
        prev = db.execute(
            "SELECT id, version, state FROM series WHERE lower(author_email)=? AND title=? "
            "AND version < ? ORDER BY version DESC, id DESC LIMIT 1",
            (g.author_email, head["title"], g.version)).fetchone()
        cur = db.execute(
            "INSERT INTO series(key, title, author_name, author_email, version, total, tree, "
            "head_msgid, inbox, state, first_seen, updated, prev_id) "
            "VALUES(?,?,?,?,?,?,?,?,?, 'waiting', ?, ?, ?)",
            (g.key, head["title"], head["author_name"], head["author_email"], g.version, g.total,
             g.tree, head["msgid"], head["inbox"], now, now, prev["id"] if prev else None))
        sid = cur.lastrowid
        if prev:
            log.info("series #%d is v%d of series #%d (v%d): %s", sid, g.version, prev["id"],
                     prev["version"], head["title"])
            # Older versions still waiting for patches will never be checked.
            db.execute("UPDATE series SET state='superseded', note=? WHERE lower(author_email)=? "
                       "AND title=? AND version < ? AND state IN ('waiting', 'incomplete')",
                       (f"superseded by v{g.version} (#{sid})", g.author_email, head["title"],
                        g.version))
        return sid

    # ------------------------------------------------------------ history
    def earlier_series(self, author_email: str, version: int) -> list[sqlite3.Row]:
        """The author's series of a lower version, the newest version first."""
        return self.q("SELECT * FROM series WHERE lower(author_email)=lower(?) AND version < ? "
                      "ORDER BY version DESC, id DESC", author_email or "", version)

    def thread_replies(self, msgids: list[str]) -> list[sqlite3.Row]:
        """The messages that reply into the thread of ``msgids`` (by
        In-Reply-To or References), replies to replies too."""
        if not msgids:
            return []
        marks = ",".join("?" * len(msgids))
        return self.q(f"SELECT * FROM messages WHERE kind != 'patch' AND (in_reply_to IN "
                      f"({marks}) OR EXISTS (SELECT 1 FROM json_each(messages.refs) j "
                      f"WHERE j.value IN ({marks}))) ORDER BY seen_at, rowid",
                      *msgids, *msgids)

    def net_next_mails(self) -> list[sqlite3.Row]:
        """Mails that are no reply and name net-next in their subject (the
        announcements are among them; ``napipatch.mails.netnext`` tells)."""
        return self.q("SELECT msgid, inbox, subject, date, author_name, author_email "
                      "FROM messages WHERE kind='other' AND subject LIKE '%net-next%' "
                      "AND coalesce(in_reply_to, '') = '' ORDER BY seen_at, rowid")

    # ------------------------------------------------------------ replies
    def reply_for(self, sid: int, kind: str):
        return self.one("SELECT * FROM replies WHERE series_id=? AND kind=?", sid, kind)

    def add_reply(self, sid: int, kind: str, msgid: str, author_email: str, sender: str,
                  rcpts: list[str], mail: bytes, state: str, dry_run: bool,
                  note: str = "") -> None:
        self.db.execute(
            "INSERT INTO replies(series_id, kind, msgid, author_email, sender, rcpts, mail, "
            "state, created, dry_run, last_error) VALUES(?,?,?,?,?,?,?,?,?,?,?)",
            (sid, kind, msgid, author_email, sender, json.dumps(rcpts), mail, state,
             time.time(), int(dry_run), note))

    def replies_in(self, *states: str) -> list[sqlite3.Row]:
        marks = ",".join("?" * len(states))
        return self.q(f"SELECT * FROM replies WHERE state IN ({marks}) ORDER BY id", *states)

    def set_reply_state(self, rid: int, state: str, **extra) -> None:
        sets = ", ".join(f"{k}=?" for k in extra)
        self.db.execute(f"UPDATE replies SET state=?{', ' + sets if sets else ''} WHERE id=?",
                        (state, *extra.values(), rid))

    def replies_to_author_since(self, author_email: str, since: float) -> int:
        r = self.one("SELECT count(*) AS n FROM replies WHERE lower(author_email)=lower(?) "
                     "AND created >= ? AND state IN ('queued', 'sending', 'sent')",
                     author_email, since)
        return r["n"]


    def replies_of(self, sid: int) -> list[sqlite3.Row]:
        return self.q("SELECT * FROM replies WHERE series_id=? ORDER BY id", sid)

    # ------------------------------------------------------------ status
    def positions(self) -> list[sqlite3.Row]:
        return self.q("SELECT * FROM position ORDER BY inbox, epoch")

    def message_counts(self) -> tuple[int, int, int]:
        """(messages seen, patch mails, unreadable)."""
        n = self.one("SELECT count(*) AS n, sum(kind='patch') AS p, sum(kind='bad') AS b "
                     "FROM messages")
        return n["n"], n["p"] or 0, n["b"] or 0

    def patches_present(self, sid: int) -> int:
        """The series' numbered patches that arrived (the cover not counted)."""
        return self.one("SELECT count(*) AS n FROM messages WHERE series_id=? AND kind='patch' "
                        "AND idx > 0", sid)["n"]


class _Tx:
    """``with state.tx():`` BEGIN IMMEDIATE … COMMIT (ROLLBACK on error)."""

    def __init__(self, db: sqlite3.Connection):
        self.db = db

    def __enter__(self):
        self.db.execute("BEGIN IMMEDIATE")
        return self.db

    def __exit__(self, et, ev, tb):
        self.db.execute("COMMIT" if et is None else "ROLLBACK")
        return False
