"""``napipatch test build|boot|run``: build and boot jobs on the series' targets."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer

from napipatch.errors import NapipatchError
from napipatch.jobs.run import executor_for, remote_targets, run_boots, run_builds, run_remotes

test_app = typer.Typer(help="Build and boot a series on its targets.", no_args_is_help=True)

_TARGET_HELP = "NAME[@vN] in the store, a format-patch directory, an mbox, or a revision range in --tree."


def _setup(target: str, tree: Optional[Path], base: Optional[str]):
    from napipatch.cli import app as cli
    from napipatch.tree.apply import apply_in_index
    from napipatch.engine.run import Report
    from napipatch.report.findings import Finding, Severity
    from napipatch.store.inputs import resolve

    cfg = cli._config(tree)
    tree = cli._tree(cfg, tree)
    if tree is None:
        raise NapipatchError("--tree", "building needs a kernel tree (--tree or napipatch.tree)")
    series = resolve(target, cli._store(cfg), tree)
    if not series.patches:
        raise NapipatchError(target, "empty series: no patches")
    applied = apply_in_index(tree, series, base)
    report = Report(series=series, tree=str(applied.repo), base=applied.base,
                    base_why=applied.base_why)
    if applied.failure:
        fl = applied.failure
        report.findings.append(Finding(
            check="apply", severity=Severity.ERROR, patch=fl.patch, message=str(fl),
            file=fl.file, line=fl.line,
            hint=f"only patches 1..{fl.patch - 1} are built; rebase the series or pass --base"))
    commits = [c for c in applied.commits if c]
    if applied.failure:
        commits = commits[:applied.failure.patch - 1]
    return cfg, applied, report, commits


class _Progress:
    """A rich spinner on stderr with the latest make/QEMU line."""

    def __init__(self):
        from rich.console import Console
        from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

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
    from napipatch.report.render import render_report

    if fmt not in ("text", "json", "markdown"):
        raise NapipatchError(fmt, "unknown format (text, json, markdown)")
    report.findings.sort(key=lambda f: f.sort_key)
    sys.stdout.write(render_report(report, fmt, colour=fmt == "text" and sys.stdout.isatty()))
    raise typer.Exit(report.exit_code)


def _drive(cfg, applied, commits, report, fmt: str, *steps) -> None:
    """Run ``steps`` (each given the executor) under one progress display, then report."""
    with _Progress() as prog:
        ex = executor_for(cfg, prog, applied, commits, report.series)
        for step in steps:
            step(ex)
    _finish(report, fmt)


def _targets(names: list[str] | None, bootable: bool = False) -> list[str]:
    from napipatch.jobs import targets as targets

    known = targets.names()
    names = names or known
    for n in names:
        if n not in known:
            raise NapipatchError(n, f"no such target (known: {', '.join(known)})")
    if bootable:
        names = [n for n in names if targets.load(n).boot is not None]
    return names


_TREE = typer.Option(None, "--tree", help="Kernel tree (git) to build in (napipatch.tree).")
_BASE = typer.Option(None, "--base", help="Base when the series has no usable base-commit.")
_FMT = typer.Option("text", "--format", help="text, json or markdown.")
_JOBS = typer.Option(2, "--jobs", "-j", help="make -j.")


@test_app.command("build")
def build_cmd(target: str = typer.Argument(..., help=_TARGET_HELP), tree: Optional[Path] = _TREE,
              base: Optional[str] = _BASE,
              targets: Optional[list[str]] = typer.Option(None, "--target", help="virtio-net or idpf (repeatable; default: all)."),
              jobs: int = _JOBS, fmt: str = _FMT):
    """Build the base and then every patch in order (incremental); exit 1 on build errors."""

    cfg, applied, report, commits = _setup(target, tree, base)
    names = _targets(targets)
    _drive(cfg, applied, commits, report, fmt,
           lambda ex: run_builds(cfg, applied, commits, names, jobs, report, ex))


@test_app.command("boot")
def boot_cmd(target: str = typer.Argument(..., help=_TARGET_HELP), tree: Optional[Path] = _TREE,
             base: Optional[str] = _BASE,
             targets: Optional[list[str]] = typer.Option(None, "--target", help="A bootable target (virtio-net)."),
             jobs: int = _JOBS, fmt: str = _FMT,
             timeout: Optional[float] = typer.Option(None, "--timeout", help="Seconds before a hung guest is killed (default: the target's).")):
    """Build the series tip and run the target's test plan in QEMU; exit 1 on failed tests."""
    from napipatch.jobs import targets as targetsmod

    cfg, applied, report, commits = _setup(target, tree, base)
    names = _targets(targets, bootable=not targets)
    for n in names:
        if targetsmod.load(n).boot is None:
            raise NapipatchError(n, "is build-only: QEMU has no model for it (use `napipatch test build`)")
    _drive(cfg, applied, commits, report, fmt,
           lambda ex: run_boots(cfg, applied, commits, names, jobs, timeout, report, ex))


@test_app.command("remote")
def remote_cmd(target: str = typer.Argument(..., help=_TARGET_HELP), tree: Optional[Path] = _TREE,
               base: Optional[str] = _BASE,
               targets: Optional[list[str]] = typer.Option(None, "--target", help="A target with a host in napipatch.TARGET.host (idpf)."),
               jobs: int = _JOBS, fmt: str = _FMT):
    """Build the series tip, boot it on the target's real host over SSH, run the plan there."""
    cfg, applied, report, commits = _setup(target, tree, base)
    names = targets or remote_targets(cfg)
    if not names:
        raise NapipatchError("napipatch.idpf.host", "no remote host configured "
                             "(git config napipatch.idpf.host HOST, napipatch.idpf.iface IFACE)")
    _drive(cfg, applied, commits, report, fmt,
           lambda ex: run_remotes(cfg, applied, commits, names, jobs, report, ex))


@test_app.command("run")
def run_cmd(target: str = typer.Argument(..., help=_TARGET_HELP), tree: Optional[Path] = _TREE,
            base: Optional[str] = _BASE, jobs: int = _JOBS, fmt: str = _FMT,
            timeout: Optional[float] = typer.Option(None, "--timeout", help="Boot timeout in seconds."),
            no_cache: bool = typer.Option(False, "--no-cache", help="Ignore cached check results.")):
    """Checks, then a build of every patch for every target, then the boots."""
    from napipatch.engine.run import run_checks

    cfg, applied, report, commits = _setup(target, tree, base)
    checked = run_checks(report.series, cfg, tree=applied.repo, base=base, use_cache=not no_cache)
    report.findings = checked.findings + [f for f in report.findings if f.check != "apply"]
    report.checks = checked.checks
    _drive(cfg, applied, commits, report, fmt,
           lambda ex: run_builds(cfg, applied, commits, _targets(None), jobs, report, ex),
           lambda ex: run_boots(cfg, applied, commits, _targets(None, bootable=True), jobs,
                                timeout, report, ex),
           # Real hardware where a host is configured (idpf over SSH).
           lambda ex: run_remotes(cfg, applied, commits, remote_targets(cfg), jobs, report, ex))
