"""``napipatch hook install|uninstall|run`` and ``napipatch send``."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import List, Optional

import typer

from napipatch.errors import NapipatchError

hook_app = typer.Typer(help="git hooks that run napipatch before a series leaves.", no_args_is_help=True)


def register(app: typer.Typer) -> None:
    app.add_typer(hook_app, name="hook")
    app.command("send")(send)


def _ids(value: Optional[str]) -> Optional[list[str]]:
    from napipatch.engine.registry import discover, select

    ids = [v.strip() for v in value.split(",") if v.strip()] if value else None
    if ids:
        select(discover(), ids, None)  # unknown ids: one-line error, exit 2
    return ids


_ONLY = typer.Option(None, "--only", help="Run only these check ids (comma separated).")
_SKIP = typer.Option(None, "--skip", help="Skip these check ids.")


@hook_app.command("install")
def hook_install(
    repo: Path = typer.Option(Path("."), "--repo", help="The git repository."),
    sendemail: bool = typer.Option(False, "--sendemail", help="Install sendemail-validate (git send-email)."),
    pre_push: bool = typer.Option(False, "--pre-push", help="Install pre-push."),
    only: Optional[str] = _ONLY,
    skip: Optional[str] = _SKIP,
):
    """Install the hooks (both unless one is named); a hook already there is chained."""
    from napipatch.send.hooks import install

    for line in install(repo, sendemail, pre_push, _ids(only), _ids(skip)):
        typer.echo(line)


@hook_app.command("uninstall")
def hook_uninstall(
    repo: Path = typer.Option(Path("."), "--repo", help="The git repository."),
    sendemail: bool = typer.Option(False, "--sendemail", help="Only sendemail-validate."),
    pre_push: bool = typer.Option(False, "--pre-push", help="Only pre-push."),
):
    """Remove napipatch's hooks and put back the ones they chained."""
    from napipatch.send.hooks import uninstall

    for line in uninstall(repo, sendemail, pre_push):
        typer.echo(line)


@hook_app.command("run")
def hook_run(
    name: str = typer.Argument(..., help="sendemail-validate or pre-push."),
    args: Optional[List[str]] = typer.Argument(None, help="What git passes the hook."),
    only: Optional[str] = _ONLY,
    skip: Optional[str] = _SKIP,
):
    """What an installed hook runs (git calls it; exit 1 blocks)."""
    from napipatch import config as configmod
    from napipatch.send import hookrun

    args = args or []
    only_l, skip_l = _ids(only), _ids(skip)
    cfg = configmod.load(None)
    if name == "sendemail-validate":
        if not args:
            raise NapipatchError("sendemail-validate", "needs the message file")
        body = lambda: hookrun.sendemail_validate(Path(args[0]), cfg, only_l, skip_l)  # noqa: E731
    elif name == "pre-push":
        lines = sys.stdin.read().splitlines()
        body = lambda: hookrun.pre_push(Path("."), lines, cfg, only_l, skip_l)  # noqa: E731
    else:
        raise NapipatchError(name, "no such hook (sendemail-validate, pre-push)")
    raise typer.Exit(hookrun.guarded(name, cfg, body))


def send(
    spec: str = typer.Argument(..., metavar="SERIES", help="NAME or NAME@vN in the store."),
    dry_run: bool = typer.Option(False, "--dry-run", help="git send-email --dry-run: nothing leaves."),
    to: Optional[List[str]] = typer.Option(None, "--to", help="Another To address (repeatable)."),
    cc: Optional[List[str]] = typer.Option(None, "--cc", help="Another Cc address (repeatable)."),
    repo: Optional[Path] = typer.Option(None, "--repo", help="Kernel tree: checks, get_maintainer.pl, tag (napipatch.tree)."),
    force: bool = typer.Option(False, "--force", help="Send even with error findings."),
    only: Optional[str] = _ONLY,
    skip: Optional[str] = _SKIP,
):
    """Check a stored version, send it with git send-email, record its Message-IDs, tag it."""
    from napipatch.cli.app import _config, _store, _tree
    from napipatch.report.render import render_report
    from napipatch.send.sending import SendFailed, send_series

    cfg = _config(repo)
    repo = _tree(cfg, repo)
    try:
        o = send_series(_store(cfg), spec, cfg, repo=repo, to=to, cc=cc, dry_run=dry_run,
                        force=force, only=_ids(only), skip=_ids(skip))
    except SendFailed as exc:
        sys.stderr.write(exc.stderr)
        raise
    r = o.report
    if r.findings or r.errors:
        typer.echo(render_report(r, "text"), nl=False)
    if r.errors and not force:
        typer.echo(f"napipatch: {spec}: not sent: {r.errors} error finding"
                   f"{'s' if r.errors != 1 else ''} (--force sends anyway)", err=True)
        raise typer.Exit(1)
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
