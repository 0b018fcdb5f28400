"""One pass of the bot, and the polling loop around it.

A pass, in order (each step commits its own state, so a kill -9 anywhere
resumes from the last committed step):

1. fetch every inbox's epochs and record the new messages;
2. settle replies left in 'sending' by a crash: sent if their Message-ID
   is in the sent-log or came back through the archive, else queued again;
3. group open patch mails into series (new versions linked to old ones);
4. complete series -> queued; past ``incomplete_after`` -> an
   'incomplete' reply;
5. check queued series (state 'checking' while the engine runs) and queue
   a reply under the reply policy and the per-author rate limit;
6. send queued replies (SMTP or the dry-run directory); a server that is
   down leaves them queued for the next pass.

``NAPIPATCH_BOT_CRASH_AT=POINT`` kills the process with SIGKILL at a named
point (after-ingest, after-assemble, checking, after-queue, before-send,
after-send, after-log): fault injection for tests of the restart logic.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import signal
import sqlite3
import threading
import time
from dataclasses import dataclass, field

from napipatch import __version__ as napipatch_version
from napipatch import config as configmod
from napipatch.bot import mailer
from napipatch.bot.archive import Follower
from napipatch.bot.assemble import Group, group, record, row_dict, to_series
from napipatch.bot.config import BotConfig, Inbox
from napipatch.bot.state import State
from napipatch.engine.run import apply_series, run_checks
from napipatch.errors import NapipatchError
from napipatch.jobs import run as jobsmod
from napipatch.jobs import targets as targetdata
from napipatch.report.render import to_data
from napipatch.report.templating import render
from napipatch.tree import gitutil

log = logging.getLogger("napipatch.bot")

CRASH_ENV = "NAPIPATCH_BOT_CRASH_AT"
CRASH_POINTS = ("after-ingest", "after-assemble", "checking", "after-queue", "before-send",
                "after-send", "after-log")
_CHUNK = 500


def crash_point(name: str) -> None:
    if os.environ.get(CRASH_ENV) == name:
        log.warning("fault injection: SIGKILL at %s", name)
        logging.shutdown()
        os.kill(os.getpid(), signal.SIGKILL)


def reproduce(series, report, source: str) -> list[str]:
    """The commands that give the same findings locally, like the kernel
    test robot's "reproduce" block: import the thread, check on the base."""
    name = series.name
    cmds = [f"napipatch series import {source} --name {name}"]
    check = f"napipatch check {name}@v{series.version}"
    if report.base:
        check += f" --tree ~/linux --base {report.base}"
    return cmds + [check]


@dataclass
class PassResult:
    ingested: int = 0
    bad: int = 0
    checked: int = 0
    queued: int = 0
    sent: int = 0
    pending: int = 0
    problems: list[str] = field(default_factory=list)

    def summary(self) -> str:
        return (f"pass: {self.ingested} new messages ({self.bad} unreadable), "
                f"{self.checked} series checked, {self.queued} replies queued, "
                f"{self.sent} sent, {self.pending} waiting to be sent")


