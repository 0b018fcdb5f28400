"""The job checks: the jobs a selection of them needs, run once each through
the configured executor, and each job's result as the results of the
checks that read it.

A job check declares the job it reads (``@check(job=...)``, one of
``napipatch.jobs.kinds.KINDS``, declared on the job classes); its
``run(result)`` picks its findings from the
job's ``JobResult`` by channel, and they become its own here (its id, its
NIPA contexts). ``build-w1`` and ``sparse`` read one W=1 C=1 build: it
runs once. A per-target job (build, boot, remote) runs for each target and
gives one result per target (``build/virtio-net``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from napipatch.engine.registry import CheckInfo
from napipatch.errors import NapipatchError
from napipatch.jobs import targets as targetdata
from napipatch.jobs.boot.job import BootJob
from napipatch.jobs.boot.remote import RemoteHost, RemoteJob, host_dict
from napipatch.jobs.build.job import BuildJob
from napipatch.jobs.distributed import CeleryExecutor, app_from_config
from napipatch.jobs.executor import OWN, JobResult, LocalExecutor
from napipatch.jobs.kinds import KINDS
from napipatch.jobs.warnings.job import WarningsJob
from napipatch.mails.series import Series
from napipatch.report.findings import Finding, Severity
from napipatch.report.model import INCOMPLETE, SKIPPED, CheckResult, Result, status_of
from napipatch.tree.applied import Applied


def executor_for(cfg, progress: Callable[[str], None], applied: Applied, series: Series):
    """The executor napipatch.executor names: local (default) or celery."""
    kind = (cfg.executor or "local").strip().lower()
    if kind == "local":
        return LocalExecutor(progress, cfg.job_seconds)
    if kind != "celery":
        raise NapipatchError("napipatch.executor", f"unknown executor {kind!r} (local, celery)")
    # Workers elsewhere re-apply the patches to get the same commits.
    patches = [m.as_format_patch() for m in series.patches[:len(applied.good)]]
    return CeleryExecutor(app_from_config(cfg), patches=patches, base=applied.base,
                          progress=progress, timeouts=cfg.job_seconds)


def _per_target(cls: type, cfg, applied: Applied, plan: JobPlan, common: dict
                ) -> tuple[list, str]:
    """A per-target job's jobs: one a target the plan gives it, or none and why."""
    commits = applied.good
    tip = commits[-1] if commits else applied.base
    if cls is BuildJob:
        return [BuildJob(target=n, base=applied.base, commits=commits, **common)
                for n in plan.builds()], "no target to build"
    if cls is BootJob:
        return [BootJob(target=n, commit=tip, patch=0, timeout=plan.timeout,
                        label=f"patch-{len(commits)}" if commits else "base",
                        base=applied.base, at=len(commits), flavour=plan.flavour, **common)
                for n in plan.boots()], "no bootable target"
    return [RemoteJob(target=n, commit=tip, patch=0, base=applied.base, at=len(commits),
                      host=host_dict(RemoteHost.from_config(cfg, n)), **common)
            for n in plan.remotes(cfg)], \
        "no host configured (git config napipatch.TARGET.host HOST)"


def jobs_for(job: str, cfg, applied: Applied, plan: JobPlan) -> tuple[list, str]:
    """The jobs that answer ``job`` (a name in the job registry) for this
    series, or none and why. A series job (all but the per-target ones) is
    its class given the series and its declared ``args``."""
    declared, cls = KINDS[job]
    common = dict(repo=applied.repo, cache=cfg.cache, jobs=plan.jobs or cfg.jobs)
    if declared.per_target:
        return _per_target(cls, cfg, applied, plan, common)
    if not applied.good:
        return [], "no patch applied"
    extra = {"limit": cfg.warnings_objects} if cls is WarningsJob else {}
    return [cls(base=applied.base, commits=applied.good, **dict(declared.args), **extra,
                **common)], ""


def _reason(result: JobResult) -> str:
    """Why a job gave no result (its infrastructure finding)."""
    if result.status not in INCOMPLETE:
        return ""
    said = [f for f in result.findings if f.severity is not Severity.INFO] or result.findings
    return said[0].message if said else "the job could not run"


def _stamped(f: Finding, check: CheckInfo) -> Finding:
    """``f`` as ``check``'s finding: its id, its NIPA contexts named, and
    its fix only when the check declares one (as for a static check), with
    the ``--only`` that has ``napipatch fix`` run the job at all."""
    nipa = f.nipa
    if nipa and OWN in nipa:
        nipa = {**{k: v for k, v in nipa.items() if k != OWN},
                **{ctx: nipa[OWN] for ctx in check.nipa}}
    fix = f.fix if check.fixes else None
    if fix and fix.get("edits"):
        fix = {**fix, "only": check.id}
    return replace(f, check=check.id, nipa=nipa, fix=fix)


