"""Running jobs for every target through the configured executor, their
results added to a Report (``flow`` runs them after the checks, for
``napipatch test`` and the bot).
"""

from __future__ import annotations

from napipatch.errors import NapipatchError
from napipatch.jobs import targets
from napipatch.jobs.boot.remote import RemoteHost, RemoteJob, host_dict
from napipatch.jobs.boot.job import BootJob
from napipatch.jobs.build.job import BuildJob
from napipatch.jobs.distributed import CeleryExecutor, app_from_config
from napipatch.jobs.executor import JobResult, LocalExecutor
from napipatch.jobs.warnings.cocci import CocciJob
from napipatch.jobs.warnings.configs import CONFIGS, WARNING_JOBS  # noqa: F401 - re-exported
from napipatch.jobs.warnings.docs import DocsJob
from napipatch.jobs.warnings.job import WarningsJob
from napipatch.report.findings import Severity
from napipatch.report.model import CheckResult, Report, status_of


def executor_for(cfg, prog, applied, series):
    """The executor napipatch.executor names: local (default) or celery."""
    kind = (cfg.executor or "local").strip().lower()
    if kind == "local":
        return LocalExecutor(prog)
    if kind != "celery":
        raise NapipatchError("napipatch.executor", f"unknown executor {kind!r} (local, celery)")
    # Workers elsewhere re-apply the patches to get the same commits.
    patches = [m.as_format_patch() for m in series.patches[:len(applied.good)]]
    return CeleryExecutor(app_from_config(cfg), patches=patches, base=applied.base, progress=prog)


def remote_targets(cfg) -> list[str]:
    """Targets with a real host configured (napipatch.TARGET.host)."""
    return [n for n in targets.names() if cfg.get(f"napipatch.{n}.host")]


def _reason(result: JobResult) -> str:
    """Why a job gave no result (its infrastructure finding), for the
    report's list of what did not run."""
    if result.status not in ("error", "timeout"):
        return ""
    said = [f for f in result.findings if f.severity is not Severity.INFO] or result.findings
    return said[0].message if said else "the job could not run"


def add_result(report: Report, result: JobResult) -> None:
    report.add(CheckResult(f"{result.kind}/{result.target}", result.status, result.seconds,
                           reason=_reason(result)), result.findings)


def add_boot_result(report: Report, result: JobResult) -> None:
    """A boot's selftest findings are their own check, ``selftest/<target>``."""
    mine = [f for f in result.findings if f.check != "selftest"]
    st = [f for f in result.findings if f.check == "selftest"]
    def status(fs):
        return "fail" if any(f.severity is Severity.ERROR for f in fs) else "pass"

    report.add(CheckResult(f"{result.kind}/{result.target}",
                           status(mine) if result.status != "error" else "error",
                           result.seconds, reason=_reason(result)), mine)
    if st:
        report.add(CheckResult(f"selftest/{result.target}", status(st),
                               result.data.get("selftest_seconds") or 0.0), st)


def run_builds(cfg, applied, names, jobs, report, executor) -> dict[str, bool]:
    """Build the base and every patch that applied, for each target."""
    ok = {}
    for name in names:
        res = executor.submit(BuildJob(repo=applied.repo, target=name, base=applied.base,
                                       commits=applied.good, cache=cfg.cache, jobs=jobs))
        add_result(report, res)
        ok[name] = res.status == "pass"
    return ok


def run_boots(cfg, applied, names, jobs, timeout, report, executor) -> None:
    """Boot the last patch that applied (the base when none did)."""
    commits = applied.good
    tip = commits[-1] if commits else applied.base
    for name in names:
        res = executor.submit(BootJob(repo=applied.repo, target=name, commit=tip, patch=0,
                                      cache=cfg.cache, jobs=jobs, timeout=timeout,
                                      label=f"patch-{len(commits)}" if commits else "base",
                                      base=applied.base, at=len(commits)))
        add_boot_result(report, res)


def run_remotes(cfg, applied, names, jobs, report, executor) -> None:
    tip = applied.good[-1] if applied.good else applied.base
    for name in names:
        host = RemoteHost.from_config(cfg, name)
        res = executor.submit(RemoteJob(repo=applied.repo, target=name, commit=tip, patch=0,
                                        cache=cfg.cache, host=host_dict(host), jobs=jobs))
        add_result(report, res)


def add_split_result(report: Report, result: JobResult) -> None:
    """A warnings, cocci or htmldocs job: one check per id it reports under
    (``build-w1`` and ``sparse`` from one build), each answering for the
    NIPA test ``data["nipa"]`` names, as a static check's ``@check(nipa=)``."""
    for check, context in (result.data.get("nipa") or {result.kind: None}).items():
        mine = [f for f in result.findings if f.check == check]
        status = "error" if result.status == "error" else status_of(mine)
        report.add(CheckResult(check, status, result.seconds,
                               reason=result.data.get("reason", ""),
                               nipa=(context,) if context else ()), mine)


def run_warnings(cfg, applied, names, jobs, report, executor) -> None:
    """New build warnings (NIPA's configurations), coccinelle and docs
    warnings, for every patch that applied."""
    if not applied.good:
        return
    for name in names:
        if name in CONFIGS:
            job = WarningsJob(repo=applied.repo, config=name, base=applied.base,
                              commits=applied.good, cache=cfg.cache, jobs=jobs,
                              limit=cfg.warnings_objects)
        else:
            kind = CocciJob if name == "cocci" else DocsJob
            job = kind(repo=applied.repo, base=applied.base, commits=applied.good,
                       cache=cfg.cache, jobs=jobs)
        add_split_result(report, executor.submit(job))
