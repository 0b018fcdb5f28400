"""Build every applied patch of a series for one target (``BuildJob``).

A job is plain data plus ``run(progress) -> JobResult``; executors
(``executor``, ``distributed``) decide where it runs.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from napipatch.jobs.build import guestconfig
from napipatch.jobs.build.builder import Builder, Step
from napipatch.jobs.executor import STEPS, JobKind, JobResult
from napipatch.jobs.results.verdicts import step_findings
from napipatch.report.findings import Finding, Severity
from napipatch.report.status import Status


@dataclass
class BuildJob:
    """Build the base, then each applied commit in order, for one target."""

    kinds: ClassVar[tuple[JobKind, ...]] = (JobKind(
        "build", 0, "builds the base and every applied patch, for each target",
        per_target=True),)

    repo: Path
    target: str
    base: str
    commits: list[str]  # the applied patches' commits, in order
    cache: Path
    jobs: int = 2
    kind: str = "build"

    def run(self, progress) -> JobResult:
        t0 = time.monotonic()
        # the base's selftest fragments merged (guestconfig): the boot reuses this build
        target = guestconfig.load(self.target, self.repo, self.base)
        steps: list[Step] = []
        with Builder(self.repo, target, self.cache, jobs=self.jobs, progress=progress) as b:
            for i, commit in enumerate([self.base] + self.commits):
                label = "base" if i == 0 else f"patch-{i}"
                progress(f"{target.name}: building {label} ({commit[:12]})")
                steps.append(b.step(i, commit, label))
            obj = b.dirs.obj
        findings = step_findings(target.name, steps)
        status = Status.FAIL if any(f.severity is Severity.ERROR for f in findings) else Status.PASS
        summary = "\n".join(
            f"{'base' if s.patch == 0 else f'patch {s.patch}':>9}  {s.commit[:12]}  "
            f"{'ok' if s.ok else 'FAILED':6} {s.seconds:7.1f} s  {s.rebuilt:5} compiled  "
            f"{len(s.new_warnings)} new warnings  log: {s.log}" for s in steps)
        findings.append(Finding(check=STEPS, severity=Severity.INFO, patch=0,
                                message=f"built {target.name}: base + {len(self.commits)} patch"
                                        f"{'es' if len(self.commits) != 1 else ''}, {status}",
                                details=summary))
        return JobResult(kind="build", target=target.name, status=status, findings=findings,
                         seconds=round(time.monotonic() - t0, 1),
                         data={"steps": [_step_data(s) for s in steps], "obj": str(obj)})


def _step_data(s: Step) -> dict:
    return {"patch": s.patch, "commit": s.commit, "ok": s.ok, "seconds": s.seconds,
            "rebuilt": s.rebuilt, "log": str(s.log), "errors": [d.text for d in s.errors],
            "new_warnings": [d.text for d in s.new_warnings], "missing": s.missing}


