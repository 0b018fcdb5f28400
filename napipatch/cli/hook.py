"""``napipatch hook install|uninstall|run``: git hooks that check before sending."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import List, Optional

import typer

from napipatch.cli.common import ONLY, REPO_ALIAS, SKIP, check_ids, load_config, one_tree
from napipatch.errors import NapipatchError
from napipatch.send import b4hooks, hookrun
from napipatch.send.hooks import install, uninstall

hook_app = typer.Typer(help="git hooks that run napipatch before a series leaves.", no_args_is_help=True)


@hook_app.command("install")
def hook_install(
    tree: Optional[Path] = typer.Option(None, "--tree", help="The git repository (default: this one)."),
    repo: Optional[Path] = REPO_ALIAS,
    sendemail: bool = typer.Option(False, "--sendemail", help="Install sendemail-validate (git send-email)."),
    pre_push: bool = typer.Option(False, "--pre-push", help="Install pre-push."),
    b4: bool = typer.Option(False, "--b4", help="Set b4's check commands (b4 prep --check, "
                            "b4 send, b4 am, b4 review and its series check) to run napipatch, "
                            "in the repository's .git/config."),
    glob: bool = typer.Option(False, "--global", help="With --b4: in your ~/.gitconfig, "
                              "for every repository."),
    only: Optional[list[str]] = ONLY,
    skip: Optional[list[str]] = SKIP,
):
    """Install the hooks (both git hooks unless one is named); a hook already there is chained."""
    if glob and not b4:
        raise NapipatchError("--global", "only b4's check commands go to ~/.gitconfig (--b4)")
    repo = one_tree(tree, repo) or Path(".")
    only_l, skip_l = check_ids(only), check_ids(skip)
    lines = b4hooks.install(repo, glob, only_l, skip_l) if b4 else []
    if sendemail or pre_push or not b4:
        lines += install(repo, sendemail, pre_push, only_l, skip_l)
    for line in lines:
        typer.echo(line)


@hook_app.command("uninstall")
def hook_uninstall(
    tree: Optional[Path] = typer.Option(None, "--tree", help="The git repository (default: this one)."),
    repo: Optional[Path] = REPO_ALIAS,
    sendemail: bool = typer.Option(False, "--sendemail", help="Only sendemail-validate."),
    pre_push: bool = typer.Option(False, "--pre-push", help="Only pre-push."),
    b4: bool = typer.Option(False, "--b4", help="Only b4's check commands."),
    glob: bool = typer.Option(False, "--global", help="With --b4: those in your ~/.gitconfig."),
):
    """Remove napipatch's hooks and put back the ones (and b4 settings) they replaced."""
    if glob:
        if not b4:
            raise NapipatchError("--global", "only b4's check commands are in ~/.gitconfig (--b4)")
        for line in b4hooks.uninstall(None, glob=True):
            typer.echo(line)
        return
    repo = one_tree(tree, repo) or Path(".")
    lines = []
    if sendemail or pre_push or not b4:
        lines += uninstall(repo, sendemail, pre_push)
    if b4 or not (sendemail or pre_push):
        lines += b4hooks.uninstall(repo)
    for line in lines:
        typer.echo(line)


@hook_app.command("run")
def hook_run(
    name: str = typer.Argument(..., help="sendemail-validate or pre-push."),
    args: Optional[List[str]] = typer.Argument(None, help="What git passes the hook."),
    only: Optional[list[str]] = ONLY,
    skip: Optional[list[str]] = SKIP,
):
    """What an installed hook runs (git calls it; exit 1 blocks)."""
    args = args or []
    only_l, skip_l = check_ids(only), check_ids(skip)
    cfg = load_config()
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
