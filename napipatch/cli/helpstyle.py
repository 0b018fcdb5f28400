"""Option help that names values the way git and click do (TEXT, INTEGER,
PATH), not as Python types: the installed typer labels every option with
its annotation (``--to <list[str]>``, ``--dry-run <bool>``).

Installed once by the app (``cli.__init__``); a flag gets no value label,
since it takes none. ``_TyperParameter`` is private to typer, hence the
pin in pyproject.toml; should a typer without it be installed anyway, the
help keeps typer's labels rather than the CLI failing to start.
"""

from __future__ import annotations

import typer.core

_NAMES = {"str": "TEXT", "int": "INTEGER", "float": "FLOAT", "bool": "BOOLEAN"}


def _label(self, ctx) -> str | None:
    if getattr(self, "is_flag", False) or getattr(self, "count", False):
        return None
    desc = self.type_descriptor
    if desc.is_choice:
        return "|".join(str(c.value if hasattr(c, "value") else c) for c in desc.choices or ())
    if desc.is_path:
        return "PATH"
    ann = desc.annotation
    if desc.is_list:
        ann = (getattr(ann, "__args__", None) or (str,))[0]
    name = getattr(ann, "__name__", str(ann))
    return _NAMES.get(name, name.upper())


def install() -> None:
    """Replace typer's Python-type labels in --help with click's."""
    param = getattr(typer.core, "_TyperParameter", None)
    if param is not None and hasattr(param, "display_type"):
        param.display_type = _label
