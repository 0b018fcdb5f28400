"""``napipatch test build|boot|remote|warnings|run``: build and boot jobs on the
series' targets, and the netdev CI's build-warning tests."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from napipatch.cli.common import (
    BASE,
    FORMAT,
    TARGET_HELP,
    check_format,
    finish,
    load_config,
    store,
    tree_of,
)
from napipatch.engine.run import run_checks
from napipatch.errors import NapipatchError
from napipatch.jobs import targets as targetsmod
from napipatch.jobs.flow import JobPlan, check_then_test
from napipatch.jobs.run import remote_targets
from napipatch.jobs.warnings.configs import WARNING_JOBS
from napipatch.report.render import render_report
from napipatch.store.inputs import resolve

test_app = typer.Typer(help="Build and boot a series on its targets.", no_args_is_help=True)


def _load(target: str, tree: Optional[Path], fmt: str):
    """The config, tree and series, checked before any work: a typo must
    not cost a build."""
    check_format(fmt)
    cfg = load_config(tree)
    tree = tree_of(cfg, tree)
    if tree is None:
        raise NapipatchError("--tree", "building needs a kernel tree (--tree or napipatch.tree)")
    series = resolve(target, store(cfg), tree)
    if not series.patches:
        raise NapipatchError(target, "empty series: no patches")
    return cfg, tree, series


class _Progress:
    """A rich spinner on stderr with the latest make/QEMU line.

    Shown from the first line on: the checks before the jobs run in forked
    processes, and the display's refresh thread must not be running when
    they fork.
    """

    def __init__(self):
        self.console = Console(stderr=True)
        self.p = Progress(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(),
                          console=self.console, transient=True)
        self.task = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self.task is not None:
            self.p.__exit__(*exc)

    def __call__(self, msg: str) -> None:
        if self.task is None:
            self.p.__enter__()
            self.task = self.p.add_task("starting", total=None)
        if ": building " in msg or ": booting " in msg or msg.startswith(("creating", "configuring")):
            self.console.log(msg)
        self.p.update(self.task, description=msg[:150])


def _drive(cfg, tree, series, base: Optional[str], fmt: str, plan: JobPlan,
           checks: bool = False, use_cache: bool = True) -> None:
    """The one flow (apply once; the checks, all of them with ``checks``,
    else only ``apply``; then ``plan``'s jobs) under a progress display, then
    the report and its exit status."""
    def check(applied):
        return run_checks(series, cfg, applied=applied, only=None if checks else ["apply"],
                          use_cache=use_cache)

    with _Progress() as prog:
        report = check_then_test(series, cfg, tree, check, base=base, use_cache=use_cache,
                                 plan=plan, progress=prog)
    if not checks:
        report.scope_forecast_to_results()
    sys.stdout.write(render_report(report, fmt, colour=fmt == "text" and sys.stdout.isatty()))
    finish(report, series.source or series.name)


def _targets(names: list[str] | None, bootable: bool = False) -> list[str]:
    known = targetsmod.names()
    names = names or known
    for n in names:
        if n not in known:
            raise NapipatchError(n, f"no such target (known: {', '.join(known)})")
    if bootable:
        names = [n for n in names if targetsmod.load(n).boot is not None]
    return names


_TREE = typer.Option(None, "--tree", help="Kernel tree (git) to build in (napipatch.tree).")
_JOBS = typer.Option(None, "--jobs", "-j", help="make -j (default: napipatch.jobs).")


@test_app.command("build")
def build_cmd(target: str = typer.Argument(..., help=TARGET_HELP), tree: Optional[Path] = _TREE,
              base: Optional[str] = BASE,
              targets: Optional[list[str]] = typer.Option(None, "--target", help="virtio-net or idpf (repeatable; default: all)."),
              jobs: Optional[int] = _JOBS, fmt: str = FORMAT):
    """Build the base and then every patch in order (incremental); exit 1 on build errors."""
    cfg, tree, series = _load(target, tree, fmt)
    _drive(cfg, tree, series, base, fmt, JobPlan(builds=_targets(targets), jobs=jobs))


@test_app.command("boot")
def boot_cmd(target: str = typer.Argument(..., help=TARGET_HELP), tree: Optional[Path] = _TREE,
             base: Optional[str] = BASE,
             targets: Optional[list[str]] = typer.Option(None, "--target", help="A bootable target (virtio-net)."),
             jobs: Optional[int] = _JOBS, fmt: str = FORMAT,
             timeout: Optional[float] = typer.Option(None, "--timeout", help="Seconds before a hung guest is killed (default: the target's plus each selftest's).")):
    """Build the series tip and boot it (virtme-ng): the target's test plan and the
    kernel selftests the series changes or the target lists; exit 1 on failures."""
    cfg, tree, series = _load(target, tree, fmt)
    names = _targets(targets, bootable=not targets)
    for n in names:
        if targetsmod.load(n).boot is None:
            raise NapipatchError(n, "is build-only: QEMU has no model for it (use `napipatch test build`)")
    _drive(cfg, tree, series, base, fmt, JobPlan(boots=names, jobs=jobs, timeout=timeout))


@test_app.command("remote")
def remote_cmd(target: str = typer.Argument(..., help=TARGET_HELP), tree: Optional[Path] = _TREE,
               base: Optional[str] = BASE,
               targets: Optional[list[str]] = typer.Option(None, "--target", help="A target with a host in napipatch.TARGET.host (idpf)."),
               jobs: Optional[int] = _JOBS, fmt: str = FORMAT):
    """Build the series tip, boot it on the target's real host over SSH, run the plan there."""
    cfg, tree, series = _load(target, tree, fmt)
    names = targets or remote_targets(cfg)
    if not names:
        raise NapipatchError("napipatch.idpf.host", "no remote host configured "
                             "(git config napipatch.idpf.host HOST, napipatch.idpf.iface IFACE)")
    _drive(cfg, tree, series, base, fmt, JobPlan(remotes=names, jobs=jobs))


@test_app.command("warnings")
def warnings_cmd(target: str = typer.Argument(..., help=TARGET_HELP), tree: Optional[Path] = _TREE,
                 base: Optional[str] = BASE,
                 only: Optional[list[str]] = typer.Option(None, "--only", help=f"Run only these (repeatable): {', '.join(WARNING_JOBS)}."),
                 jobs: Optional[int] = _JOBS, fmt: str = FORMAT):
    """New warnings per patch, as the netdev CI's build tests would see them: gcc
    W=1 + sparse, i386 and clang allmodconfig on the objects each patch can change,
    then coccinelle and the docs build on the touched files; exit 1 on build errors."""
    names = list(dict.fromkeys(only)) if only else list(WARNING_JOBS)
    for n in names:
        if n not in WARNING_JOBS:
            raise NapipatchError(n, f"unknown (known: {', '.join(WARNING_JOBS)})")
    cfg, tree, series = _load(target, tree, fmt)
    _drive(cfg, tree, series, base, fmt, JobPlan(warnings=names, jobs=jobs))


@test_app.command("run")
def run_cmd(target: str = typer.Argument(..., help=TARGET_HELP), tree: Optional[Path] = _TREE,
            base: Optional[str] = BASE, jobs: Optional[int] = _JOBS, fmt: str = FORMAT,
            timeout: Optional[float] = typer.Option(None, "--timeout", help="Boot timeout in seconds."),
            no_cache: bool = typer.Option(False, "--no-cache", help="Ignore cached check results."),
            warnings: bool = typer.Option(True, "--warnings/--no-warnings", help="Also the jobs of `test warnings` (the netdev CI's build tests).")):
    """Checks, then a build of every patch for every target, the build warnings, then the boots."""
    cfg, tree, series = _load(target, tree, fmt)
    # Real hardware too where a host is configured (idpf over SSH).
    plan = JobPlan(builds=_targets(None), boots=_targets(None, bootable=True),
                   remotes=remote_targets(cfg), jobs=jobs, timeout=timeout,
                   warnings=list(WARNING_JOBS) if warnings else [])
    _drive(cfg, tree, series, base, fmt, plan, checks=True, use_cache=not no_cache)
