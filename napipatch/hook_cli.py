"""``napipatch hook install|uninstall|run`` and ``napipatch send``."""

import typer

hook_app = typer.Typer(help="git hooks that run napipatch before a series leaves.", no_args_is_help=True)


def register(app: typer.Typer) -> None:
    app.add_typer(hook_app, name="hook")
