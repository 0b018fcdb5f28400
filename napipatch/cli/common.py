"""What every sub-command shares: the global options' state, the
configuration and store it works with, and the parsing of options that
several commands take (``--format``, ``--only``/``--skip``), so each is
validated the same way everywhere.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from napipatch import config as configmod
from napipatch.engine.registry import discover, select
from napipatch.errors import NapipatchError, printable
from napipatch.store.store import Store

# Set by the app's callback (--debug, --store) before any command runs.
state: dict = {"debug": False, "store": None}

FORMATS = ("text", "json", "markdown", "terse", "b4-review")

TARGET_HELP = ("NAME[@vN] in the store, a format-patch directory, an mbox, "
               "a revision range or branch in --tree (default: this repository), "
               "or - for a mail or mbox on stdin. None: this branch's b4 prep "
               "series, else its commits over @{upstream}.")
ONLY = typer.Option(None, "--only", help="Run only these checks: ids, repeatable or comma "
                    "separated (`napipatch checks list`; job checks such as build-w1 too).")
SKIP = typer.Option(None, "--skip", help="Skip these checks (ids, repeatable or comma separated).")
TREE = typer.Option(None, "--tree", help="Kernel tree (git) to work in (napipatch.tree).")
# --repo was the name some commands had for --tree: still accepted, not shown.
REPO_ALIAS = typer.Option(None, "--repo", hidden=True)
FORMAT = typer.Option("text", "--format", help="text, json, markdown, terse "
                      "(one FILE:LINE: ERROR|WARNING: line per finding, for b4 prep --check) "
                      "or b4-review (b4 review's CI JSON).")
BASE = typer.Option(None, "--base", help="Base when the series has no usable base-commit.")


def load_config(repo: Optional[Path] = None) -> configmod.Config:
    """The configuration for a command working on the tree ``repo``
    (--tree/--repo, else napipatch.tree): the tree's repository config
    is the last layer either way."""
    cfg = configmod.load(repo)
    if repo is None and cfg.tree:
        cfg = configmod.load(Path(cfg.tree).expanduser())
    if state.get("store"):
        cfg.series_dir = str(state["store"])
    return cfg


def store(cfg: configmod.Config) -> Store:
    return Store(cfg.store_root)


def tree_of(cfg: configmod.Config, tree: Optional[Path]) -> Optional[Path]:
    """``--tree``/``--repo`` when given, else napipatch.tree."""
    if tree is not None:
        return tree
    return Path(cfg.tree).expanduser() if cfg.tree else None


def check_ids(values: Optional[list[str]]) -> Optional[list[str]]:
    """``--only``/``--skip``: check ids, repeated or comma separated (both
    alike: ``--only a --only b,c``), each one known; None when none given."""
    ids = list(dict.fromkeys(v.strip() for value in values or [] for v in value.split(",")
                             if v.strip()))
    if ids:
        select(discover(), ids, None)  # an unknown id: one-line error, exit 2
    return ids or None


def one_tree(tree: Optional[Path], repo: Optional[Path]) -> Optional[Path]:
    """``--tree``, or the hidden ``--repo`` alias (both: they must agree)."""
    if tree is not None and repo is not None and tree != repo:
        raise NapipatchError("--repo", f"is another name for --tree; given both ({repo}, {tree})")
    return tree if tree is not None else repo


def check_format(fmt: str) -> str:
    if fmt not in FORMATS:
        raise NapipatchError(fmt, f"unknown format ({', '.join(FORMATS)})")
    return fmt


def read_text(p: Path) -> str:
    try:
        return p.read_text()
    except OSError as exc:
        raise NapipatchError(p, exc.strerror or str(exc)) from None


def finish(report, target: object) -> None:
    """Leave with the report's exit status; when not everything was checked,
    first one line on stderr saying so (the report itself is on stdout), as
    for any other run that could not do its job."""
    if report.incomplete:
        reasons = list(dict.fromkeys(c.reason for c in report.incomplete
                                     if c.status == "error" and c.reason))
        if report.verdict == "crashed":
            line = (f"napipatch: internal error: {printable(target)}: "
                    f"{report.completion_line()} (report this to napipatch)")
        elif reasons:
            more = f" (and {len(reasons) - 1} more reasons)" if len(reasons) > 1 else ""
            line = f"napipatch: error: {printable(reasons[0])}{more}"
        else:
            line = f"napipatch: error: {printable(target)}: not fully checked: " \
                   f"{report.completion_line()}"
        typer.echo(line, err=True)
    raise typer.Exit(report.exit_code)
