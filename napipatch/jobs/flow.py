"""A series on a tree, start to end: apply once, check, then build and boot.

``napipatch test`` and the bot both run this one flow, so they cannot
drift apart (the bot's copy once hard-coded ``make -j 2``). The series is
applied once and the checks and the jobs read the same commits; the jobs
run after the checks, their results added to the same Report, whose
verdict then covers both (a job that hit an infrastructure failure is an
``error``: the run is incomplete, never clean).

The checks are the caller's: ``check(applied)`` returns their Report
(``engine.run.run_checks`` on those commits, with the caller's selection
and branch). Jobs sit beside the engine and do not import it
(tests/test_layout.py, LAYERS); the front-ends that may import both hand
it in.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from napipatch.jobs.run import executor_for, run_boots, run_builds, run_remotes, run_warnings
from napipatch.mails.series import Series, check_size
from napipatch.report.findings import Finding, Severity
from napipatch.report.model import Report
from napipatch.tree.applied import Applied
from napipatch.tree.apply import apply_in_index


@dataclass
class JobPlan:
    """Which jobs run after the checks.

    Attributes:
        builds: targets whose every applied patch is built.
        boots: targets whose last applied patch is booted (QEMU).
        remotes: targets booted on their real host over SSH.
        warnings: the netdev CI's build tests to run on every applied patch
            (``warnconfigs.WARNING_JOBS``: w1, 32bit, clang, cocci, htmldocs).
        jobs: ``make -j``; None: ``napipatch.jobs``.
        timeout: seconds before a hung guest is killed; None: the target's.
    """

    builds: list[str] = field(default_factory=list)
    boots: list[str] = field(default_factory=list)
    remotes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    jobs: int | None = None
    timeout: float | None = None


def check_then_test(series: Series, config, tree: Path | None,
                    check: Callable[[Applied | None], Report], *, base: str | None = None,
                    use_cache: bool = True, plan: JobPlan | None = None,
                    progress: Callable[[str], None] | None = None) -> Report:
    """Apply ``series`` in ``tree`` once (none: diff-only), ``check`` it,
    then run ``plan``'s jobs on the same commits.

    ``config``: the napipatch Config; ``base``: the commit to apply on
    (None: the series' base-commit, else HEAD). ``progress`` gets the jobs'
    lines (make, QEMU) and is first called after the checks.
    """
    check_size(series)  # before applying: a refused series costs no apply
    applied = apply_in_index(tree, series, base, cache=config.cache if use_cache else None) \
        if tree is not None else None
    report = check(applied)
    if applied is not None and plan is not None:
        run_jobs(series, config, applied, report, plan, progress)
    report.findings.sort(key=lambda f: f.sort_key)
    return report


def run_jobs(series: Series, config, applied: Applied, report: Report, plan: JobPlan,
             progress: Callable[[str], None] | None = None) -> None:
    """The builds, the build-warning tests, then the boots, then the remote boots, through the
    executor napipatch.executor names; each result added to ``report``."""
    if applied.failure:
        report.findings.append(Finding(
            check="apply", severity=Severity.INFO, patch=applied.failure.patch,
            message=f"patches {applied.failure.patch}..{len(series.patches)} are not built "
                    "or booted: the series stops applying there"))
    if not (plan.builds or plan.boots or plan.remotes or plan.warnings):
        return
    jobs = plan.jobs or config.jobs
    ex = executor_for(config, progress or (lambda _msg: None), applied, series)
    run_builds(config, applied, plan.builds, jobs, report, ex)
    run_warnings(config, applied, plan.warnings, jobs, report, ex)
    run_boots(config, applied, plan.boots, jobs, plan.timeout, report, ex)
    run_remotes(config, applied, plan.remotes, jobs, report, ex)
