"""One pass of the bot, and the polling loop around it.

A pass, in order (each step commits its own state, so a kill -9 anywhere
resumes from the last committed step):

1. fetch every inbox's epochs and record the new messages (``ingest``);
2. settle replies left in 'sending' by a crash (``outbox.settle``);
3. group open patch mails into series (``assemble``, stored by ``state``);
   a series' previous version and net-next's state are read from what was
   ingested when it is checked (``history``);
4. complete series -> queued; past ``incomplete_after`` -> an
   'incomplete' reply;
5. check queued series (state 'checking' while it runs) on the tree,
   base and branch ``trees`` chooses, through the flow ``napipatch test``
   uses (``jobs.flow``: checks, then builds and boots with bot.jobs), and
   queue a reply under the reply policy and the per-author rate limit
   (``reply``);
6. send queued replies (``outbox.send``).

This module only orders the steps; each lives in its own module, and all
of the SQL in ``state``. ``NAPIPATCH_BOT_CRASH_AT=POINT`` kills the pass
at a named point (``faults``).
"""

from __future__ import annotations

import fcntl
import logging
import os
import threading
import time
from dataclasses import dataclass, field

from napipatch import config as configmod
from napipatch.bot import archive_history, artefacts, outbox, reply, trees
from napipatch.bot.assemble import Group, group, row_dict, slots, to_series
from napipatch.bot.config import BotConfig
from napipatch.bot.faults import crash_point
from napipatch.bot.ingest import ingest
from napipatch.bot.memory import Memory
from napipatch.bot.state import State, status_lines
from napipatch.engine.registry import discover
from napipatch.errors import NapipatchError
from napipatch.mails.series import Series, check_size
from napipatch.pipeline.jobchecks import JobPlan
from napipatch.pipeline.run import run
from napipatch.report.model import Report

log = logging.getLogger("napipatch.bot")


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
        self.state.save_memory_settings(cfg.flaky_window, [
            {"test": k.test, "reason": k.reason, "until": k.until.isoformat()}
            for k in cfg.known_failures])
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
            outbox.settle(self.cfg, self.state)
            groups = self._assemble()
            crash_point("after-assemble")
            self._advance(groups, res)
            self._check_queued(res)
            res.sent += outbox.send(self.cfg, self.state)
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

    def status_lines(self) -> list[str]:
        return status_lines(self.state)

    # ------------------------------------------------------------ 1. ingest
    def _ingest(self, inbox, res: PassResult) -> None:
        got = ingest(self.state, inbox, self.cfg.mirror_dir)
        res.ingested += got.new
        res.bad += got.bad
        res.problems += got.problems

    # ------------------------------------------------------------ 3. assemble
    def _assemble(self) -> dict[int, Group]:
        rows = [row_dict(r) for r in self.state.open_patch_messages()]
        groups, late = group(rows, self.state.known)
        return self.state.save_groups(groups, late, time.time())

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
                body, missing = reply.incomplete_body(self.cfg, g)
                res.queued += reply.queue(self.cfg, self.state, s, g.head, "incomplete", body,
                                          series_state="incomplete",
                                          note=f"missing {', '.join(missing)}")

    # ------------------------------------------------------------ 5. check
    def _check_queued(self, res: PassResult) -> None:
        for s in self.state.series_in("queued", "checking"):
            if self.stop.is_set():
                return
            sid = s["id"]
            members = [dict(m) for m in self.state.series_members(sid) if m["kind"] == "patch"]
            self.state.set_series_state(sid, "checking")
            crash_point("checking")
            try:
                series = to_series(slots(members), name_hint=f"bot-{sid}")
                check_size(series)
                archive_history.attach(self.cfg, self.state, s, series)
            except NapipatchError as exc:
                log.error("series #%d: %s", sid, exc)
                self.state.set_series_state(sid, "failed", note=str(exc))
                continue
            got = self._check(sid, series)
            if got is None:
                continue
            res.checked += 1
            head = next(m for m in members if m["msgid"] == s["head_msgid"])
            self._report(s, head, series, *got, res)

    def _check(self, sid: int, series: Series) -> tuple[Report, trees.TreeChoice] | None:
        """The series checked (and built and booted with bot.jobs); None when
        that could not happen, the series' state saying why."""
        try:
            choice = trees.choose(self.cfg, series)
            report = self._check_on(sid, series, choice)
        except NapipatchError as exc:
            log.error("series #%d: checks could not run, will retry: %s", sid, exc)
            self.state.set_series_state(sid, "queued", note=f"checks could not run: {exc}")
            return None
        except Exception as exc:  # a bug: do not retry this series forever
            log.exception("series #%d: checks crashed", sid)
            self.state.set_series_state(sid, "failed",
                                        note=f"checks crashed: {type(exc).__name__}: {exc}")
            return None
        log.info("series #%d v%d %s: %d errors, %d warnings; %s", sid, series.version,
                 series.title, report.errors, report.warnings, report.completion_line())
        return report, choice

    def _check_on(self, sid: int, series: Series, choice: trees.TreeChoice) -> Report:
        """The one pipeline on the chosen tree: apply once, the configured
        checks ("behind" measured against the branch), then with bot.jobs the
        builds, boots and bot.warnings' build tests."""
        engine_cfg = configmod.load(choice.repo)
        jobs = self.cfg.jobs and choice.repo is not None
        wanted = set(self.cfg.warnings) if jobs else set()
        if jobs:
            wanted |= {c.id for c in discover().values() if c.job in ("build", "boot")}
        # checks.only/skip choose among the static checks; bot.jobs and
        # bot.warnings choose the job checks.
        # The bot's own choice, so not --only: a job check it wants that
        # cannot run here (no host for remote) is skipped, as the reply says.
        chosen = (lambda c: c.id in self.cfg.only) if self.cfg.only else (lambda c: not c.is_job)
        memory = Memory(self.state, self.cfg.flaky_window, self.cfg.known_failures, sid,
                        self.cfg.url)
        plan = JobPlan(targets=self.cfg.targets or None, memory=memory)
        return run(series, engine_cfg, choice.repo, base=choice.base,
                   skip=self.cfg.skip, default=lambda c: chosen(c) or c.id in wanted,
                   plan=plan, branch=choice.branch, progress=lambda msg: log.info("%s", msg))

    def _report(self, s, head: dict, series: Series, report: Report, choice: trees.TreeChoice,
                res: PassResult) -> None:
        """Queue the report under the reply policy; a series that gets none is clean."""
        extra = dict(errors=report.errors, warnings=report.warnings, base=report.base or "")
        # the web pages' data, with the job logs from the tree's napipatch cache
        artefacts.keep(self.cfg.state_dir, self.state, s["id"], report,
                       configmod.load(choice.repo).cache if self.cfg.jobs and choice.repo else None)
        # wants_reply is true for every incomplete run: only a clean one goes unanswered.
        if report.clean and not reply.wants_reply(self.cfg.policy, report):
            self.state.set_series_state(s["id"], "reported", note="clean: no reply (policy)",
                                        **extra)
            return
        prev = self.state.series(s["prev_id"]) if s["prev_id"] else None
        body = reply.report_body(self.cfg, s, prev, series, report, choice)
        res.queued += reply.queue(self.cfg, self.state, s, head, "report", body,
                                  series_state="reported", note=reply.series_note(report),
                                  **extra)
        crash_point("after-queue")
