"""The bot's memory of test results: flaky and known failures, judged as
NIPA's contest judges them.

Every selftest and KUnit case the bot runs is recorded in its state
(``results``: test, base, target, series, pass/fail/skip/flaky/crash; a
KUnit case is ``kunit:suite.case``). When a case fails on a series:

- a ``[[known_failure]]`` of the bot's config naming it (the case, or its
  program: ``net:nl_netdev.py`` covers ``net:nl_netdev.py:*``) turns the
  error into an info naming the reason, until its ``until`` date passes;
- else, when the same case failed (or flaked) on the same base and target
  within its last ``bot.flaky_window`` runs of other series, it is known-flaky: a
  warning naming those runs (and their pages with ``bot.url``), not an
  error. NIPA keeps a flaky list of its own, not public, so the forecast
  says "not known here" for it.

A kernel splat is a finding of its own (``verdicts.splat_findings``) and a
crashed KUnit case is no failure to judge: neither is ever touched, so a
crash in a known-failing test is still an error.

``judge`` is the one call, made where a job's result becomes the checks'
findings (``pipeline.jobchecks``, through ``JobPlan.memory``), so
``napipatch test run --memory STATE_DIR`` judges as the bot does; only the
bot records (``series_id`` set).
"""

from __future__ import annotations

import dataclasses
import datetime
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

from napipatch.bot.state import State
from napipatch.errors import NapipatchError
from napipatch.jobs.executor import OUTPUT, OWN, TESTS, JobResult
from napipatch.jobs.kunit import job as kunitjob
from napipatch.jobs.results.verdicts import failed_lead
from napipatch.report.findings import Finding, Severity
from napipatch.report.status import Status

DB = "bot.sqlite3"  # the state dir's database (bot.config.BotConfig.db_path)
# A crashed KUnit case is a crash: recorded as one, never judged away.
_OUTCOME = {"ok": "pass", "xfail": "pass", "skip": "skip", "not ok": "fail", "crashed": "crash"}


@dataclass(frozen=True)
class KnownFailure:
    # a selftest case (net:nl_netdev.py:napi_list_check) or program (net:nl_netdev.py),
    # a KUnit case (kunit:net_core.gso_test_func) or suite (kunit:net_core)
    test: str
    reason: str
    until: datetime.date  # the last day it holds

    def covers(self, name: str) -> bool:
        """Its test is ``name``, or the program or KUnit suite ``name`` is a case of."""
        sep = "." if self.test.startswith("kunit:") else ":"
        return name == self.test or name.startswith(self.test + sep)


def outcome(case: dict) -> str:
    """pass, fail, skip, flaky or crash: how the memory records a case."""
    return "flaky" if case.get("flaky") else _OUTCOME.get(case["status"], "fail")


def cases_of(result: JobResult) -> list[tuple[str, str, str]]:
    """(test, outcome, how the finding of its failure begins) for each
    selftest case (a boot or remote job) or KUnit case (the kunit job) of
    ``result``."""
    if result.kind == kunitjob.KIND:
        tip = result.data.get("tip") or {}
        labels = [(f"{c['name']} [{c['param']}]" if c.get("param") else c["name"], c)
                  for c in tip.get("cases", [])]
        return [(f"kunit:{label}", outcome(c), kunitjob.failed_lead(label)) for label, c in labels]
    return [(c["name"], outcome(c), failed_lead(result.target, c["name"]))
            for c in result.data.get("selftests") or []]


@dataclass
class Memory:
    state: State
    window: int = 10
    known: list[KnownFailure] = field(default_factory=list)
    series_id: int | None = None  # the series under test; set: its results are recorded
    url: str = ""                 # bot.url: earlier runs are linked to their pages
    today: datetime.date = field(default_factory=datetime.date.today)

    def judge(self, result: JobResult, base: str) -> JobResult:
        """``result`` with its failed cases judged by the memory (and, for
        the bot, recorded)."""
        cases = cases_of(result)
        if not cases:
            return result
        findings = list(result.findings)
        for name, got, lead in cases:
            if got == "fail":
                self._judge_case(findings, result.target, name, lead, base)
        if self.series_id is not None:
            self.state.add_results([(name, base, result.target, self.series_id, got)
                                    for name, got, _lead in cases])
        return dataclasses.replace(result, findings=findings, status=_status(result, findings))

    def _judge_case(self, findings: list[Finding], target: str, name: str, lead: str,
                    base: str) -> None:
        at = next((i for i, f in enumerate(findings) if f.check in (TESTS, OUTPUT)
                   and f.severity is Severity.ERROR and f.message.startswith(lead)), None)
        if at is None:
            return  # not an error here (already failing on the base)
        f = findings[at]
        entry = next((k for k in self.known if k.covers(name)), None)
        if entry is not None and entry.until >= self.today:
            findings[at] = dataclasses.replace(
                f, severity=Severity.INFO, nipa={OWN: "unknown"},
                message=f"{f.message}: a known failure until {entry.until}: {entry.reason}")
            return
        if entry is not None:
            findings[at] = dataclasses.replace(
                f, message=f"{f.message} (its known_failure entry ended on {entry.until}: "
                           f"{entry.reason})")
            return
        earlier = self.state.recent_results(name, base, target, self.window, self.series_id)
        # a flake (failed, then passed on the retry) failed its first run, as NIPA counts it
        failed = [r for r in earlier if r["result"] in ("fail", "flaky")]
        if failed:
            runs = ", ".join(self._where(r) for r in failed)
            findings[at] = dataclasses.replace(
                f, severity=Severity.WARNING, nipa={OWN: "unknown"},
                message=f"{f.message}: known flaky, it failed on this base in {len(failed)} of "
                        f"the last {len(earlier)} runs of other series: {runs}",
                hint=f"{f.hint}; NIPA fails it too unless its own flaky list has it")

    def _where(self, row) -> str:
        if row["series_id"] is None:
            return "a run without a series"
        page = f" ({self.url}/series/{row['series_id']})" if self.url else ""
        return f"series #{row['series_id']}{page}"


def _status(result: JobResult, findings: list[Finding]) -> str:
    if result.status not in ("pass", "warn", "fail"):
        return result.status  # no result (error, timeout): the memory changes nothing
    sev = {f.severity for f in findings}
    return Status.FAIL if Severity.ERROR in sev else Status.WARN if Severity.WARNING in sev else Status.PASS


def open_state_dir(state_dir: Path) -> Memory:
    """The memory of a bot's state dir (or a copy of it), read only, with
    the known failures the bot last ran with: ``test run --memory``."""
    db = Path(state_dir) / DB
    if not db.is_file():
        raise NapipatchError(state_dir, f"no bot state here ({DB} is missing)")
    state = State.readonly(db)  # a developer's run reads the memory, never adds to it
    try:
        window, known = state.memory_settings()
    except sqlite3.Error as exc:
        raise NapipatchError(db, f"not a state this napipatch reads: {exc}") from None
    return Memory(state, window=window, known=[
        KnownFailure(k["test"], k["reason"], datetime.date.fromisoformat(k["until"]))
        for k in known])
