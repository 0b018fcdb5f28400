"""The result of a check run once per series (coccinelle, the docs build):
the tip's reports the base did not have, each put on the patch that wrote
its line. NIPA runs both in its contest, not as patchwork tests, so their
checks (checks/jobs/cocci.py, checks/jobs/htmldocs.py) answer for no forecast context.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from napipatch.jobs.executor import OUTPUT, JobResult
from napipatch.kernel.kbuildout import Diag, LineMap, new_against
from napipatch.report.findings import Finding, Severity
from napipatch.report.status import Status
from napipatch.tree import gitutil


@dataclass
class SeriesJob:
    """A job run once per series, base against tip (its queue: its ``kinds``);
    ``kind`` (its name in the job registry) is set by each job."""

    repo: Path
    base: str
    commits: list[str]
    cache: Path
    jobs: int = 2
    kind: str = ""

    @property
    def target(self) -> str:
        return self.kind


def series_result(kind: str, what: str, att: Attributor, before: list[Diag],
                  after: list[Diag], files: list[str], seconds: float, summary: str,
                  notes: list[str] | None = None) -> JobResult:
    diff = gitutil.out(att.repo, "diff", "--no-renames", "-U0", att.base, att.tip, "--",
                       *files) if files else ""
    new = new_against(before, after, LineMap(diff))
    findings: list[Finding] = []
    for d in new:
        n = att.patch_of(d.file, d.line)
        findings.append(Finding(check=OUTPUT, severity=Severity.WARNING, patch=n, file=d.file,
                                line=d.line, message=d.message,
                                hint=f"new against the base's {what} run of the same files",
                                details=f"{d.file}:{d.line}: {d.message}"))
    findings.append(Finding(check=OUTPUT, severity=Severity.INFO, patch=0,
                            message=f"{what}: {summary}, base against tip: {len(new)} new "
                                    f"report{'s' * (len(new) != 1)}",
                            details="\n".join(notes or [])))
    return JobResult(kind=kind, target=kind, status=Status.WARN if new else Status.PASS,
                     findings=findings, seconds=seconds,
                     data={"files": files, "reports_before": len(before),
                           "reports_after": len(after)})


# ----------------------------------------------------------------------
# Which patch of a series a line of the series' tip comes from.
#
# Coccinelle and the documentation build run once per series, base against
# tip, as the netdev CI's contest does; a new report is then put on the patch
# that last wrote its line (``git blame base..tip``), or, for a line that
# came from the base, on the last patch that touched its file.


class Attributor:
    def __init__(self, repo: Path, base: str, commits: list[str]):
        self.repo, self.base, self.commits = repo, base, commits
        self.tip = commits[-1] if commits else base
        self._touch: dict[str, list[int]] = {}
        parents = [base] + commits[:-1]
        for i, (p, c) in enumerate(zip(parents, commits), 1):
            for path in gitutil.out(repo, "diff", "--no-renames", "--name-only", p,
                                    c).splitlines():
                self._touch.setdefault(path, []).append(i)

    def touching(self, path: str) -> list[int]:
        """The patches that change ``path``, in order."""
        return self._touch.get(path, [])

    def last_touch(self, path: str) -> int:
        return (self.touching(path) or [len(self.commits)])[-1]

    def patch_of(self, path: str | None, line: int | None) -> int:
        """1..N; the last patch when nothing better is known."""
        if not path:
            return len(self.commits)
        if not line:
            return self.last_touch(path)
        cp = gitutil.git(self.repo, "blame", "--porcelain", "-L", f"{line},{line}",
                         f"{self.base}..{self.tip}", "--", path, check=False)
        head = cp.stdout.split(" ", 1)[0] if cp.returncode == 0 else ""
        if head in self.commits:
            return self.commits.index(head) + 1
        return self.last_touch(path)

    def changed(self, pred) -> list[str]:
        """Files the series changes that ``pred`` accepts, sorted."""
        return sorted(p for p in self._touch if pred(p))
