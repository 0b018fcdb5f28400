"""Where jobs run: an executor takes a job and returns its result.

A job is any object with ``kind`` and ``run(progress) -> JobResult``
(see napipatch.jobs). ``LocalExecutor`` runs it in this process, on this
machine; a distributed executor (a separate piece of work) would ship the
same job description elsewhere and hand back the same JobResult.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Protocol

from .findings import Finding


@dataclass
class JobResult:
    kind: str
    target: str
    status: str  # pass | fail | error
    findings: list[Finding] = field(default_factory=list)
    seconds: float = 0.0
    data: dict[str, Any] = field(default_factory=dict)


class Job(Protocol):
    kind: str

    def run(self, progress: Callable[[str], None]) -> JobResult: ...


class Executor(Protocol):
    def submit(self, job: Job) -> JobResult: ...


class LocalExecutor:
    """Runs each job here, synchronously."""

    def __init__(self, progress: Callable[[str], None] | None = None):
        self.progress = progress or (lambda _msg: None)

    def submit(self, job: Job) -> JobResult:
        return job.run(self.progress)
