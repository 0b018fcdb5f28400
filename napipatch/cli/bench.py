"""``napipatch bench run|show|list``: the series' latency experiment.

``run`` builds the version's tip, runs every mode x load point x
repetition of ``series/NAME/experiment.toml`` on the target and records
the run in ``series/NAME/vN/bench/<run-id>.json``; ``show`` renders
recorded runs (table, JSON, plot, two versions side by side).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer

from napipatch.bench import FORMATS
from napipatch.cli.common import load_config, store, tree_of
from napipatch.errors import NapipatchError

bench_app = typer.Typer(help="The series' latency experiment: run, record, show.",
                        no_args_is_help=True)

_SPEC = typer.Argument(..., help="NAME[@vN] in the store (default: the newest version).")
_FORMAT = typer.Option("text", "--format", help="text, markdown or json.")


# The experiment's modules (builds, QEMU, SSH, plotting) are imported by the
# commands that use them: every napipatch command, the git hooks' included,
# would otherwise pay for them at start-up.


def _format(fmt: str) -> str:
    if fmt not in FORMATS:
        raise NapipatchError(fmt, f"unknown format ({', '.join(FORMATS)})")
    return fmt


def _show(runs: list[dict], fmt: str, against: dict | None = None) -> str:
    from napipatch.bench.render import as_json, table

    if fmt == "json":
        return as_json(runs + ([against] if against else []))
    return table(runs[0], fmt, against)


@bench_app.command("run")
def bench_run(spec: str = _SPEC,
              tree: Optional[Path] = typer.Option(None, "--tree", help="Kernel tree (git) to build in (napipatch.tree)."),
              target: str = typer.Option("virtio-net", "--target", help="virtio-net (QEMU guest) or idpf (hosts over SSH)."),
              quick: bool = typer.Option(False, "--quick", help="Short matrix: every mode, 2 load points, 2 repetitions."),
              jobs: int = typer.Option(2, "--jobs", "-j", help="make -j."),
              base: Optional[str] = typer.Option(None, "--base", help="Base when the series has no usable base-commit."),
              fmt: str = _FORMAT):
    """Build NAME@vN's tip and run its experiment.toml on the target; record the run.

    Exit 0 when every cell got replies, 1 when some got none (the run is
    recorded anyway), 2 on bad input.
    """
    _format(fmt)
    cfg = load_config(tree)
    tree = tree_of(cfg, tree)
    if tree is None:
        raise NapipatchError("--tree", "building needs a kernel tree (--tree or napipatch.tree)")
    from rich.console import Console

    from napipatch.bench.runner import run as run_bench

    console = Console(stderr=True)
    with console.status("starting") as status:
        def progress(msg: str) -> None:
            if ": building " in msg or ": booting " in msg or ": mode " in msg:
                console.log(msg)
            status.update(msg[:150])
        run, path = run_bench(store(cfg), cfg, spec, tree, target, quick=quick, jobs=jobs,
                              base=base, progress=progress)
    sys.stdout.write(_show([run], fmt))
    empty = [c for c in run["cells"] if not c.get("samples")]
    typer.echo(f"recorded {path} ({run['seconds']:.0f} s: build {run.get('build_seconds', 0):.0f} s, "
               f"experiment {run.get('bench_seconds', 0):.0f} s)", err=True)
    if empty:
        typer.echo(f"{len(empty)} of {len(run['cells'])} cells got no replies", err=True)
        raise typer.Exit(1)


@bench_app.command("show")
def bench_show(spec: str = _SPEC,
               run_id: Optional[str] = typer.Option(None, "--run", help="Run id (default: the newest run)."),
               fmt: str = _FORMAT,
               plot_to: Optional[Path] = typer.Option(None, "--plot", help="Also write a plot (PNG) to this file."),
               against: Optional[str] = typer.Option(None, "--against", help="NAME@vM: compare with that version's newest run (old -> new).")):
    """A recorded run as the cover letter's table, as JSON, or plotted."""
    _format(fmt)
    if plot_to is not None and plot_to.suffix.lower() != ".png":
        raise NapipatchError(plot_to, "--plot writes PNG: give a FILE.png")
    from napipatch.bench import record
    from napipatch.bench.render import check_comparable, plot

    st = store(load_config())
    run = record.find(st, spec, run_id)
    other = None
    if against:
        other = record.find(st, against)
        check_comparable(other, run)
    if plot_to is not None:
        plot(run, plot_to, other)
        typer.echo(f"plot: {plot_to}", err=True)
    sys.stdout.write(_show([run], fmt, other))


@bench_app.command("list")
def bench_list(spec: str = _SPEC):
    """The recorded runs of NAME[@vN] (all versions without @vN)."""
    from napipatch.bench import record

    st = store(load_config())
    name, version = record.parse_spec(st, spec)
    versions = [version] if "@" in spec else st.versions(name)
    for v in versions:
        for r in record.runs(st, name, v):
            typer.echo(f"{r['id']:36} v{v}  {r['target']:10} {r.get('kernel') or '?':22} "
                       f"{'emulated' if r.get('emulated') else 'hardware'}"
                       f"{'  quick' if r.get('quick') else ''}  {len(r['cells'])} cells")
