"""What a run produced: one ``CheckResult`` per check or job, and the ``Report``.

Kept apart from the engine so that rendering, jobs and the bot can read and
extend a report without importing the machinery that made it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from napipatch.mails.series import Series
from napipatch.report.findings import Finding, Severity


@dataclass
class CheckResult:
    id: str
    status: str  # pass | warn | fail | info | skipped | crashed | timeout
    seconds: float
    cached: bool = False
    reason: str = ""


def status_of(findings: list[Finding]) -> str:
    """The status a check gets from its findings (fail, warn, info or pass)."""
    sev = {f.severity for f in findings}
    if Severity.ERROR in sev:
        return "fail"
    if Severity.WARNING in sev:
        return "warn"
    return "info" if sev else "pass"


@dataclass
class Report:
    series: Series
    tree: str | None
    base: str | None
    base_why: str
    findings: list[Finding] = field(default_factory=list)
    checks: list[CheckResult] = field(default_factory=list)

    @property
    def errors(self) -> int:
        return sum(f.severity is Severity.ERROR for f in self.findings)

    @property
    def warnings(self) -> int:
        return sum(f.severity is Severity.WARNING for f in self.findings)

    @property
    def exit_code(self) -> int:
        return 1 if self.errors else 0

    def add(self, result: CheckResult, findings: list[Finding]) -> None:
        self.checks.append(result)
        self.findings += findings
