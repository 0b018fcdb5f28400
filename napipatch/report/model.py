"""What a run produced: one ``CheckResult`` per check or job, and the ``Report``.

Kept apart from the engine so that rendering, jobs and the bot can read a
report without importing the machinery that made it; ``build`` makes it,
once, from a run's results. Also a check's group and its headings.

The verdict is the report's: a series is clean only when every planned
check completed and none found an error. A check that crashed, timed out
or could not run in this environment makes the run incomplete, and an
incomplete run never exits 0 (``report.status.Verdict``).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from napipatch.mails.series import Series
from napipatch.report.findings import Finding, Severity
from napipatch.report.status import Status, Verdict

# The statuses by kind (report.status.Status says what each means), and the
# exit status of each verdict (Verdict), as the names callers import.
COMPLETED = tuple(s for s in Status if s.completed)
SKIPPED = Status.SKIPPED
INCOMPLETE = tuple(s for s in Status if s.incomplete)
STATUSES = tuple(Status)
EXIT = {v: v.exit_code for v in Verdict}


@dataclass
class CheckResult:
    id: str
    status: Status  # a plain string converts (a ValueError when it is none)
    seconds: float
    cached: bool = False
    reason: str = ""
    # The NIPA contexts (patchwork check names) it answers for, from its
    # declaration: what the forecast (report.forecast) reads its findings for.
    nipa: tuple[str, ...] = ()
    # Why it completed without answering those contexts ("" when it did):
    # a diff check whose NIPA rule needs the tree, run without one.
    nipa_unknown: str = ""
    # Its declaration's group ("" or "netdev process"): the reports show the
    # findings of a grouped check apart, under the group's name.
    group: str = ""

    def __post_init__(self):
        if self.status not in STATUSES:
            raise ValueError(f"{self.id}: unknown check status {self.status!r}")
        self.status = Status(self.status)

    @property
    def completed(self) -> bool:
        return self.status.completed

    @property
    def missing(self) -> str:
        """Why a check gave no result, in words: ``timed out: ran past 600 s``."""
        return self.status.words + (f": {self.reason}" if self.reason else "")


def status_of(findings: list[Finding]) -> Status:
    """The status a check gets from its findings (fail, warn, info or pass)."""
    sev = {f.severity for f in findings}
    if Severity.ERROR in sev:
        return Status.FAIL
    if Severity.WARNING in sev:
        return Status.WARN
    return Status.INFO if sev else Status.PASS


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
        return [c for c in self.checks if c.status.incomplete]

    @property
    def verdict(self) -> Verdict:
        """The verdict this report earns, the most severe that holds."""
        return Verdict.of({c.status for c in self.incomplete}, bool(self.errors))

    @property
    def exit_code(self) -> int:
        return self.verdict.exit_code

    @property
    def clean(self) -> bool:
        return self.verdict is Verdict.CLEAN

    def of_patch(self, n: int) -> Report:
        """The same run seen from one mail: patch ``n``'s findings (0: the
        series' own), every check's status unchanged, so a check that did
        not complete still stops the verdict (the send hook's per-message
        lines)."""
        return replace(self, findings=[f for f in self.findings if f.patch == n])

    def completion_line(self) -> str:
        """``11 of 13 checks completed; 2 timed out: kdoc, ynl`` (what every
        output format says, so a missing result is never silent)."""
        planned, done = self.planned, self.completed
        text = f"{len(done)} of {len(planned)} checks completed"
        for status in INCOMPLETE:
            ids = [c.id for c in self.checks if c.status == status]
            if ids:
                text += f"; {len(ids)} {status.words}: {', '.join(ids)}"
        return text



Result = tuple[CheckResult, list[Finding]]  # a check's result and its findings


def build(series: Series, results: list[Result], *, tree: str | None = None,
          base: str | None = None, base_why: str = "no tree", notes: list[Finding] = (),
          coverage: dict[str, list[str]] | None = None, whole: bool = True) -> Report:
    """The report of a run, made once from its checks' results (static and
    job checks alike, in run order) and the run's own ``notes`` (a series
    that stops applying). ``whole``: forecast every NIPA context; else only
    those the checks that ran answer for (a run of jobs alone, as
    `napipatch test warnings`, forecasts what its jobs answer, not twenty
    "not selected" rows)."""
    checks = [r for r, _ in results]
    findings = [f for _, fs in results for f in fs] + list(notes)
    findings.sort(key=lambda f: f.sort_key)
    scope = None if whole else frozenset(n for c in checks for n in c.nipa)
    return Report(series=series, tree=tree, base=base, base_why=base_why, findings=findings,
                  checks=checks, coverage=dict(coverage or {}), forecast_scope=scope)


# ----------------------------------------------------------------------
# A check's ``group`` (``@check(group=...)``) and what the reports say
# under its heading: "" (the default, no heading) or napipatch's own netdev
# process rules, which are no NIPA test.


GROUPS = {
    "": "",
    "netdev process": "napipatch's reading of Documentation/process/maintainer-netdev.rst; "
                      "no NIPA test checks these",
}

MAINTAINER_NETDEV = "https://www.kernel.org/doc/html/next/process/maintainer-netdev.html"

# What the bot's reply says once per series for each netdev process rule
# that found something, in the tone of the list's own form letters
# (linux-netdev/nipa ml-agent/form-letters/, form-letters/): the rule, why
# it is there, and what to do -- never asking for a repost just for it.
LETTERS = {
    "repost-wait": "It looks like this version was posted less than 24 hours after the "
                   "previous one. Please allow at least 24 hours between versions, so that "
                   "reviewers in every time zone have a chance to look at the previous one.",
    "new-thread": "It looks like this new version was posted as a reply to the previous "
                  "version. Please post each new version as a new, independent thread, with "
                  "a lore link to the previous version in the changelog; a reply to the old "
                  "thread breaks tooling and is easy to miss. Please do not repost just for "
                  "this: keep it in mind for the next version.",
    "version-link": "Please include a lore link to each previous version in the changelog "
                    "of the cover letter, so reviewers can find what was said about it.",
    "review-tags": "Some review tags given on the previous version are missing from patches "
                   "that did not change. Please carry them over to the next version (b4 "
                   "trailers -u does it), unless the patch changed enough that the reviewer "
                   "should look again.",
    "review-followup": "Some review comments on the previous version seem left open: the "
                       "lines they quote did not change, and neither a reply in the thread "
                       "nor the changelog says why. Please answer each comment, in the code "
                       "or on the list, and say in the changelog what changed.",
    "net-next-closed": "net-next is currently closed for new drivers, features, code "
                       "refactoring and optimizations; only bug fixes are accepted. Please "
                       "repost when net-next reopens. RFC patches sent for review only are "
                       "welcome at any time.",
    "rct": "In networking code, local variable declarations are ordered from the longest "
           "line to the shortest (\"reverse Christmas tree\"), where their initializers "
           "allow it.",
}
