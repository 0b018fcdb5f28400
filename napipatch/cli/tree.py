"""``napipatch tree prepare``: kernel trees napipatch works on."""

from __future__ import annotations

from pathlib import Path

import typer

from napipatch.tree.kerneltree import prepare

tree_app = typer.Typer(help="Kernel trees napipatch works on.", no_args_is_help=True)


@tree_app.command("prepare")
def tree_prepare(dest: Path = typer.Argument(..., help="Where the git tree goes."),
                 tarball: Path = typer.Option(Path("/usr/src/linux-source-6.12.tar.xz"), "--from",
                                              help="Debian linux-source tarball.")):
    """Unpack a Debian linux-source tarball into a git tree (reproducible commit)."""
    sha = prepare(tarball, dest)
    typer.echo(f"{dest}: {sha}")
