"""What a run produced: one ``CheckResult`` per check or job, and the ``Report``.

Kept apart from the engine so that rendering, jobs and the bot can read and
extend a report without importing the machinery that made it.

The verdict is the report's: a series is clean only when every planned
check completed and none found an error. A check that crashed, timed out
or could not run in this environment makes the run incomplete, and an
incomplete run never exits 0 (``EXIT``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from napipatch.mails.series import Series
from napipatch.report.findings import Finding, Severity

# A check's status. The first four say it completed, with the worst
# severity it found; "skipped" was not planned (it needs --tree, a build);
# the last three mean it was planned and gave no result.
COMPLETED = ("pass", "info", "warn", "fail")
SKIPPED = "skipped"
INCOMPLETE = ("crashed", "timeout", "error")
STATUSES = COMPLETED + (SKIPPED,) + INCOMPLETE

# The exit status of every command that reports, most severe first; the
# README's exit-status table says the same in words.
EXIT = {
    "crashed": 3,   # a check crashed: a napipatch bug, the verdict is missing
    "timeout": 2,   # a check ran past napipatch.check-timeout: verdict missing
    "error": 2,     # the environment failed (a tool missing, a host down)
    "findings": 1,  # every check completed, some found errors
    "clean": 0,     # every planned check completed, no error findings
}


@dataclass
class CheckResult:
    id: str
    status: str  # one of STATUSES
    seconds: float
    cached: bool = False
    reason: str = ""
    # The NIPA contexts (patchwork check names) it answers for, from its
    # declaration: what the forecast (report.forecast) reads its findings for.
    nipa: tuple[str, ...] = ()
    # Why it completed without answering those contexts ("" when it did):
    # a diff check whose NIPA rule needs the tree, run without one.
    nipa_unknown: str = ""

    def __post_init__(self):
        if self.status not in STATUSES:
            raise ValueError(f"{self.id}: unknown check status {self.status!r}")

    @property
    def completed(self) -> bool:
        return self.status in COMPLETED


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
    # NIPA context -> every registered check that answers for it, run or
    # not (the engine's registry), so the forecast can tell "its check was
    # not selected" from "napipatch has no check for it".
    coverage: dict[str, list[str]] = field(default_factory=dict)
    # Only these NIPA contexts are forecast (None: all). A report of jobs
    # alone (`napipatch test warnings`) forecasts what its jobs answer, not
    # twenty "not selected" rows.
    forecast_scope: frozenset[str] | None = None

    def scope_forecast_to_results(self) -> None:
        """Forecast only the contexts this report's checks answer for."""
        self.forecast_scope = frozenset(n for c in self.checks for n in c.nipa)

    @property
    def errors(self) -> int:
        return sum(f.severity is Severity.ERROR for f in self.findings)

    @property
    def warnings(self) -> int:
        return sum(f.severity is Severity.WARNING for f in self.findings)

    @property
    def planned(self) -> list[CheckResult]:
        """Every check that was meant to give a result (not skipped)."""
        return [c for c in self.checks if c.status != SKIPPED]

    @property
    def completed(self) -> list[CheckResult]:
        return [c for c in self.checks if c.completed]

    @property
    def incomplete(self) -> list[CheckResult]:
        """Planned checks with no result: crashed, timed out or errored."""
        return [c for c in self.checks if c.status in INCOMPLETE]

    @property
    def verdict(self) -> str:
        """The key of ``EXIT`` this report earns, the most severe that holds."""
        states = {c.status for c in self.incomplete}
        for key in ("crashed", "timeout", "error"):
            if key in states:
                return key
        return "findings" if self.errors else "clean"

    @property
    def exit_code(self) -> int:
        return EXIT[self.verdict]

    @property
    def clean(self) -> bool:
        return self.verdict == "clean"

    def completion_line(self) -> str:
        """``11 of 13 checks completed; 2 timed out: kdoc, ynl`` (what every
        output format says, so a missing result is never silent)."""
        planned, done = self.planned, self.completed
        text = f"{len(done)} of {len(planned)} checks completed"
        words = {"crashed": "crashed", "timeout": "timed out", "error": "could not run"}
        for status, word in words.items():
            ids = [c.id for c in self.checks if c.status == status]
            if ids:
                text += f"; {len(ids)} {word}: {', '.join(ids)}"
        return text

    def add(self, result: CheckResult, findings: list[Finding]) -> None:
        self.checks.append(result)
        self.findings += findings
