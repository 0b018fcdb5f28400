"""Running the checks: series -> applied commits -> checks -> findings.

``run_checks`` in four steps, one function each: apply the series (or take
the ``Applied`` a caller already made), plan the units of work (one check
on one patch, or on the series), run each unit through the result cache,
and aggregate the findings into a ``Report`` (each identical finding
once). Independent units run in threads (``napipatch.jobs`` at a time):
the checks mostly wait on perl, python and git subprocesses. Each unit has a time budget
(``napipatch.check-timeout``); one that runs past it is reported as
``timeout`` with a finding saying so, and the report still comes. A thread
cannot be killed, so a late unit is abandoned (a daemon thread, its slot
given to the next unit) and whatever it returns later is ignored.
"""

from __future__ import annotations

import threading
import time
import traceback
from dataclasses import dataclass, replace
from pathlib import Path

from napipatch.config import Config
from napipatch.engine.cache import ResultCache, result_key
from napipatch.engine.context import PatchContext, SeriesContext, TreeView
from napipatch.engine.registry import CheckInfo, discover, select
from napipatch.mails.series import Series
from napipatch.report.findings import Finding, Severity
from napipatch.report.model import CheckResult, Report, status_of
from napipatch.tree import gitutil
from napipatch.tree.apply import Applied, apply_in_index

# Patch by patch, and within a patch the checks that read the whole tree
# first: the long units start early and those sharing a one-time cost (a
# grep of the base) do not all wait on it at once.
_RANK = {"tree": 0, "scripts": 1, "build": 2, "diff": 3}


def apply_series(series: Series, config: Config, tree: Path, base: str | None = None,
                 use_cache: bool = True) -> Applied:
    """The series applied on its base in ``tree`` (no checkout; cached)."""
    repo = gitutil.require_repo(tree)
    return apply_in_index(repo, series, base, cache=config.cache if use_cache else None)


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


@dataclass
class Outcome:
    state: str  # ran | partial | crashed | skipped | timeout
    findings: list[Finding]
    cached: bool
    seconds: float
    reason: str = ""


def plan(checks: list[CheckInfo], view: TreeView | None, pctx: list[PatchContext],
         sctx: SeriesContext) -> list[Unit]:
    """The units of work, so a slow check's patches spread over the pool
    instead of queueing in one thread behind each other."""
    units: list[Unit] = []
    for check in checks:
        if check.needs in ("scripts", "tree", "build") and view is None:
            units.append(Unit(check, None, "needs --tree"))
        elif check.needs == "build":
            units.append(Unit(check, None, "needs a build (napipatch test)"))
        else:
            units += [Unit(check, ctx) for ctx in (pctx if check.scope == "patch" else [sctx])]
    return sorted(units, key=lambda u: u.order)


def _cache_key(unit: Unit, series: Series, view: TreeView | None, extra: str) -> str:
    ctx, check = unit.ctx, unit.check
    upto = ctx.n if isinstance(ctx, PatchContext) else len(series.patches)
    tkey = view.applied.base if view else None
    if view is not None and isinstance(ctx, PatchContext) and not ctx.applied:
        tkey = f"{tkey}-unapplied"
    return result_key(check.id, check.fingerprint, series, upto, tkey,
                      extra + (f"\0{upto}p" if check.scope == "patch" else "\0s"))


def _unapplied(unit: Unit) -> bool:
    """A tree check on a patch (or series) that did not apply: nothing to read."""
    ctx = unit.ctx
    if ctx is None or ctx.tree is None or unit.check.needs != "tree" \
            or not unit.check.needs_applied:
        return False
    return (not ctx.applied) if isinstance(ctx, PatchContext) else ctx.tip is None


def run_unit(unit: Unit, series: Series, view: TreeView | None, cache: ResultCache,
             extra: str) -> Outcome:
    """One unit through the cache; a check's crash becomes a finding, so a
    bug in one check never hides the others."""
    t0 = time.monotonic()
    if unit.ctx is None:
        return Outcome("skipped", [], False, 0.0, unit.skip)
    if _unapplied(unit):
        return Outcome("partial", [], True, 0.0)
    key = _cache_key(unit, series, view, extra)
    got = cache.get(key)
    if got is not None:
        return Outcome("ran", got, True, time.monotonic() - t0)
    try:
        got = [replace(f, check=unit.check.id) for f in (unit.check.run(unit.ctx) or [])]
    except Exception as exc:  # noqa: BLE001 - reported as the check's crash
        n = unit.ctx.n if isinstance(unit.ctx, PatchContext) else 0
        return Outcome("crashed", [Finding(
            check=unit.check.id, severity=Severity.WARNING, patch=n,
            message=f"check crashed: {type(exc).__name__}: {exc}",
            hint="report this to napipatch", details=traceback.format_exc(limit=3))],
            False, time.monotonic() - t0)
    cache.put(key, got)
    return Outcome("ran", got, False, time.monotonic() - t0)


