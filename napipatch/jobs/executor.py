"""Where jobs run: an executor takes a job and returns its result.

A job is any object with ``kind`` and ``run(progress) -> JobResult``
(see napipatch.jobs). ``LocalExecutor`` runs it in this process, on this
machine; ``jobs.distributed.CeleryExecutor`` ships the same job description
to a worker and hands back the same JobResult. Both have
``submit(job) -> JobResult``; ``jobs.run.executor_for()`` picks one.
"""

from __future__ import annotations

import errno
import socket
import traceback
from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar, Protocol

from napipatch import procs
from napipatch.errors import NapipatchError
from napipatch.report.findings import Finding, Severity
from napipatch.report.status import Status

# The channels a job's findings come on (``Finding.check`` inside a
# JobResult): what the job saw, in its own words. No job knows a check: the
# check that reads a job picks its channels (``JobResult.on``) and the
# pipeline gives what it picked that check's id and NIPA contexts.
STEPS = "steps"        # build: each patch's build, its errors and new warnings
GUEST = "guest"        # boot: the guest's boot and test plan, a splat outside a test
TESTS = "tests"        # boot: the kernel selftests, their splats and leaks, which ran
HOST = "host"          # remote: the real host's boot, plan and kernel log
COMPILER = "compiler"  # warnings: the compiler's new warnings and errors
CHECKER = "checker"    # warnings: C=1's checker (sparse)
OUTPUT = "output"      # a job with one channel (cocci, docs, tools builds, KUnit)
INFRA = "infra"        # why a job gave no result (its host, a worker, a disk)
# ``Finding.nipa`` key of a job's finding: "the NIPA contexts of the check
# that reads it" (``nipa={OWN: NipaState.FAIL}``); the pipeline names them.
OWN = "*"


@dataclass
class JobResult:
    kind: str
    target: str
    status: Status  # pass | warn | fail, or error | timeout | crashed (no result)
    findings: list[Finding] = field(default_factory=list)
    seconds: float = 0.0
    data: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self):
        # a plain string (a Celery worker's JSON) converts; a word that is
        # no status is a napipatch bug, said here rather than in a report
        self.status = Status(self.status)

    def on(self, channel: str) -> list[Finding]:
        """The findings the job made on ``channel`` (``STEPS`` ...)."""
        return [f for f in self.findings if f.check == channel]


@dataclass(frozen=True)
class JobKind:
    """A job a check can read (``@check(job=name)``), declared on the job
    class that runs it (its ``kinds``); ``napipatch.jobs.kinds`` collects them.

    Attributes:
        name: what ``@check(job=...)`` names (``warnings-w1``).
        order: when it runs in a pipeline run: the builds first (the boots
            reuse their objects), NIPA's build tests and tools builds, KUnit
            (a UML build of its own), then the guests and the hosts.
        describe: one line for ``checks list`` and the docs.
        per_target: runs once for each target (virtio-net, idpf), one
            result each (``build/virtio-net``).
        queue: the Celery queue its jobs go to; "" the target's.
        warnings: one of ``napipatch test warnings``' build tests.
        opt_in: the bot runs it only when its ``bot.warnings`` names it.
        args: what the job class is given besides the series (a config).
    """

    name: str
    order: int
    describe: str
    per_target: bool = False
    queue: str = ""
    warnings: bool = False
    opt_in: bool = False
    args: tuple[tuple[str, str], ...] = ()


class Job(Protocol):
    kind: str
    kinds: ClassVar[tuple[JobKind, ...]]

    def run(self, progress: Callable[[str], None]) -> JobResult: ...


class InfraError(Exception):
    """The machinery failed (host unreachable, disk full), not the series."""


def is_infra(exc: BaseException) -> bool:
    if isinstance(exc, (InfraError, socket.timeout, ConnectionError, TimeoutError)):
        return True
    return isinstance(exc, OSError) and exc.errno in (
        errno.ENOSPC, errno.EDQUOT, errno.EHOSTUNREACH, errno.ENETUNREACH, errno.ECONNREFUSED)


def infra_result(kind: str, target: str, why: str, tries: int) -> JobResult:
    """An infrastructure failure, reported as such: never a test failure."""
    return JobResult(
        kind=kind, target=target, status=Status.ERROR,
        findings=[Finding(check=INFRA, severity=Severity.WARNING, patch=0,
                          message=f"{target}: infrastructure failure after {tries} "
                                  f"tr{'ies' if tries != 1 else 'y'}, not a result for this "
                                  f"series: {why}",
                          hint="run the job again when the host is healthy")])


def kind_of(job: Job) -> JobKind:
    """Which of its class's kinds ``job`` is (a WarningsJob: by its config)."""
    return next(k for k in job.kinds if all(getattr(job, a) == v for a, v in k.args))


def _one_line(exc: BaseException) -> str:
    line = next((ln.strip() for ln in str(exc).splitlines() if ln.strip()), "")
    return f"{type(exc).__name__}: {line}" if line else type(exc).__name__


def timed_out(job: Job, seconds: float) -> JobResult:
    """A job killed at its deadline (``napipatch.job-timeout``): no result."""
    return JobResult(kind=job.kind, target=getattr(job, "target", "?"), status=Status.TIMEOUT,
                     seconds=seconds, findings=[Finding(
                         check=INFRA, severity=Severity.WARNING, patch=0,
                         message=f"{kind_of(job).name} job ran past its deadline of "
                                 f"{seconds:g} s and was stopped with what it started; its "
                                 "result is missing from this report",
                         hint=f"raise napipatch.{kind_of(job).name}.job-timeout or "
                              "napipatch.job-timeout")])


def crashed(job: Job, exc: BaseException) -> JobResult:
    """A job that raised what is neither bad input nor the infrastructure:
    a napipatch bug. Its checks crash; the other jobs still run."""
    return JobResult(kind=job.kind, target=getattr(job, "target", "?"), status=Status.CRASHED,
                     findings=[Finding(check=INFRA, severity=Severity.WARNING, patch=0,
                                       message=f"job crashed: {_one_line(exc)}",
                                       hint="report this to napipatch",
                                       details=traceback.format_exc())])


def run_job(job: Job, progress: Callable[[str], None], seconds: float | None) -> JobResult:
    """``job`` run here under its deadline (``procs.deadline``: past it, the
    tool running is killed with its children and no other starts). A job
    that raises is crashed; an infrastructure failure and bad input (a
    NapipatchError) are left to the caller (an executor retries the one and
    reports the other)."""
    with procs.deadline(seconds) as limit:
        try:
            result = job.run(progress)
        except Exception as exc:
            if limit.expired:
                return timed_out(job, limit.seconds or 0.0)
            if is_infra(exc) or isinstance(exc, NapipatchError):
                raise
            return crashed(job, exc)
    return timed_out(job, limit.seconds or 0.0) if limit.expired else result


class LocalExecutor:
    """Runs each job here, synchronously, each under its deadline
    (``timeouts``: the seconds a job kind may take; 0 none)."""

    def __init__(self, progress: Callable[[str], None] | None = None,
                 timeouts: Callable[[str], float] | None = None):
        self.progress = progress or (lambda _msg: None)
        self.timeouts = timeouts or (lambda _kind: 0.0)

    def submit(self, job: Job) -> JobResult:
        try:
            return run_job(job, self.progress, self.timeouts(kind_of(job).name))
        except Exception as exc:
            if not is_infra(exc):
                raise
            return infra_result(job.kind, getattr(job, "target", "?"), str(exc), 1)
