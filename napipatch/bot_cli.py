"""``napipatch bot run|once``: the CI bot that follows lore and replies."""

import typer

bot_app = typer.Typer(help="The CI bot: follow public-inbox archives, check, reply.", no_args_is_help=True)


def register(app: typer.Typer) -> None:
    app.add_typer(bot_app, name="bot")
