"""``napipatch test build|boot|run``: build and boot jobs (filled by the build/boot work)."""

import typer

test_app = typer.Typer(help="Build and boot a series on its targets.", no_args_is_help=True)
