"""``napipatch bot run|once|status|serve``: the CI bot that follows lore and
replies, and its web pages.

Thin: load the TOML config, hand it to napipatch.bot.runner, print.
"""

from __future__ import annotations

import logging
import signal
import sys
from pathlib import Path
from typing import Optional

import typer

from napipatch.bot import config as botconfig

bot_app = typer.Typer(help="The CI bot: follow public-inbox archives, check, reply.", no_args_is_help=True)

_CONFIG = typer.Option(..., "--config", "-c", help="The bot's TOML configuration file.")


def _bot(config: Path, verbose: bool):
    logging.basicConfig(stream=sys.stderr, level=logging.INFO if verbose else logging.WARNING,
                        format="%(asctime)s napipatch-bot: %(levelname)s: %(message)s",
                        datefmt="%Y-%m-%dT%H:%M:%S")
    from napipatch.bot.runner import Bot  # the bot's stack, only for bot commands

    return Bot(botconfig.load(config))


@bot_app.command("once")
def bot_once(config: Path = _CONFIG,
             verbose: bool = typer.Option(False, "--verbose", "-v", help="Log every step.")):
    """One pass: fetch, assemble, check, reply; for cron and tests."""
    bot = _bot(config, verbose)
    try:
        res = bot.run_once()
    finally:
        bot.close()
    typer.echo(res.summary())
    for p in res.problems:
        typer.echo(f"problem: {p}", err=True)


@bot_app.command("run")
def bot_run(config: Path = _CONFIG,
            interval: Optional[float] = typer.Option(None, "--interval", help="Seconds between passes (bot.interval)."),
            verbose: bool = typer.Option(True, "--verbose/--quiet", help="Log every pass.")):
    """The daemon: a pass every bot.interval seconds until SIGTERM/SIGINT."""
    bot = _bot(config, verbose)
    if interval is not None:
        bot.cfg.interval = interval

    def stop(signum, _frame):
        logging.getLogger("napipatch.bot").info("signal %d: stopping after this step", signum)
        bot.stop.set()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    try:
        bot.run_forever()
    finally:
        bot.close()


@bot_app.command("status")
def bot_status(config: Path = _CONFIG):
    """What the bot has seen: archive positions, series and their replies."""
    cfg = botconfig.load(config)
    if not cfg.db_path.exists():
        typer.echo(f"{cfg.db_path}: no state yet (run `napipatch bot once`)")
        return
    from napipatch.bot.runner import Bot

    bot = Bot(cfg)
    try:
        for line in bot.status_lines():
            typer.echo(line)
    finally:
        bot.close()



@bot_app.command("serve")
def bot_serve(config: Path = _CONFIG,
              listen: str = typer.Option("127.0.0.1:8080", "--listen",
                                         help="HOST:PORT to serve the pages on."),
              verbose: bool = typer.Option(False, "--verbose", "-v", help="Log every request.")):
    """Serve the bot's state as read-only web pages: the series, each
    series' NIPA forecast, findings and check outputs, and the tests."""
    cfg = botconfig.load(config)
    from napipatch.bot.web.app import serve  # the web stack, only for this command

    serve(cfg, listen, verbose)
