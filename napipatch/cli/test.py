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
    load_config,
    store,
    tree_of,
)
from napipatch.engine.run import apply_series, run_checks
from napipatch.errors import NapipatchError
from napipatch.jobs import targets as targetsmod
from napipatch.jobs.run import (
    WARNING_JOBS,
    executor_for,
    remote_targets,
    run_boots,
    run_builds,
    run_remotes,
    run_warnings,
)
from napipatch.report.findings import Finding, Severity
from napipatch.report.render import render_report
from napipatch.store.inputs import resolve

test_app = typer.Typer(help="Build and boot a series on its targets.", no_args_is_help=True)


def _setup(target: str, tree: Optional[Path], base: Optional[str], fmt: str, checks: bool = False,
           use_cache: bool = True):
    """Apply the series once; the report starts with the checks (all of them
    with ``checks``, else only ``apply``) run on those same commits."""
    check_format(fmt)  # before any work: a typo must not cost a build
    cfg = load_config(tree)
    tree = tree_of(cfg, tree)
    if tree is None:
        raise NapipatchError("--tree", "building needs a kernel tree (--tree or napipatch.tree)")
    series = resolve(target, store(cfg), tree)
    if not series.patches:
        raise NapipatchError(target, "empty series: no patches")
    applied = apply_series(series, cfg, tree, base, use_cache)
    report = run_checks(series, cfg, applied=applied, only=None if checks else ["apply"],
                        use_cache=use_cache)
    if applied.failure:
        report.findings.append(Finding(
            check="apply", severity=Severity.INFO, patch=applied.failure.patch,
            message=f"patches {applied.failure.patch}..{len(series.patches)} are not built "
                    "or booted: the series stops applying there"))
    return cfg, applied, report


class _Progress:
    """A rich spinner on stderr with the latest make/QEMU line."""

    def __init__(self):
        self.console = Console(stderr=True)
        self.p = Progress(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(),
                          console=self.console, transient=True)
        self.task = None

    def __enter__(self):
        self.p.__enter__()
        self.task = self.p.add_task("starting", total=None)
        return self

    def __exit__(self, *exc):
        self.p.__exit__(*exc)

    def __call__(self, msg: str) -> None:
        if ": building " in msg or ": booting " in msg or msg.startswith(("creating", "configuring")):
            self.console.log(msg)
        self.p.update(self.task, description=msg[:150])


def _finish(report, fmt: str) -> None:
    report.findings.sort(key=lambda f: f.sort_key)
    sys.stdout.write(render_report(report, fmt, colour=fmt == "text" and sys.stdout.isatty()))
    raise typer.Exit(report.exit_code)


def _drive(cfg, applied, report, fmt: str, *steps) -> None:
    """Run ``steps`` (each given the executor) under one progress display, then report."""
    with _Progress() as prog:
        ex = executor_for(cfg, prog, applied, report.series)
        for step in steps:
            step(ex)
    _finish(report, fmt)


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
_JOBS = typer.Option(2, "--jobs", "-j", help="make -j.")


@test_app.command("build")
def build_cmd(target: str = typer.Argument(..., help=TARGET_HELP), tree: Optional[Path] = _TREE,
              base: Optional[str] = BASE,
              targets: Optional[list[str]] = typer.Option(None, "--target", help="virtio-net or idpf (repeatable; default: all)."),
              jobs: int = _JOBS, fmt: str = FORMAT):
    """Build the base and then every patch in order (incremental); exit 1 on build errors."""

    cfg, applied, report = _setup(target, tree, base, fmt)
    names = _targets(targets)
    _drive(cfg, applied, report, fmt,
           lambda ex: run_builds(cfg, applied, names, jobs, report, ex))


