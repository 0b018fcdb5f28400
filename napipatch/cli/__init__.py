"""The napipatch command line: the typer app, composed here and only here.

Commands are thin, as git-pw's are: parse options, make one library call,
render. Sub-commands take what they share from ``cli.common``, never from
this module. Exit statuses: napipatch.report.model.EXIT for reports;
a NapipatchError is one line and exit 2; any other exception one line,
the traceback written to a file by ``cli.crash``, exit 3.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer

from napipatch.cli import helpstyle, version
from napipatch.cli.bench import bench_app
from napipatch.cli.bot import bot_app
from napipatch.cli.check import check, checks_app
from napipatch.cli.common import state
from napipatch.cli.configcmd import config_cmd
from napipatch.cli.crash import report as report_crash
from napipatch.cli.fix import fix
from napipatch.cli.hook import hook_app
from napipatch.cli.send import send
from napipatch.cli.series import series_app
from napipatch.cli.test import test_app, worker
from napipatch.cli.tree import tree_app
from napipatch.errors import NapipatchError

app = typer.Typer(help="Check, build and boot netdev patch series before they reach the list.",
                  no_args_is_help=True, add_completion=True, pretty_exceptions_enable=False)
helpstyle.install()
app.add_typer(series_app, name="series")
app.command("check")(check)
app.command("fix")(fix)
app.add_typer(checks_app, name="checks")
app.add_typer(tree_app, name="tree")
app.command("config")(config_cmd)
app.add_typer(test_app, name="test")
app.add_typer(hook_app, name="hook")
app.command("send")(send)
app.add_typer(bot_app, name="bot")
app.add_typer(bench_app, name="bench")
app.command("worker")(worker)


def _version(value: bool) -> None:
    if value:
        typer.echo("\n".join(version.lines()))
        raise typer.Exit(0)


@app.callback()
def _root(debug: bool = typer.Option(False, "--debug", help="Show tracebacks on errors."),
          store: Optional[Path] = typer.Option(
              None, "--store", help="Series store directory (napipatch.series-dir)."),
          _show_version: bool = typer.Option(
              False, "--version", callback=_version, is_eager=True,
              help="Show napipatch's version and the b4, git and linters it found.")):
    state["debug"] = debug
    state["store"] = store


def main():
    try:
        rc = app(standalone_mode=False)
    except NapipatchError as exc:
        if state["debug"]:
            raise
        typer.echo(f"napipatch: error: {exc}", err=True)
        sys.exit(2)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except (typer.Abort, KeyboardInterrupt):
        typer.echo("napipatch: aborted", err=True)
        sys.exit(130)
    except Exception as exc:
        # Usage errors (typer's vendored click) know how to show themselves.
        if hasattr(exc, "show") and hasattr(exc, "exit_code"):
            exc.show()
            sys.exit(2)
        if state["debug"]:
            raise
        report_crash(exc)
    sys.exit(rc if isinstance(rc, int) else 0)