def timed_out(unit: Unit, budget: float) -> Outcome:
    """The outcome of a unit still running when its budget ran out."""
    n = unit.ctx.n if isinstance(unit.ctx, PatchContext) else 0
    where = f" on patch {n}" if n else ""
    return Outcome("timeout", [Finding(
        check=unit.check.id, severity=Severity.WARNING, patch=n,
        message=f"check timed out{where}: still running after {budget:g} s; its result is "
                "missing from this report",
        hint="raise napipatch.check-timeout, or report a check this slow to napipatch")],
        False, budget, f"ran past {budget:g} s")


def run_all(units: list[Unit], one, jobs: int, budget: float) -> list[Outcome]:
    """``one(unit)`` for every unit, ``jobs`` at a time, each within ``budget``
    seconds of its start (0: no budget). Outcomes come in the order of ``units``."""
    done: dict[int, Outcome] = {}
    running: dict[int, float] = {}   # index -> start time
    cond = threading.Condition()

    def work(i: int) -> None:
        try:
            out = one(units[i])
        except BaseException as exc:  # noqa: BLE001 - run_unit already catches checks' errors
            out = Outcome("crashed", [Finding(check=units[i].check.id, severity=Severity.WARNING,
                                              patch=0, message=f"check crashed: {exc!r}")],
                          False, 0.0)
        with cond:
            if i in running:   # not abandoned as late
                done[i] = out
                del running[i]
            cond.notify_all()

    nxt = 0
    with cond:
        while len(done) < len(units):
            while nxt < len(units) and len(running) < jobs:
                running[nxt] = time.monotonic()
                threading.Thread(target=work, args=(nxt,), daemon=True,
                                 name=f"napipatch-{units[nxt].check.id}").start()
                nxt += 1
            cond.wait(timeout=0.25)
            now = time.monotonic()
            for i, t0 in list(running.items()):
                if budget and now - t0 > budget:
                    done[i] = timed_out(units[i], budget)
                    del running[i]
    return [done[i] for i in range(len(units))]


def result_of(check: CheckInfo, outcomes: list[Outcome]) -> CheckResult:
    """One check's status from the outcomes of its units."""
    found = [f for o in outcomes for f in o.findings]
    seconds = round(sum(o.seconds for o in outcomes), 3)
    states = {o.state for o in outcomes}
    skipped = next((o for o in outcomes if o.state == "skipped"), None)
    if skipped:
        return CheckResult(check.id, "skipped", 0.0, reason=skipped.reason)
    if "crashed" in states:
        return CheckResult(check.id, "crashed", seconds)
    if "timeout" in states:
        late = next(o for o in outcomes if o.state == "timeout")
        return CheckResult(check.id, "timeout", seconds, reason=late.reason)
    return CheckResult(check.id, status_of(found), seconds,
                       cached=bool(outcomes) and all(o.cached for o in outcomes),
                       reason="some patches did not apply" if "partial" in states else "")


def unique(findings: list[Finding]) -> list[Finding]:
    """``findings`` with each (check, patch, file, line, message) once.

    Tools repeat themselves (perl kernel-doc prints some warnings twice);
    a reviewer reads a comment once. The first copy is kept, at the most
    severe severity any copy had.
    """
    first: dict[tuple, Finding] = {}
    for f in findings:
        key = (f.check, f.patch, f.file, f.line, f.message)
        have = first.get(key)
        if have is None:
            first[key] = f
        elif f.severity.rank < have.severity.rank:
            first[key] = replace(have, severity=f.severity)
    return list(first.values())


def run_checks(series: Series, config: Config, tree: Path | None = None,
               base: str | None = None, only: list[str] | None = None,
               skip: list[str] | None = None, use_cache: bool = True,
               progress=None, applied: Applied | None = None) -> Report:
    """Check ``series``; with ``tree`` (or an ``applied`` series) the tree checks too."""
    checks = select(discover(), only, skip)
    if applied is None and tree is not None:
        applied = apply_series(series, config, tree, base, use_cache)
    view = TreeView(repo=applied.repo, applied=applied, config=config, use_cache=use_cache) \
        if applied is not None else None
    report = Report(series=series, tree=str(applied.repo) if applied else None,
                    base=applied.base if applied else None,
                    base_why=applied.base_why if applied else "no tree")
    pctx = [PatchContext(series=series, n=i, mail=m, config=config, tree=view)
            for i, m in enumerate(series.patches, 1)]
    sctx = SeriesContext(series=series, config=config, patches=pctx, tree=view)
    units = plan(checks, view, pctx, sctx)
    cache = ResultCache(config.cache if use_cache else None)

    def one(unit: Unit) -> Outcome:
        return run_unit(unit, series, view, cache, config.checkpatch_ignore)

    try:
        outcomes = run_all(units, one, max(1, config.jobs), config.check_timeout)
    finally:
        if view:
            view.close()
    for check in checks:
        mine = [o for u, o in zip(units, outcomes) if u.check is check]
        result = result_of(check, mine)
        report.add(result, unique([f for o in mine for f in o.findings]))
        if progress:
            progress(result)
    report.findings.sort(key=lambda f: f.sort_key)
    return report
