"""Planning a run: the units of work (one check on one patch, or on the
series) and the outcome of each unit that is known without running it
(not planned, nothing to read, a patch that did not apply, a cached
result whose inputs still hold).
"""

from __future__ import annotations

import fnmatch
import time
from dataclasses import dataclass

from napipatch.config import KEYS, Config
from napipatch.engine.cache import ResultCache, result_key
from napipatch.engine.context import (
    PatchContext,
    SeriesContext,
    TreeView,
    current_clock,
    current_config,
)
from napipatch.engine.outcomes import Outcome
from napipatch.engine.registry import CheckInfo
from napipatch.mails.mail import PatchMail
from napipatch.mails.series import Series

# Patch by patch, and within a patch the checks that read the whole tree
# first: the long units start early and those sharing a one-time cost (a
# grep of the base) do not all wait on it at once.
_RANK = {"tree": 0, "scripts": 1, "diff": 2}
# A larger diff is parsed only in the units' own processes, under their
# deadline; the engine has none.
_PARSE_HERE = 4 << 20


@dataclass
class Unit:
    """One check on one patch (``ctx`` a PatchContext), on the series, or
    not run at all (``ctx`` None, with the reason in ``skip``)."""

    check: CheckInfo
    ctx: PatchContext | SeriesContext | None
    skip: str = ""

    @property
    def order(self) -> tuple[int, int]:
        n = self.ctx.n if isinstance(self.ctx, PatchContext) else 10**6
        return n, _RANK.get(self.check.needs, 3)


def plan(checks: list[CheckInfo], view: TreeView | None, pctx: list[PatchContext],
         sctx: SeriesContext) -> list[Unit]:
    """The units of work, so a slow check's patches spread over the pool
    instead of queueing in one thread behind each other."""
    units: list[Unit] = []
    for check in checks:
        if check.needs in ("scripts", "tree") and view is None:
            units.append(Unit(check, None, "needs --tree"))
        elif check.requires and not getattr(sctx.config, check.requires):
            key = next(k.key for k in KEYS if k.attr == check.requires)
            units.append(Unit(check, None, f"{key} is not set"))
        else:
            units += [Unit(check, ctx) for ctx in (pctx if check.scope == "patch" else [sctx])]
    return sorted(units, key=lambda u: u.order)


def budget(check: CheckInfo, config: Config) -> float:
    """Seconds a unit of ``check`` may run: napipatch.check-timeout, or the
    check's own deadline and a minute for napipatch's part (0: no limit)."""
    if not check.timeout:
        return config.check_timeout
    own = getattr(config, check.timeout)
    return own + 60.0 if own else 0.0


def cache_key(unit: Unit, series: Series, view: TreeView | None) -> str:
    ctx, check = unit.ctx, unit.check
    upto = ctx.n if isinstance(ctx, PatchContext) else len(series.patches)
    tkey = view.applied.base if view else None
    if view is not None and isinstance(ctx, PatchContext) and not ctx.applied:
        tkey = f"{tkey}-unapplied"
    return result_key(check.id, check.fingerprint, series, upto, tkey,
                      f"{upto}p" if check.scope == "patch" else "s", history=check.history)


def _unapplied(unit: Unit) -> bool:
    """A tree check on a patch (or series) that did not apply: nothing to read."""
    ctx = unit.ctx
    if ctx is None or ctx.tree is None or unit.check.needs != "tree" \
            or not unit.check.needs_applied:
        return False
    return (not ctx.applied) if isinstance(ctx, PatchContext) else ctx.tip is None


def _touched(ctx: PatchContext) -> set[str] | None:
    # ctx.diff: parsed once, here; the forked units inherit it
    return diff_paths(ctx.mail, lambda: ctx.diff)


def diff_paths(mail: PatchMail, parse) -> set[str] | None:
    """The paths ``mail``'s patch touches, old and new names; None when that
    cannot be told here (a diff too large or unreadable: its units run and
    say why, each under its deadline)."""
    if len(mail.diff) > _PARSE_HERE:
        return None
    try:
        diff = parse()
    except Exception:  # noqa: BLE001 - the units report it
        return None
    names = {p for pf in diff for p in (pf.path, pf.source_file, pf.target_file)}
    return {p[2:] if p.startswith(("a/", "b/")) else p for p in names} - {"/dev/null"}


def reads(check: CheckInfo, paths: set[str] | None) -> bool:
    """Whether ``check`` has something to read in a patch touching ``paths``
    (None: not known, so it may)."""
    return not check.files or paths is None or any(
        fnmatch.fnmatchcase(p, pat) for p in paths for pat in check.files)


def _nothing_to_read(unit: Unit) -> bool:
    """The unit's check reads only some paths (``files``) and no patch of
    the unit touches one: it would find nothing, so no process is started."""
    if not unit.check.files:
        return False
    ctxs = [unit.ctx] if isinstance(unit.ctx, PatchContext) else unit.ctx.patches
    return not any(reads(unit.check, _touched(ctx)) for ctx in ctxs)


def _still_valid(inputs: list[list], view: TreeView | None, config: Config) -> bool:
    """Every input a cached result was made from still reads the same."""
    for kind, name, value in inputs:
        now = view.current(kind, name) if view is not None else \
            current_config(config, name) if kind == "config" else \
            current_clock(name) if kind == "clock" else ("no tree", kind)
        if now != value:
            return False
    return True


def settled(unit: Unit, series: Series, view: TreeView | None, config: Config,
            cache: ResultCache) -> Outcome | None:
    """The outcome of a unit known without running it: not planned, nothing
    to read, or a cached result whose inputs still hold. None: run it."""
    if unit.ctx is None:
        return Outcome("skipped", [], False, 0.0, unit.skip)
    if _unapplied(unit):
        return Outcome("partial", [], True, 0.0)
    if _nothing_to_read(unit):
        # "cached" as for a patch that did not apply: nothing ran anew
        return Outcome("ran", [], cache.enabled, 0.0)
    if not cache.enabled:
        return None
    t0 = time.monotonic()
    got = cache.get(cache_key(unit, series, view))
    if got is not None and _still_valid(got[1], view, config):
        return Outcome("ran", got[0], True, time.monotonic() - t0)
    return None