@test_app.command("boot")
def boot_cmd(target: str = typer.Argument(..., help=TARGET_HELP), tree: Optional[Path] = _TREE,
             base: Optional[str] = BASE,
             targets: Optional[list[str]] = typer.Option(None, "--target", help="A bootable target (virtio-net)."),
             jobs: int = _JOBS, fmt: str = FORMAT,
             timeout: Optional[float] = typer.Option(None, "--timeout", help="Seconds before a hung guest is killed (default: the target's plus each selftest's).")):
    """Build the series tip and boot it (virtme-ng): the target's test plan and the
    kernel selftests the series changes or the target lists; exit 1 on failures."""
    cfg, applied, report = _setup(target, tree, base, fmt)
    names = _targets(targets, bootable=not targets)
    for n in names:
        if targetsmod.load(n).boot is None:
            raise NapipatchError(n, "is build-only: QEMU has no model for it (use `napipatch test build`)")
    _drive(cfg, applied, report, fmt,
           lambda ex: run_boots(cfg, applied, names, jobs, timeout, report, ex))


@test_app.command("remote")
def remote_cmd(target: str = typer.Argument(..., help=TARGET_HELP), tree: Optional[Path] = _TREE,
               base: Optional[str] = BASE,
               targets: Optional[list[str]] = typer.Option(None, "--target", help="A target with a host in napipatch.TARGET.host (idpf)."),
               jobs: int = _JOBS, fmt: str = FORMAT):
    """Build the series tip, boot it on the target's real host over SSH, run the plan there."""
    cfg, applied, report = _setup(target, tree, base, fmt)
    names = targets or remote_targets(cfg)
    if not names:
        raise NapipatchError("napipatch.idpf.host", "no remote host configured "
                             "(git config napipatch.idpf.host HOST, napipatch.idpf.iface IFACE)")
    _drive(cfg, applied, report, fmt,
           lambda ex: run_remotes(cfg, applied, names, jobs, report, ex))


@test_app.command("warnings")
def warnings_cmd(target: str = typer.Argument(..., help=TARGET_HELP), tree: Optional[Path] = _TREE,
                 base: Optional[str] = BASE,
                 only: Optional[list[str]] = typer.Option(None, "--only", help=f"Run only these (repeatable): {', '.join(WARNING_JOBS)}."),
                 jobs: int = _JOBS, fmt: str = FORMAT):
    """New warnings per patch, as the netdev CI's build tests would see them: gcc
    W=1 + sparse, i386 and clang allmodconfig on the objects each patch can change,
    then coccinelle and the docs build on the touched files; exit 1 on build errors."""
    names = only or list(WARNING_JOBS)
    for n in names:
        if n not in WARNING_JOBS:
            raise NapipatchError(n, f"unknown (known: {', '.join(WARNING_JOBS)})")
    cfg, applied, report = _setup(target, tree, base, fmt)
    _drive(cfg, applied, report, fmt,
           lambda ex: run_warnings(cfg, applied, names, jobs, report, ex))


@test_app.command("run")
def run_cmd(target: str = typer.Argument(..., help=TARGET_HELP), tree: Optional[Path] = _TREE,
            base: Optional[str] = BASE, jobs: int = _JOBS, fmt: str = FORMAT,
            timeout: Optional[float] = typer.Option(None, "--timeout", help="Boot timeout in seconds."),
            no_cache: bool = typer.Option(False, "--no-cache", help="Ignore cached check results."),
            warnings: bool = typer.Option(True, "--warnings/--no-warnings", help="Also the build-warnings jobs of `test warnings`.")):
    """Checks, then a build of every patch for every target, the build warnings, then the boots."""
    cfg, applied, report = _setup(target, tree, base, fmt, checks=True,
                                           use_cache=not no_cache)
    _drive(cfg, applied, report, fmt,
           lambda ex: run_builds(cfg, applied, _targets(None), jobs, report, ex),
           lambda ex: run_warnings(cfg, applied, WARNING_JOBS if warnings else (), jobs,
                                   report, ex),
           lambda ex: run_boots(cfg, applied, _targets(None, bootable=True), jobs,
                                timeout, report, ex),
           # Real hardware where a host is configured (idpf over SSH).
           lambda ex: run_remotes(cfg, applied, remote_targets(cfg), jobs, report, ex))
