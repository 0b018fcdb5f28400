"""The job checks: the jobs a selection of them needs, run once each through
the configured executor, and each job's result as the results of the
checks that read it.

A job check declares the job it reads (``@check(job=...)``, one of
``napipatch.checks.JOBS``); its ``run(result)`` picks its findings from the
job's ``JobResult``. ``build-w1`` and ``sparse`` read one W=1 C=1 build: it
runs once. A per-target job (build, boot, remote) runs for each target and
gives one result per target (``build/virtio-net``).
"""

from __future__ import annotations

from collections.abc import Callable

from napipatch.checks import JOBS, PER_TARGET_JOBS
from napipatch.engine.registry import CheckInfo
from napipatch.errors import NapipatchError
from napipatch.jobs.boot.job import BootJob
from napipatch.jobs.boot.remote import RemoteHost, RemoteJob, host_dict
from napipatch.jobs.build.job import BuildJob
from napipatch.jobs.distributed import CeleryExecutor, app_from_config
from napipatch.jobs.executor import JobResult, LocalExecutor
from napipatch.jobs.kunit.job import KunitJob
from napipatch.jobs.tools.dtbinding import DtBindingJob
from napipatch.jobs.tools.selftests import ToolsJob
from napipatch.jobs.tools.ynl import YnlJob
from napipatch.jobs.warnings.cocci import CocciJob
from napipatch.jobs.warnings.docs import DocsJob
from napipatch.jobs.warnings.job import WarningsJob
from napipatch.mails.series import Series
from napipatch.pipeline.plan import JobPlan
from napipatch.report.findings import Finding, Severity
from napipatch.report.model import INCOMPLETE, SKIPPED, CheckResult, Report, status_of
from napipatch.tree.applied import Applied

# The order the jobs run in: every build first (the boots reuse their
# objects), then NIPA's build tests and tools builds, then the guests and
# the hosts (KUnit, a UML build of its own, before the guests).
ORDER = ("build", "warnings-w1", "warnings-32bit", "warnings-clang", "cocci", "htmldocs",
         "ynl-tools", "build-tools", "dt-binding-check", "kunit", "boot", "remote")
assert set(ORDER) == set(JOBS), "every job in napipatch.checks.JOBS has its place here"


def executor_for(cfg, progress: Callable[[str], None], applied: Applied, series: Series):
    """The executor napipatch.executor names: local (default) or celery."""
    kind = (cfg.executor or "local").strip().lower()
    if kind == "local":
        return LocalExecutor(progress)
    if kind != "celery":
        raise NapipatchError("napipatch.executor", f"unknown executor {kind!r} (local, celery)")
    # Workers elsewhere re-apply the patches to get the same commits.
    patches = [m.as_format_patch() for m in series.patches[:len(applied.good)]]
    return CeleryExecutor(app_from_config(cfg), patches=patches, base=applied.base, progress=progress)


def jobs_for(job: str, cfg, applied: Applied, plan: JobPlan) -> tuple[list, str]:
    """The jobs that answer ``job`` for this series, or none and why."""
    common = dict(repo=applied.repo, cache=cfg.cache, jobs=plan.jobs or cfg.jobs)
    commits = applied.good
    tip = commits[-1] if commits else applied.base
    if job == "build":
        return [BuildJob(target=n, base=applied.base, commits=commits, **common)
                for n in plan.builds()], "no target to build"
    if job == "boot":
        return [BootJob(target=n, commit=tip, patch=0, timeout=plan.timeout,
                        label=f"patch-{len(commits)}" if commits else "base",
                        base=applied.base, at=len(commits), flavour=plan.flavour, **common)
                for n in plan.boots()], "no bootable target"
    if job == "remote":
        return [RemoteJob(target=n, commit=tip, patch=0, base=applied.base, at=len(commits),
                          host=host_dict(RemoteHost.from_config(cfg, n)), **common)
                for n in plan.remotes(cfg)], \
            "no host configured (git config napipatch.TARGET.host HOST)"
    if not commits:
        return [], "no patch applied"
    if job.startswith("warnings-"):
        return [WarningsJob(config=job.removeprefix("warnings-"), base=applied.base,
                            commits=commits, limit=cfg.warnings_objects, **common)], ""
    kind = {"cocci": CocciJob, "htmldocs": DocsJob, "ynl-tools": YnlJob,
            "build-tools": ToolsJob, "dt-binding-check": DtBindingJob, "kunit": KunitJob}[job]
    return [kind(base=applied.base, commits=commits, **common)], ""


def _reason(result: JobResult) -> str:
    """Why a job gave no result (its infrastructure finding)."""
    if result.status not in INCOMPLETE:
        return ""
    said = [f for f in result.findings if f.severity is not Severity.INFO] or result.findings
    return said[0].message if said else "the job could not run"


def results_of(readers: list[CheckInfo], result: JobResult
               ) -> list[tuple[CheckResult, list[Finding]]]:
    """One job's result as the results of the checks that read it.

    Each check's ``run`` picks its findings (None: the job has no result for
    it). A job that gave no result (infrastructure, a timeout) makes each
    reader's status say so; what no reader picked (the reason) goes to the
    first of them, so it is said once.
    """
    picked = [c.run(result) for c in readers]
    taken = {id(f) for got in picked for f in got or []}
    loose = [f for f in result.findings if id(f) not in taken]
    incomplete = result.status in INCOMPLETE
    out = []
    for i, (check, got) in enumerate(zip(readers, picked)):
        if got is None and not incomplete:
            continue
        mine = list(got or []) + (loose if incomplete and i == 0 else [])
        per_target = check.job in PER_TARGET_JOBS
        seconds = result.seconds if check.id != "selftest" else \
            result.data.get("selftest_seconds") or 0.0
        out.append((CheckResult(f"{check.id}/{result.target}" if per_target else check.id,
                                result.status if incomplete else status_of(mine), seconds,
                                reason=_reason(result), nipa=check.nipa), mine))
    return out


def run_job_checks(series: Series, cfg, applied: Applied | None, checks: list[CheckInfo],
                   plan: JobPlan, report: Report,
                   progress: Callable[[str], None] | None = None) -> None:
    """Run the jobs ``checks`` read, each once, and add their results to ``report``."""
    if applied is None:
        for c in checks:
            report.add(CheckResult(c.id, SKIPPED, 0.0, reason="needs --tree", nipa=c.nipa), [])
        return
    if applied.failure:
        report.findings.append(Finding(
            check="apply", severity=Severity.INFO, patch=applied.failure.patch,
            message=f"patches {applied.failure.patch}..{len(series.patches)} are not built "
                    "or booted: the series stops applying there"))
    ex = executor_for(cfg, progress or (lambda _msg: None), applied, series)
    for job in ORDER:
        readers = [c for c in checks if c.job == job]
        if not readers:
            continue
        todo, why_none = jobs_for(job, cfg, applied, plan)
        for c in readers if not todo else []:
            report.add(CheckResult(c.id, SKIPPED, 0.0, reason=why_none, nipa=c.nipa), [])
        for one in todo:
            for result, findings in results_of(readers, ex.submit(one)):
                report.add(result, findings)
