"""The check registry: every module in checks/ (napipatch.checks) with an ID.

A check module holds ``ID``, ``SUMMARY``, ``SCOPE`` ("patch"|"series"),
``NEEDS`` ("diff": runs from the mails alone, uses a tree when given;
"scripts": needs the tree's trusted scripts but not the patch applied;
"tree": needs the patch applied in a tree; "build": needs a build),
``VERSION`` (bump it when results change: it is part of the cache key), a
docstring in ruff's sections (What it catches / Why a reviewer cares /
Example / Fix), and ``run(ctx)``. A "tree" check runs only on patches that
applied, unless it sets ``NEEDS_APPLIED = False`` (``apply`` itself).
Adding a check is adding one file.
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass
from types import ModuleType

import napipatch.checks
from napipatch.engine.cache import fingerprint
from napipatch.errors import NapipatchError

SCOPES = ("patch", "series")
NEEDS = ("diff", "scripts", "tree", "build")


@dataclass(frozen=True)
class CheckInfo:
    id: str
    summary: str
    scope: str
    needs: str
    version: int
    module: ModuleType
    needs_applied: bool = True

    @property
    def fingerprint(self) -> str:
        """Version plus a hash of the code the check runs (its module and the
        napipatch modules it imports): an edit anywhere in that code
        invalidates cached results even when VERSION was not bumped."""
        return fingerprint(self.module, self.version)

    @property
    def doc(self) -> str:
        return (self.module.__doc__ or "").strip()

    def run(self, ctx):
        return self.module.run(ctx)


def discover() -> dict[str, CheckInfo]:
    pkg = napipatch.checks
    found: dict[str, CheckInfo] = {}
    for mod in pkgutil.iter_modules(pkg.__path__):
        if mod.name.startswith("_"):
            continue
        m = importlib.import_module(f"{pkg.__name__}.{mod.name}")
        cid = getattr(m, "ID", None)
        if not cid:
            continue
        info = CheckInfo(id=cid, summary=m.SUMMARY, scope=m.SCOPE, needs=m.NEEDS,
                         version=int(getattr(m, "VERSION", 1)), module=m,
                         needs_applied=bool(getattr(m, "NEEDS_APPLIED", True)))
        if info.scope not in SCOPES or info.needs not in NEEDS:
            raise NapipatchError(f"checks/{mod.name}.py", "bad SCOPE or NEEDS")
        if cid in found:
            raise NapipatchError(f"checks/{mod.name}.py", f"duplicate check id {cid!r}")
        found[cid] = info
    return dict(sorted(found.items()))


def select(all_checks: dict[str, CheckInfo], only: list[str] | None,
           skip: list[str] | None) -> list[CheckInfo]:
    for name in (only or []) + (skip or []):
        if name not in all_checks:
            raise NapipatchError(name, f"no such check (known: {', '.join(all_checks)})")
    chosen = [c for c in all_checks.values()
              if (not only or c.id in only) and c.id not in (skip or [])]
    return chosen
