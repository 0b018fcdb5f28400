"""The pipeline: apply once, the static checks, then the job checks, one report."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from napipatch.config import Config
from napipatch.engine.registry import CheckInfo, load, select, static
from napipatch.engine.statics import run_checks, warm
from napipatch.mails.series import Series, check_size
from napipatch.pipeline.jobchecks import run_job_checks
from napipatch.pipeline.jobplan import JobPlan
from napipatch.report.model import Report
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
        plan: JobPlan | None = None, branch: str | None = None,
        on_check: Callable | None = None,
        progress: Callable[[str], None] | None = None) -> Report:
    """Check ``series``: in ``tree`` when given (applied on ``base``, else its
    base-commit, else HEAD), else diff-only.

    ``only``/``skip``: check ids (static and job checks alike); without
    ``only``, the checks ``default`` keeps (``napipatch check``: the static
    ones). ``plan``: the job checks' targets. ``branch``: the branch the
    series is meant for (defaults to ``base``). ``on_check`` gets each static
    check's result as it completes; ``progress`` the jobs' lines (make, QEMU).
    """
    check_size(series)  # before applying: a refused series costs no apply
    reg = load()
    chosen = select(reg.checks, only, skip, default)
    statics = [c for c in chosen if not c.is_job]
    with warm(statics, series, config):
        applied = apply(series, config, tree, base, use_cache) if tree is not None else None
        report = run_checks(series, config, applied, statics, use_cache=use_cache,
                            progress=on_check, branch=branch or base,
                            broken=[] if only else reg.broken,
                            registered=list(reg.checks.values()))
    jobs = [c for c in chosen if c.is_job]
    if jobs:
        run_job_checks(series, config, applied, jobs, plan or JobPlan(), report, progress)
        report.findings.sort(key=lambda f: f.sort_key)
    if only:
        _asked_for(report, only)
    return report


def _asked_for(report: Report, only: list[str]) -> None:
    """A check ``--only`` names that could not run (no tree, no host, no
    target) did not run, and the run says so: "0 of 0 checks completed" and
    exit 0 would read as clean. Left out by default, it is skipped."""
    for result in report.checks:
        if result.id in only and result.status == Status.SKIPPED:
            result.status = Status.ERROR
            result.reason = f"{result.reason} (--only {result.id})"
