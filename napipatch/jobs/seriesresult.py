"""The result of a check run once per series (coccinelle, the docs build):
the tip's reports the base did not have, each put on the patch that wrote
its line, and the per-patch states the netdev CI forecast reads."""

from __future__ import annotations

from napipatch.jobs.attribute import Attributor
from napipatch.jobs.executor import JobResult
from napipatch.kernel.kbuildout import Diag, LineMap, new_against
from napipatch.report.findings import Finding, Severity
from napipatch.tree import gitutil


def series_result(check: str, what: str, att: Attributor, before: list[Diag],
                  after: list[Diag], files: list[str], seconds: float, summary: str,
                  notes: list[str] | None = None) -> JobResult:
    diff = gitutil.out(att.repo, "diff", "--no-renames", "-U0", att.base, att.tip, "--",
                       *files) if files else ""
    new = new_against(before, after, LineMap(diff))
    findings: list[Finding] = []
    per_patch: dict[int, int] = {}
    for d in new:
        n = att.patch_of(d.file, d.line)
        per_patch[n] = per_patch.get(n, 0) + 1
        findings.append(Finding(check=check, severity=Severity.WARNING, patch=n, file=d.file,
                                line=d.line, message=d.message,
                                hint=f"new against the base's {what} run of the same files",
                                details=f"{d.file}:{d.line}: {d.message}"))
    touched = {n for f in files for n in att.touching(f)}
    states = []
    for n in range(1, len(att.commits) + 1):
        k = per_patch.get(n, 0)
        if k:
            state, desc = "warning", f"{k} new {what} report{'s' * (k != 1)}"
        elif n in touched:
            state, desc = "success", f"no new {what} reports"
        else:
            state, desc = "success", f"nothing for {what}: no file of it is checked"
        states.append({"patch": n, "state": state, "nipa": check, "description": desc})
    findings.append(Finding(check=check, severity=Severity.INFO, patch=0,
                            message=f"{what}: {summary}, base against tip: {len(new)} new "
                                    f"report{'s' * (len(new) != 1)}",
                            details="\n".join(notes or [])))
    return JobResult(kind=check, target=check, status="warn" if new else "pass",
                     findings=findings, seconds=seconds,
                     data={"checks": {check: states}, "nipa": {check: check},
                           "files": files, "reports_before": len(before),
                           "reports_after": len(after)})

