"""The pipeline: apply once, the static checks, then the job checks, one report."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from napipatch.config import Config
from napipatch.engine.outcomes import coverage
from napipatch.engine.registry import CheckInfo, load, select, static
from napipatch.engine.statics import run_checks, warm
from napipatch.mails.series import Series, check_size
from napipatch.pipeline.jobchecks import run_job_checks
from napipatch.pipeline.jobchecks import JobPlan
from napipatch.report.findings import Finding
from napipatch.report.model import CheckResult, Report, Result, build
from napipatch.report.status import Status
from napipatch.tree import gitutil
from napipatch.tree.applied import Applied
from napipatch.tree.apply import apply_in_index


def apply(series: Series, config: Config, tree: Path, base: str | None = None,
          use_cache: bool = True) -> Applied:
    """The series applied on its base in ``tree`` (no checkout; cached)."""
    repo = gitutil.require_repo(tree)
    return apply_in_index(repo, series, base, cache=config.cache if use_cache else None)


def run(series: Series, config: Config, tree: Path | None = None, *, base: str | None = None,
        only: list[str] | None = None, skip: list[str] | None = None,
        default: Callable[[CheckInfo], bool] = static, use_cache: bool = True,
        plan: JobPlan | None = None, branch: str | None = None, whole: bool = True,
        extra: list[Result] = (), on_check: Callable | None = None,
        progress: Callable[[str], None] | None = None) -> Report:
    """Check ``series``: in ``tree`` when given (applied on ``base``, else its
    base-commit, else HEAD), else diff-only.

    ``only``/``skip``: check ids (static and job checks alike); without
    ``only``, the checks ``default`` keeps (``napipatch check``: the static
    ones). ``plan``: the job checks' targets. ``branch``: the branch the
    series is meant for (defaults to ``base``). ``whole``: forecast every
    NIPA context, not only those the chosen checks answer for. ``extra``:
    results made elsewhere that belong in this report (b4 prep's series
    checks, from a run on the branch's whole series). ``on_check``
    gets each static check's result as it completes; ``progress`` the jobs'
    lines (make, QEMU). The report is made once, at the end, of every result.
    """
    check_size(series)  # before applying: a refused series costs no apply
    reg = load()
    chosen = select(reg.checks, only, skip, default)
    statics = [c for c in chosen if not c.is_job]
    with warm(statics, series, config):
        applied = apply(series, config, tree, base, use_cache) if tree is not None else None
        results = run_checks(series, config, applied, statics, use_cache=use_cache,
                             progress=on_check, branch=branch or base,
                             broken=[] if only else reg.broken)
    jobs = [c for c in chosen if c.is_job]
    notes: list[Finding] = []
    if jobs:
        got, notes = run_job_checks(series, config, applied, jobs, plan or JobPlan(), progress)
        results += got
    if only:
        results = [(_asked_for(r, only), fs) for r, fs in results]
    results += extra
    return build(series, results, tree=str(applied.repo) if applied else None,
                 base=applied.base if applied else None,
                 base_why=applied.base_why if applied else "no tree", notes=notes,
                 coverage=coverage(reg.checks.values()), whole=whole)


def _asked_for(result: CheckResult, only: list[str]) -> CheckResult:
    """A check ``--only`` names that could not run (no tree, no host, no
    target) did not run, and the run says so: "0 of 0 checks completed" and
    exit 0 would read as clean. Left out by default, it is skipped."""
    if result.id in only and result.status == Status.SKIPPED:
        return replace(result, status=Status.ERROR, reason=f"{result.reason} (--only {result.id})")
    return result
