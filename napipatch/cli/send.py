"""``napipatch send``: check a stored version, then git send-email it."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import List, Optional

import typer

from napipatch.cli.common import (
    ONLY,
    REPO_ALIAS,
    SKIP,
    check_ids,
    load_config,
    one_tree,
    store,
    tree_of,
)
from napipatch.report.render import render_report
from napipatch.send.sending import SendFailed, send_series


def send(
    spec: str = typer.Argument(..., metavar="SERIES", help="NAME or NAME@vN in the store."),
    dry_run: bool = typer.Option(False, "--dry-run", help="git send-email --dry-run: nothing leaves."),
    to: Optional[List[str]] = typer.Option(None, "--to", help="Another To address (repeatable)."),
    cc: Optional[List[str]] = typer.Option(None, "--cc", help="Another Cc address (repeatable)."),
    tree: Optional[Path] = typer.Option(None, "--tree", help="Kernel tree: checks, get_maintainer.pl, tag (napipatch.tree)."),
    repo: Optional[Path] = REPO_ALIAS,
    force: bool = typer.Option(False, "--force", help="Send even with error findings, "
                               "checks that gave no result, or within 24 hours of the "
                               "previous version."),
    only: Optional[list[str]] = ONLY,
    skip: Optional[list[str]] = SKIP,
):
    """Check a stored version, send it with git send-email, record its Message-IDs, tag it."""
    repo = one_tree(tree, repo)
    cfg = load_config(repo)
    repo = tree_of(cfg, repo)
    try:
        o = send_series(store(cfg), spec, cfg, repo=repo, to=to, cc=cc, dry_run=dry_run,
                        force=force, only=check_ids(only), skip=check_ids(skip))
    except SendFailed as exc:
        sys.stderr.write(exc.stderr)
        raise
    r = o.report
    if r.findings or not r.clean:
        typer.echo(render_report(r, "text"), nl=False)
    if not r.clean and not force:
        why = (f"not fully checked ({r.completion_line()})" if r.incomplete else
               f"{r.errors} error finding{'s' if r.errors != 1 else ''}")
        typer.echo(f"napipatch: {spec}: not sent: {why} (--force sends anyway)", err=True)
        raise typer.Exit(r.exit_code)
    if o.held:
        typer.echo(f"napipatch: {spec}: not sent: {o.held} (--force sends anyway)", err=True)
        raise typer.Exit(2)
    if dry_run:
        typer.echo(o.output, nl=False)
    n = len(o.patch_ids) + (1 if o.cover_id else 0)
    verb = "would send" if dry_run else "sent"
    typer.echo(f"{verb} {spec}: {n} message{'s' if n != 1 else ''}")
    typer.echo("To: " + ", ".join(o.to))
    if o.cc:
        typer.echo("Cc: " + ", ".join(o.cc))
    typer.echo(f"Message-ID: <{o.cover_id or o.patch_ids[0]}>")
    for note in o.notes:
        typer.echo(note)
