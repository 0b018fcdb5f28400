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
    settings   what a copy of the state needs of the bot's config (its memory's)
    reports    each checked series' report (``report.render.to_data``)
               and the names of its kept check outputs (``bot.artefacts``):
               what the web pages show
    results    every selftest/KUnit case result, per base, target and
               series: the memory of flaky and known failures (``bot.memory``)

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
from urllib.parse import quote

from napipatch.mails.addresses import one_line

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
CREATE TABLE IF NOT EXISTS reports(
    series_id INTEGER PRIMARY KEY, data TEXT NOT NULL, logs TEXT NOT NULL, created REAL NOT NULL);
CREATE TABLE IF NOT EXISTS results(
    id INTEGER PRIMARY KEY, test TEXT NOT NULL, base TEXT NOT NULL, target TEXT NOT NULL,
    series_id INTEGER, result TEXT NOT NULL, at REAL NOT NULL);
CREATE INDEX IF NOT EXISTS results_test ON results(test, base, target, id);
CREATE TABLE IF NOT EXISTS settings(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS series_newest ON series(first_seen);
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

    @classmethod
    def readonly(cls, path: Path) -> State:
        """The state opened for reading only (``bot serve``): no schema
        change, no write, whatever a caller asks."""
        self = cls.__new__(cls)
        self.db = sqlite3.connect(f"file:{quote(str(path))}?mode=ro", uri=True, timeout=30,
                                  check_same_thread=False)
        self.db.row_factory = sqlite3.Row
        return self

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

    # ------------------------------------------------------------ pages
    def save_report(self, sid: int, data: dict, logs: list[str]) -> None:
        self.db.execute("INSERT INTO reports(series_id, data, logs, created) VALUES(?,?,?,?) "
                        "ON CONFLICT(series_id) DO UPDATE SET data=excluded.data, "
                        "logs=excluded.logs, created=excluded.created",
                        (sid, json.dumps(data), json.dumps(logs), time.time()))

    def report_of(self, sid: int) -> tuple[dict, list[str]] | None:
        """A series' stored report data and its kept outputs' names (None: none)."""
        r = self.one("SELECT data, logs FROM reports WHERE series_id=?", sid)
        return (json.loads(r["data"]), json.loads(r["logs"])) if r else None

    def newest_series(self, limit: int, offset: int = 0) -> list[sqlite3.Row]:
        return self.q("SELECT * FROM series ORDER BY first_seen DESC, id DESC LIMIT ? OFFSET ?",
                      limit, offset)

    def replies_for_series(self, ids: list[int]) -> dict[int, list[sqlite3.Row]]:
        """The replies of each of ``ids`` (one query for a page of series)."""
        out: dict[int, list[sqlite3.Row]] = {}
        marks = ",".join("?" * len(ids))
        for r in self.q(f"SELECT id, series_id, kind, state FROM replies "
                        f"WHERE series_id IN ({marks}) ORDER BY id", *ids) if ids else []:
            out.setdefault(r["series_id"], []).append(r)
        return out

    def series_count(self) -> int:
        return self.one("SELECT count(*) AS n FROM series")["n"]

    def next_version(self, sid: int) -> sqlite3.Row | None:
        return self.one("SELECT * FROM series WHERE prev_id=? ORDER BY id LIMIT 1", sid)

    # ------------------------------------------------------------ memory
    def add_results(self, rows: list[tuple[str, str, str, int | None, str]]) -> None:
        """(test, base, target, series id, result) rows, one transaction. A
        series checked again (the bot died while checking it) replaces its
        own earlier results, so the memory counts each series once."""
        now = time.time()
        with self.tx() as db:
            db.executemany("DELETE FROM results WHERE test=? AND target=? AND series_id=?",
                           [(r[0], r[2], r[3]) for r in rows if r[3] is not None])
            db.executemany("INSERT INTO results(test, base, target, series_id, result, at) "
                           "VALUES(?,?,?,?,?,?)", [(*r, now) for r in rows])

    def recent_results(self, test: str, base: str, target: str, limit: int,
                       other_than: int | None = None) -> list[sqlite3.Row]:
        """The last ``limit`` results of ``test`` on ``base`` and ``target``,
        newest first, of series other than ``other_than``."""
        return self.q("SELECT * FROM results WHERE test=? AND base=? AND target=? "
                      "AND coalesce(series_id, -1) != coalesce(?, -2) "
                      "ORDER BY id DESC LIMIT ?", test, base, target, other_than, limit)

    def save_memory_settings(self, window: int, known: list[dict]) -> None:
        """bot.flaky_window and the [[known_failure]] entries the bot runs
        with, so a copy of the state judges as the bot does."""
        with self.tx() as db:
            db.execute("INSERT OR REPLACE INTO settings(key, value) VALUES('memory', ?)",
                       (json.dumps({"window": window, "known": known}),))

    def memory_settings(self) -> tuple[int, list[dict]]:
        r = self.one("SELECT value FROM settings WHERE key='memory'")
        got = json.loads(r["value"]) if r else {}
        return got.get("window", 10), got.get("known", [])

    def tested(self) -> list[sqlite3.Row]:
        """Every (test, base, target) the memory has results for."""
        return self.q("SELECT test, base, target, count(*) AS n FROM results "
                      "GROUP BY test, base, target ORDER BY test, base, target")

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


def status_lines(state: State) -> list[str]:
    """``napipatch bot status``: what the bot has seen, one line per thing
    (archive positions, message counts, every series with its state, the
    errors/warnings its check found, its note and its replies)."""
    out = []
    for p in state.positions():
        out.append(f"inbox {p['inbox']} epoch {p['epoch']}: at {p['oid'][:12] or 'its start'}")
    seen, patches, bad = state.message_counts()
    out.append(f"messages: {seen} seen, {patches} patch mails, {bad} unreadable")
    for s in state.all_series():
        prev = f" (follows #{s['prev_id']})" if s["prev_id"] else ""
        have = state.patches_present(s["id"])
        counts = (f" {s['errors']}E/{s['warnings']}W" if s["errors"] is not None else "")
        out.append(f"series #{s['id']} {s['state']:10} v{s['version']} {have}/{s['total']} "
                   f"{one_line(s['title'], 70)!r} by {s['author_email']}{prev}{counts}"
                   + (f" -- {s['note']}" if s["note"] else ""))
        for r in state.replies_of(s["id"]):
            out.append(f"  reply {r['kind']} <{r['msgid']}> {r['state']}"
                       + (f" (attempts {r['attempts']})" if r["attempts"] else "")
                       + (f" -- {r['last_error']}" if r["last_error"] else ""))
    return out
