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
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol

from napipatch.report.findings import Finding, Severity


@dataclass
class JobResult:
    kind: str
    target: str
    status: str  # pass | warn | fail, or error | timeout (no result)
    findings: list[Finding] = field(default_factory=list)
    seconds: float = 0.0
    data: dict[str, Any] = field(default_factory=dict)

    def of(self, check: str) -> list[Finding]:
        """The findings made under the id ``check`` (a job check's own)."""
        return [f for f in self.findings if f.check == check]


class Job(Protocol):
    kind: str

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
        kind=kind, target=target, status="error",
        findings=[Finding(check=kind, severity=Severity.WARNING, patch=0,
                          message=f"{target}: infrastructure failure after {tries} "
                                  f"tr{'ies' if tries != 1 else 'y'}, not a result for this "
                                  f"series: {why}",
                          hint="run the job again when the host is healthy")])


class LocalExecutor:
    """Runs each job here, synchronously."""

    def __init__(self, progress: Callable[[str], None] | None = None):
        self.progress = progress or (lambda _msg: None)

    def submit(self, job: Job) -> JobResult:
        try:
            return job.run(self.progress)
        except Exception as exc:
            if not is_infra(exc):
                raise
            return infra_result(job.kind, getattr(job, "target", "?"), str(exc), 1)