def results_of(readers: list[CheckInfo], result: JobResult) -> list[Result]:
    """One job's result as the results of the checks that read it.

    Each check's ``run`` picks its findings (None: the job has no result for
    it). A job that gave no result (infrastructure, a timeout) makes each
    reader's status say so; what no reader picked (the reason) goes to the
    first of them, so it is said once. Every finding carries the id of the
    check it went to (the remote job's ``remote``, not its target's name):
    ``--only``, the checks and the findings of a report name one thing; a
    job's NIPA state for "the reading check" (``OWN``) becomes one for each
    context that check declares.
    """
    picked = [c.run(result) for c in readers]
    taken = {id(f) for got in picked for f in got or []}
    loose = [f for f in result.findings if id(f) not in taken]
    incomplete = result.status in INCOMPLETE
    out = []
    for i, (check, got) in enumerate(zip(readers, picked)):
        if got is None and not incomplete:
            continue
        mine = [_stamped(f, check)
                for f in list(got or []) + (loose if incomplete and i == 0 else [])]
        per_target = KINDS[check.job][0].per_target
        seconds = result.seconds if check.id != "selftest" else \
            result.data.get("selftest_seconds") or 0.0
        out.append((CheckResult(f"{check.id}/{result.target}" if per_target else check.id,
                                result.status if incomplete else status_of(mine), seconds,
                                reason=_reason(result), nipa=check.nipa), mine))
    return out


def run_job_checks(series: Series, cfg, applied: Applied | None, checks: list[CheckInfo],
                   plan: JobPlan, progress: Callable[[str], None] | None = None
                   ) -> tuple[list[Result], list[Finding]]:
    """Run the jobs ``checks`` read, each once: the checks' results and
    findings, and the run's notes (where the series stops applying)."""
    if applied is None:
        return [(CheckResult(c.id, SKIPPED, 0.0, reason="needs --tree", nipa=c.nipa), [])
                for c in checks], []
    out: list[Result] = []
    notes = [Finding(
        check="apply", severity=Severity.INFO, patch=applied.failure.patch,
        message=f"patches {applied.failure.patch}..{len(series.patches)} are not built "
                "or booted: the series stops applying there")] if applied.failure else []
    ex = executor_for(cfg, progress or (lambda _msg: None), applied, series)
    for job in KINDS:  # in run order
        readers = [c for c in checks if c.job == job]
        if not readers:
            continue
        todo, why_none = jobs_for(job, cfg, applied, plan)
        out += [(CheckResult(c.id, SKIPPED, 0.0, reason=why_none, nipa=c.nipa), [])
                for c in (readers if not todo else [])]
        for one in todo:
            got = ex.submit(one)
            if plan.memory is not None:  # the one place a job's result meets the memory
                got = plan.memory.judge(got, applied.base)
            out += results_of(readers, got)
    return out, notes


# ----------------------------------------------------------------------
# Where the job checks run: the targets, ``make -j`` and the guest's timeout.


@dataclass
class JobPlan:
    """The targets of a run's job checks (``build``, ``boot``, ``remote``).

    Attributes:
        targets: built by ``build`` (None: every target).
        boot_targets: booted by ``boot`` (None: the bootable ones of ``targets``).
        remote_targets: booted on their host by ``remote`` (None: those of
            ``targets`` with ``napipatch.TARGET.host`` configured).
        jobs: ``make -j``; None: ``napipatch.jobs``.
        timeout: seconds before a hung guest is killed; None: the target's.
        flavour: which build of the boot targets boots (``--flavour debug``).
        memory: judges each job's result by earlier runs (``bot.memory.Memory``:
            flaky and known failures); None: each run stands alone.
    """

    targets: list[str] | None = None
    boot_targets: list[str] | None = None
    remote_targets: list[str] | None = None
    jobs: int | None = None
    timeout: float | None = None
    flavour: str = ""  # the boot targets' flavour (targets.toml [flavours.NAME]); "": plain
    memory: Any = None  # bot.memory.Memory (typed loosely: the pipeline does not import the bot)

    def check_flavour(self) -> None:
        """Every boot target has ``flavour`` (a one-line error otherwise)."""
        for n in self.boots() if self.flavour else []:
            targetdata.load(n, self.flavour)

    def builds(self) -> list[str]:
        return known(self.targets) if self.targets is not None else targetdata.names()

    def boots(self) -> list[str]:
        if self.boot_targets is not None:
            return known(self.boot_targets)
        return [n for n in self.builds() if targetdata.load(n).boot is not None]

    def remotes(self, cfg) -> list[str]:
        if self.remote_targets is not None:
            return known(self.remote_targets)
        return [n for n in self.builds() if cfg.get(f"napipatch.{n}.host")]


def known(names: list[str]) -> list[str]:
    """``names``, each a target napipatch has (a one-line error otherwise)."""
    have = targetdata.names()
    for n in names:
        if n not in have:
            raise NapipatchError(n, f"no such target (known: {', '.join(have)})")
    return list(dict.fromkeys(names))