class Bot:
    def __init__(self, cfg: BotConfig):
        self.cfg = cfg
        cfg.state_dir.mkdir(parents=True, exist_ok=True)
        self.state = State(cfg.db_path)
        self.stop = threading.Event()
        self._lock_fd: int | None = None

    def close(self) -> None:
        self.state.close()

    # ------------------------------------------------------------ lock
    def _lock(self) -> None:
        fd = os.open(self.cfg.state_dir / "bot.lock", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise NapipatchError(self.cfg.state_dir, "another bot pass is running on this state dir") from None
        self._lock_fd = fd

    def _unlock(self) -> None:
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None

    # ------------------------------------------------------------ pass
    def run_once(self) -> PassResult:
        self._lock()
        try:
            res = PassResult()
            for inbox in self.cfg.inboxes:
                self._ingest(inbox, res)
            crash_point("after-ingest")
            self._settle_sending()
            groups = self._assemble()
            crash_point("after-assemble")
            self._advance(groups, res)
            self._check_queued(res)
            self._send_queued(res)
            res.pending = len(self.state.replies_in("queued"))
            return res
        finally:
            self._unlock()

    def run_forever(self) -> None:
        log.info("following %s every %gs", ", ".join(i.name for i in self.cfg.inboxes),
                 self.cfg.interval)
        while not self.stop.is_set():
            try:
                log.info("%s", self.run_once().summary())
            except NapipatchError as exc:
                log.error("%s", exc)
            except Exception:  # a bug must not stop the daemon; the next pass retries
                log.exception("pass failed")
            self.stop.wait(self.cfg.interval)
        log.info("stopped")

    # ------------------------------------------------------------ 1. ingest
    def _ingest(self, inbox: Inbox, res: PassResult) -> None:
        f = Follower(inbox, self.cfg.mirror_dir)
        fetched = True
        try:
            f.fetch()
        except NapipatchError as exc:
            msg = f"{inbox.name}: fetch failed: {exc} (reading the local mirror only)"
            log.error("%s", msg)
            res.problems.append(msg)
            fetched = False
        if fetched and not self.state.inbox_started(inbox.name):
            with self.state.tx():
                if inbox.start == "now":
                    # A bot started on an existing archive does not check (and
                    # reply to) years of history: it starts from the heads.
                    for epoch in f.local_epochs():
                        self.state.set_position(inbox.name, epoch, f.head(epoch) or "")
                    log.info("%s: following from now on (inbox start = \"now\")", inbox.name)
                self.state.mark_inbox_started(inbox.name)
        for epoch in f.local_epochs():
            try:
                commits = f.new_commits(epoch, self.state.position(inbox.name, epoch))
            except NapipatchError as exc:
                log.error("%s epoch %d: %s", inbox.name, epoch, exc)
                continue
            db = self.state.db
            n = 0
            db.execute("BEGIN IMMEDIATE")
            try:
                for oid, raw in f.messages(epoch, commits):
                    if raw is not None:
                        try:
                            rec = record(raw, inbox.name, epoch, oid)
                        except Exception as exc:  # never let one mail stop the pass
                            rec = {"msgid": f"commit:{oid}@{inbox.name}", "inbox": inbox.name,
                                   "epoch": epoch, "oid": oid, "kind": "bad",
                                   "error": f"{inbox.name} {oid[:12]}: {type(exc).__name__}: {exc}"}
                        if rec["kind"] == "bad":
                            res.bad += 1
                            log.warning("unreadable mail, skipped: %s", rec["error"])
                        try:
                            added = self.state.add_message(rec)
                        except (ValueError, sqlite3.InterfaceError, UnicodeError) as exc:
                            res.bad += 1
                            log.warning("unreadable mail, skipped: %s %s: %s", inbox.name, oid[:12], exc)
                            added = self.state.add_message({
                                "msgid": f"commit:{oid}@{inbox.name}", "inbox": inbox.name,
                                "epoch": epoch, "oid": oid, "kind": "bad", "error": str(exc)})
                        res.ingested += added
                    self.state.set_position(inbox.name, epoch, oid)
                    n += 1
                    if n % _CHUNK == 0:
                        db.execute("COMMIT")
                        db.execute("BEGIN IMMEDIATE")
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise

    # ------------------------------------------------------------ 2. settle
    def _settle_sending(self) -> None:
        sent = mailer.sent_ids(self.cfg.sent_log)
        for r in self.state.replies_in("sending"):
            if r["msgid"] in sent or self.state.has_message(r["msgid"]):
                where = "sent-log" if r["msgid"] in sent else "archive"
                log.info("reply <%s> was sent before a restart (found in the %s)", r["msgid"], where)
                self.state.set_reply_state(r["id"], "sent", sent_at=time.time(),
                                           last_error=f"confirmed by the {where} after a restart")
            else:
                log.warning("reply <%s> was interrupted while sending and is not in the "
                            "sent-log or archive: sending again", r["msgid"])
                self.state.set_reply_state(r["id"], "queued",
                                           last_error="interrupted while sending")

    # ------------------------------------------------------------ 3. assemble
    def _known(self, msgid: str):
        r = self.state.one("SELECT m.msgid, m.series_id, m.version, s.state FROM messages m "
                           "LEFT JOIN series s ON s.id = m.series_id WHERE m.msgid=?", msgid)
        return dict(r) if r else None

    def _assemble(self) -> dict[int, Group]:
        rows = [row_dict(r) for r in self.state.open_patch_messages()]
        groups, late = group(rows, self._known)
        out: dict[int, Group] = {}
        now = time.time()
        st = self.state
        with st.tx() as db:
            for msgid, sid in late.items():
                log.info("<%s> arrived after its series #%d was handled; not re-checked", msgid, sid)
                db.execute("UPDATE messages SET series_id=? WHERE msgid=?", (sid, msgid))
            for g in groups:
                members = list(g.members.values())
                head = g.head
                existing = st.one("SELECT * FROM series WHERE key=?", g.key)
                old = sorted({m["series_id"] for m in members if m["series_id"]})
                if existing is not None and existing["state"] not in ("waiting", "incomplete"):
                    for m in members:
                        log.info("<%s> arrived after its series #%d was handled; not re-checked",
                                 m["msgid"], existing["id"])
                    db.executemany("UPDATE messages SET series_id=? WHERE msgid=?",
                                   [(existing["id"], m["msgid"]) for m in members])
                    continue
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
                out[sid] = g
            # Groups merged into another (their cover arrived): drop the empty rows.
            db.execute("DELETE FROM series WHERE state='waiting' AND NOT EXISTS "
                       "(SELECT 1 FROM messages m WHERE m.series_id = series.id)")
        return out

    def _new_series(self, db, g: Group, now: float) -> int:
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

    # ------------------------------------------------------------ 4. advance
    def _advance(self, groups: dict[int, Group], res: PassResult) -> None:
        now = time.time()
        for sid, g in groups.items():
            s = self.state.series(sid)
            if s is None or s["state"] not in ("waiting", "incomplete"):
                continue
            overdue = now - s["first_seen"] >= self.cfg.incomplete_after
            if g.complete:
                self.state.set_series_state(sid, "queued")
            elif overdue and not g.missing:
                self.state.set_series_state(sid, "queued", note="the cover letter never arrived")
            elif overdue and s["state"] == "waiting":
                self._queue_incomplete(s, g, res)

    def _queue_incomplete(self, s, g: Group, res: PassResult) -> None:
        head = g.head
        missing = [f"patch {i}/{g.total}" for i in g.missing]
        if g.needs_cover:
            missing.insert(0, f"the cover letter (0/{g.total})")
        mins = self.cfg.incomplete_after / 60
        body = render("bot-reply.j2", kind="incomplete", hi=_hi(head["author_name"], head["author_email"]),
                      inbox=head["inbox"], missing=missing,
                      waited=f"{mins:g} minute{'s' if mins != 1 else ''}",
                      subject=mailer.sanitize(head["subject"]),
                      present=[mailer.sanitize(m["subject"]) for _i, m in sorted(g.members.items())],
                      bot_version=napipatch_version)
        self._queue_reply(s, head, "incomplete", body, res,
                          series_state="incomplete", note=f"missing {', '.join(missing)}")

    # ------------------------------------------------------------ 5. check
    def _check_queued(self, res: PassResult) -> None:
        for s in self.state.q("SELECT * FROM series WHERE state IN ('queued', 'checking') ORDER BY id"):
            if self.stop.is_set():
                return
            sid = s["id"]
            members = [dict(m) for m in self.state.series_members(sid)
                       if m["kind"] == "patch"]
            self.state.set_series_state(sid, "checking")
            crash_point("checking")
            try:
                series = to_series(_slots(members), name_hint=f"bot-{sid}")
            except NapipatchError as exc:
                log.error("series #%d: %s", sid, exc)
                self.state.set_series_state(sid, "failed", note=str(exc))
                continue
            try:
                tree, base, label, why = self._tree_for(series)
                engine_cfg = configmod.load(tree)
                # Applied once: the checks and the jobs read the same commits.
                applied = apply_series(series, engine_cfg, tree, base) if tree else None
                report = run_checks(series, engine_cfg, applied=applied,
                                    only=self.cfg.only, skip=self.cfg.skip)
                if self.cfg.jobs and applied is not None:
                    self._run_jobs(series, engine_cfg, applied, report)
            except NapipatchError as exc:
                log.error("series #%d: checks could not run, will retry: %s", sid, exc)
                self.state.set_series_state(sid, "queued", note=f"checks could not run: {exc}")
                continue
            except Exception as exc:  # a bug: do not retry this series forever
                log.exception("series #%d: checks crashed", sid)
                self.state.set_series_state(sid, "failed",
                                            note=f"checks crashed: {type(exc).__name__}: {exc}")
                continue
            res.checked += 1
            log.info("series #%d v%d %s: %d errors, %d warnings", sid, series.version,
                     series.title, report.errors, report.warnings)
            head = next(m for m in members if m["msgid"] == s["head_msgid"])
            wants = self.cfg.policy == "always" or report.errors or report.warnings
            extra = dict(errors=report.errors, warnings=report.warnings, base=report.base or "")
            if not wants:
                self.state.set_series_state(sid, "reported", note="clean: no reply (policy)", **extra)
                continue
            body = self._report_body(s, series, report, label, why)
            self._queue_reply(s, head, "report", body, res, series_state="reported", **extra)
            crash_point("after-queue")

    def _run_jobs(self, series, engine_cfg, applied, report) -> None:
        """Build every patch for the targets and boot the bootable ones,
        through the executor napipatch.executor names (local or celery)."""
        names = self.cfg.targets or targetdata.names()
        bootable = [n for n in names if targetdata.load(n).boot is not None]
        ex = jobsmod.executor_for(engine_cfg, lambda msg: log.info("%s", msg), applied,
                                  series)
        jobsmod.run_builds(engine_cfg, applied, names, 2, report, ex)
        jobsmod.run_warnings(engine_cfg, applied, self.cfg.warnings, 2, report, ex)
        jobsmod.run_boots(engine_cfg, applied, bootable, 2, None, report, ex)
        report.findings.sort(key=lambda f: f.sort_key)

    def _tree_for(self, series):
        cfg = self.cfg
        if cfg.tree_path is None:
            return None, None, f"{series.tree or 'no tree'} (diff-only checks)", ""
        repo = cfg.tree_path
        bc = series.base_commit
        if bc and gitutil.git(repo, "cat-file", "-e", f"{bc}^{{commit}}", check=False).returncode == 0:
            return repo, None, f"{series.tree or 'tree'}/base-commit {bc[:12]}", "base-commit"
        tag = series.tree
        branch = cfg.branches.get(tag) if tag else None
        if branch is None and not tag:
            tag = "net-next" if "net-next" in cfg.branches else None
            branch = cfg.branches.get(tag) if tag else None
        if branch is None:
            return repo, None, f"{tag or 'no tree tag'}/HEAD of {repo.name}", ""
        ref = branch
        if cfg.remote:
            ref = f"refs/remotes/{cfg.remote}/{branch}"
            cp = gitutil.git(repo, "fetch", "-q", "--no-tags", "--no-write-fetch-head", cfg.remote,
                             f"+refs/heads/{branch}:{ref}", check=False, timeout=600)
            if cp.returncode != 0:
                log.error("git fetch %s %s failed (using what the tree has): %s", cfg.remote,
                          branch, cp.stderr.strip().splitlines()[-1:] or cp.returncode)
        cp = gitutil.git(repo, "rev-parse", "--verify", "-q", f"{ref}^{{commit}}", check=False)
        if cp.returncode != 0:
            raise NapipatchError(repo, f"branch {ref!r} for tree tag {tag!r} not found")
        why = f"no usable base-commit; {tag} branch {branch}" + (f" of {cfg.remote}" if cfg.remote else "")
        return repo, cp.stdout.strip(), f"{tag}/{branch}", why

    def _report_body(self, s, series, report, label: str, why: str) -> str:
        data = to_data(report)
        total = len(series.patches)
        patches = []
        for n, mail in [(0, series.cover)] + list(enumerate(series.patches, 1)):
            fs = [f for f in data["findings"] if f["patch"] == n]
            if n == 0 and mail is None and not fs:
                continue
            where = lambda f: (f"{f['file']}:{f['line']}: " if f["file"] and f["line"]
                               else f"{f['file']}: " if f["file"] else "")
            patches.append({
                "label": "SERIES" if n == 0 else f"PATCH {n}/{total}",
                "subject": mailer.sanitize(mail.subject.raw if mail else series.title),
                "findings": [dict(f, where=where(f)) for f in fs],
            })
        prev = self.state.series(s["prev_id"]) if s["prev_id"] else None
        inbox = next((i for i in self.cfg.inboxes if i.name == s["inbox"]), None)
        url = f"{inbox.url}/{s['head_msgid']}/" if inbox and inbox.url else ""
        thread = f"{url}T/" if url else ""
        previous = ""
        if prev:
            previous = f"v{prev['version']} <{prev['head_msgid']}>"
        base = f"{report.base} ({why or report.base_why})" if report.base else "none: diff-only checks"
        verdict = "ERROR" if report.errors else "WARNING" if report.warnings else "OK"
        return render("bot-reply.j2", kind="report", r=data,
                      hi=_hi(series.head.author_name, series.head.author_email),
                      verdict=verdict, tree_label=label, url=url, base=base,
                      subject=mailer.sanitize(series.head.subject.raw), previous=previous,
                      ran=[f"{c['id']} ({c['status']})" for c in data["checks"]
                           if c["status"] != "skipped"],
                      skipped=[f"{c['id']} ({c['reason']})" for c in data["checks"]
                               if c["status"] == "skipped"],
                      patches=patches, bot_version=napipatch_version, thread=thread,
                      reproduce=reproduce(series, report, thread or s["head_msgid"]))

    def _queue_reply(self, s, head: dict, kind: str, body: str, res: PassResult,
                     series_state: str, note: str = "", **extra) -> None:
        """Build the reply (its Message-ID fixed now) and store it with the
        series' new state in one transaction; never twice per series and kind."""
        st = self.state
        if st.reply_for(s["id"], kind) is not None:
            st.set_series_state(s["id"], series_state, **extra)
            return
        inbox = next((i for i in self.cfg.inboxes if i.name == head["inbox"]), None)
        refs = head["refs"] if isinstance(head["refs"], list) else row_dict(head)["refs"]
        out = mailer.build(self.cfg, subject=head["subject"], in_reply_to=head["msgid"],
                           references=refs, author_name=head["author_name"] or "",
                           author_email=head["author_email"] or "",
                           list_address=inbox.address if inbox else "", body=body)
        author = (head["author_email"] or "").lower()
        recent = st.replies_to_author_since(author, time.time() - 3600)
        state = "queued"
        why = note
        if recent >= self.cfg.rate_per_hour:
            state = "ratelimited"
            why = f"not sent: {recent} replies to {author} in the last hour (rate_per_hour)"
            log.warning("series #%d: %s", s["id"], why)
        with st.tx():
            st.add_reply(s["id"], kind, out.msgid, author, out.sender, out.rcpts, out.data,
                         state, dry_run=self.cfg.dry_run_dir is not None, note=why)
            st.set_series_state(s["id"], series_state, **(dict(note=note) if note else {}), **extra)
        if state == "queued":
            res.queued += 1

    # ------------------------------------------------------------ 6. send
    def _send_queued(self, res: PassResult) -> None:
        st = self.state
        for r in st.replies_in("queued"):
            rcpts = _json_list(r["rcpts"])
            if self.cfg.dry_run_dir is not None:
                path = mailer.write_dry_run(self.cfg.dry_run_dir, r["id"], r["msgid"], bytes(r["mail"]))
                st.set_reply_state(r["id"], "sent", sent_at=time.time(), dry_run=1,
                                   last_error=f"dry run: {path}")
                log.info("dry run: reply <%s> written to %s", r["msgid"], path)
                res.sent += 1
                continue
            if not rcpts:
                st.set_reply_state(r["id"], "failed", last_error="no valid recipient address")
                continue
            st.set_reply_state(r["id"], "sending", attempts=r["attempts"] + 1)
            crash_point("before-send")
            try:
                mailer.send_smtp(self.cfg, r["sender"], rcpts, bytes(r["mail"]))
            except mailer.TransientError as exc:
                log.warning("reply <%s> stays queued: %s", r["msgid"], exc)
                st.set_reply_state(r["id"], "queued", last_error=str(exc))
                break  # the server is down or busy: try the rest next pass
            except mailer.PermanentError as exc:
                log.error("reply <%s> refused: %s", r["msgid"], exc)
                st.set_reply_state(r["id"], "failed", last_error=str(exc))
                continue
            crash_point("after-send")
            mailer.log_sent(self.cfg.sent_log, r["msgid"], rcpts)
            crash_point("after-log")
            st.set_reply_state(r["id"], "sent", sent_at=time.time(), last_error="")
            log.info("sent reply <%s> to %s", r["msgid"], ", ".join(rcpts))
            res.sent += 1

    # ------------------------------------------------------------ status
    def status_lines(self) -> list[str]:
        st = self.state
        lines = []
        for p in st.q("SELECT * FROM position ORDER BY inbox, epoch"):
            lines.append(f"inbox {p['inbox']} epoch {p['epoch']}: at {p['oid'][:12] or 'its start'}")
        n = st.one("SELECT count(*) AS n, sum(kind='patch') AS p, sum(kind='bad') AS b FROM messages")
        lines.append(f"messages: {n['n']} seen, {n['p'] or 0} patch mails, {n['b'] or 0} unreadable")
        for s in st.q("SELECT * FROM series ORDER BY id"):
            prev = f" (follows #{s['prev_id']})" if s["prev_id"] else ""
            have = st.one("SELECT count(*) AS n FROM messages WHERE series_id=? AND kind='patch' "
                          "AND idx > 0", s["id"])["n"]
            counts = (f" {s['errors']}E/{s['warnings']}W" if s["errors"] is not None else "")
            lines.append(f"series #{s['id']} {s['state']:10} v{s['version']} {have}/{s['total']} "
                         f"{mailer.sanitize(s['title'], 70)!r} by {s['author_email']}{prev}{counts}"
                         + (f" -- {s['note']}" if s["note"] else ""))
            for r in st.q("SELECT * FROM replies WHERE series_id=? ORDER BY id", s["id"]):
                lines.append(f"  reply {r['kind']} <{r['msgid']}> {r['state']}"
                             + (f" (attempts {r['attempts']})" if r["attempts"] else "")
                             + (f" -- {r['last_error']}" if r["last_error"] else ""))
        return lines


def _slots(members: list[dict]) -> list[dict]:
    """One mail per slot (a later duplicate in a slot was logged and is ignored)."""
    seen: dict[int, dict] = {}
    for m in sorted(members, key=lambda m: m["seen_at"]):
        seen.setdefault(m["idx"], m)
    return [seen[i] for i in sorted(seen)]


def _hi(name: str | None, addr: str | None) -> str:
    name = mailer.sanitize(name)
    return name.split()[0] if name else (mailer.sanitize(addr) or "there")


def _json_list(text: str) -> list[str]:
    try:
        v = json.loads(text or "[]")
    except ValueError:
        return []
    return [x for x in v if isinstance(x, str)]
