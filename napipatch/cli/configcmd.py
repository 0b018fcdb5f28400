"""``napipatch config``: every napipatch.* key, its value and where it came from."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from napipatch import config as configmod
from napipatch.cli.common import load_config


def config_cmd(tree: Optional[Path] = typer.Option(
        None, "--tree", help="Show the values a command working on this tree reads.")):
    """The napipatch.* git config keys, their values, defaults and origins.

    Layers, later winning: system and global config, the current
    directory's repository, the tree's repository (--tree or napipatch.tree).
    """
    cfg = load_config(tree)
    for key, attr, _default, helptext in configmod.KEYS:
        value = getattr(cfg, attr)
        shown = str(value).lower() if isinstance(value, bool) else str(value)
        origin = cfg.origins.get(key, "default")
        typer.echo(f"{key:28} = {shown:30} # {origin}: {helptext}")
    extra = sorted(k for k in cfg.raw if k not in {k for k, *_ in configmod.KEYS})
    for key in extra:
        typer.echo(f"{key:28} = {cfg.raw[key]:30} # {cfg.origins.get(key, '?')}")
