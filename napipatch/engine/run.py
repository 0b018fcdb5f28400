"""Running the checks: series -> applied commits -> checks -> findings.

``run_checks`` in four steps, one function each: apply the series (or take
the ``Applied`` a caller already made), plan the units of work (one check
on one patch, or on the series), run each unit through the result cache,
and aggregate the findings into a ``Report`` (each identical finding
once). A unit not answered by the cache runs in a process of its own
(``engine.forked``), ``napipatch.jobs`` at a time, with a deadline of
``napipatch.check-timeout`` seconds: past it the unit's whole process
group (its perl, git and Python work) is killed, the check is reported as
``timeout`` with a finding saying so, and the report still comes. A check
that raises NapipatchError could not run here (status ``error``); any
other exception, or a process that dies, is a napipatch bug (``crashed``).
"""

from __future__ import annotations

import contextlib
import fnmatch
import functools
import importlib
import shutil
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path

from napipatch.config import Config
from napipatch.engine import zygote
from napipatch.engine.cache import ResultCache, result_key
from napipatch.engine.context import (
    ConfigView,
    Inputs,
    PatchContext,
    SeriesContext,
    TreeView,
    current_config,
)
from napipatch.engine.forked import Ended, run_forked
from napipatch.engine.registry import Broken, CheckInfo, discover, load, select
from napipatch.mails.hunks import parse_diff
from napipatch.mails.mail import PatchMail
from napipatch.mails.series import Series, check_size
from napipatch.report.findings import Finding, Severity
from napipatch.report.model import CheckResult, Report, status_of
from napipatch.tree import gitutil
from napipatch.tree.applied import Applied
from napipatch.tree.apply import apply_in_index

# Patch by patch, and within a patch the checks that read the whole tree
# first: the long units start early and those sharing a one-time cost (a
# grep of the base) do not all wait on it at once.
_RANK = {"tree": 0, "scripts": 1, "build": 2, "diff": 3}
# A larger diff is parsed only in the units' own processes, under their
# deadline; the engine has none.
_PARSE_HERE = 4 << 20


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
    state: str  # ran | partial | skipped | crashed | timeout | error
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


def _cache_key(unit: Unit, series: Series, view: TreeView | None) -> str:
    ctx, check = unit.ctx, unit.check
    upto = ctx.n if isinstance(ctx, PatchContext) else len(series.patches)
    tkey = view.applied.base if view else None
    if view is not None and isinstance(ctx, PatchContext) and not ctx.applied:
        tkey = f"{tkey}-unapplied"
    return result_key(check.id, check.fingerprint, series, upto, tkey,
                      f"{upto}p" if check.scope == "patch" else "s")


def _unapplied(unit: Unit) -> bool:
    """A tree check on a patch (or series) that did not apply: nothing to read."""
    ctx = unit.ctx
    if ctx is None or ctx.tree is None or unit.check.needs != "tree" \
            or not unit.check.needs_applied:
        return False
    return (not ctx.applied) if isinstance(ctx, PatchContext) else ctx.tip is None


def _touched(ctx: PatchContext) -> set[str] | None:
    # ctx.diff: parsed once, here; the forked units inherit it
    return _diff_paths(ctx.mail, lambda: ctx.diff)


def _diff_paths(mail: PatchMail, parse) -> set[str] | None:
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


def _reads(check: CheckInfo, paths: set[str] | None) -> bool:
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
    return not any(_reads(unit.check, _touched(ctx)) for ctx in ctxs)


@contextlib.contextmanager
def _zygotes(checks: list[CheckInfo], series: Series, config: Config):
    """The zygotes of the checks that will have work, warming while the
    series is applied (one core is idle then); stopped when the run ends."""
    want = [c for c in checks if c.zygote]
    paths = [_diff_paths(m, lambda m=m: parse_diff(m.diff)) for m in series.patches] \
        if want else []
    started = []
    try:
        for c in want:
            if any(_reads(c, p) for p in paths):
                config.cache.mkdir(parents=True, exist_ok=True)
                work = Path(tempfile.mkdtemp(prefix=f"zygote-{c.id}-", dir=config.cache))
                started.append((c.id, work, None))
                pid = zygote.start(c.id, c.module.warm, c.module.serve,
                                   config.check_timeout or 600, work)
                started[-1] = (c.id, work, pid)
        yield
    finally:
        for name, work, pid in started:
            if pid:
                zygote.stop(name, pid)
            shutil.rmtree(work, ignore_errors=True)


def _preload(checks: list[CheckInfo]) -> None:
    """Import the modules the checks about to run share, once, before the
    units fork (a module that is not there is the unit's own error)."""
    for name in sorted({m for c in checks for m in c.preload}):
        with contextlib.suppress(ImportError):
            importlib.import_module(name)


def _still_valid(inputs: list[list], view: TreeView | None, config: Config) -> bool:
    """Every input a cached result was made from still reads the same."""
    for kind, name, value in inputs:
        now = view.current(kind, name) if view is not None else \
            current_config(config, name) if kind == "config" else ("no tree", kind)
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
    got = cache.get(_cache_key(unit, series, view))
    if got is not None and _still_valid(got[1], view, config):
        return Outcome("ran", got[0], True, time.monotonic() - t0)
    return None


def _record_inputs(ctx: PatchContext | SeriesContext, inputs: Inputs) -> None:
    """From here on (in the unit's own process) every value the check reads
    from the config or resolves in the tree is noted in ``inputs``."""
    for c in [ctx] + (ctx.patches if isinstance(ctx, SeriesContext) else []):
        c.config = ConfigView(c.config, inputs)
    if ctx.tree is not None:
        ctx.tree.inputs = inputs


def checked(unit: Unit) -> tuple[list[Finding], list[list]]:
    """Run one unit's check (in the unit's own process): its findings,
    stamped with its id, and the inputs it read."""
    inputs = Inputs()
    _record_inputs(unit.ctx, inputs)
    unit.ctx.check_id = unit.check.id   # this process's own copy: for ctx.ask
    got = [replace(f, check=unit.check.id) for f in (unit.check.run(unit.ctx) or [])]
    return got, inputs.items()


def _patch_of(unit: Unit) -> int:
    return unit.ctx.n if isinstance(unit.ctx, PatchContext) else 0


def timed_out(unit: Unit, budget: float) -> Outcome:
    """The outcome of a unit still running when its budget ran out."""
    n = _patch_of(unit)
    where = f" on patch {n}" if n else ""
    return Outcome("timeout", [Finding(
        check=unit.check.id, severity=Severity.WARNING, patch=n,
        message=f"check timed out{where}: still running after {budget:g} s and stopped; "
                "its result is missing from this report",
        hint="raise napipatch.check-timeout, or report a check this slow to napipatch")],
        False, budget, f"ran past {budget:g} s")


def outcome_of(unit: Unit, ended: Ended, budget: float) -> Outcome:
    """What the engine reports for a unit that ran in its own process."""
    n = _patch_of(unit)
    if ended.how == "ok":
        return Outcome("ran", ended.value[0], False, ended.seconds)
    if ended.how == "timeout":
        return timed_out(unit, budget)
    if ended.how == "raised" and ended.env_error:
        # Bad input or an environment the check cannot work in: not a bug,
        # but no result either.
        return Outcome("error", [Finding(
            check=unit.check.id, severity=Severity.WARNING, patch=n,
            message=f"could not run: {ended.error}",
            hint="fix the environment (the line says what is missing) and check again")],
            False, ended.seconds, ended.error)
    what = "crashed" if ended.how == "raised" else "died"
    return Outcome("crashed", [Finding(
        check=unit.check.id, severity=Severity.WARNING, patch=n,
        message=f"check {what}: {ended.error}", hint="report this to napipatch",
        details=ended.trace)], False, ended.seconds, f"{what}: {ended.error}")


def run_units(units: list[Unit], series: Series, view: TreeView | None, config: Config,
              cache: ResultCache) -> list[Outcome]:
    """Every unit's outcome, in order: settled ones without running, the
    rest each in a forked process within ``napipatch.check-timeout``."""
    outcomes: list[Outcome | None] = [settled(u, series, view, config, cache) for u in units]
    todo = [i for i, o in enumerate(outcomes) if o is None]
    budget = config.check_timeout
    _preload([units[i].check for i in todo])

    def store(k: int, ended: Ended) -> None:
        i = todo[k]
        outcomes[i] = outcome_of(units[i], ended, budget)
        if ended.how == "ok" and cache.enabled:
            cache.put(_cache_key(units[i], series, view), *ended.value)

    run_forked([functools.partial(checked, units[i]) for i in todo], max(1, config.jobs),
               budget, on_end=store)
    return outcomes


def result_of(check: CheckInfo, outcomes: list[Outcome]) -> CheckResult:
    """One check's status from the outcomes of its units."""
    found = [f for o in outcomes for f in o.findings]
    seconds = round(sum(o.seconds for o in outcomes), 3)
    states = {o.state for o in outcomes}
    skipped = next((o for o in outcomes if o.state == "skipped"), None)
    if skipped:
        return CheckResult(check.id, "skipped", 0.0, reason=skipped.reason, nipa=check.nipa)
    for state in ("crashed", "timeout", "error"):
        if state in states:
            first = next(o for o in outcomes if o.state == state)
            return CheckResult(check.id, state, seconds, reason=first.reason, nipa=check.nipa)
    return CheckResult(check.id, status_of(found), seconds,
                       cached=bool(outcomes) and all(o.cached for o in outcomes),
                       reason="some patches did not apply" if "partial" in states else "",
                       nipa=check.nipa)


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
               progress=None, applied: Applied | None = None,
               branch: str | None = None) -> Report:
    """Check ``series``; with ``tree`` (or an ``applied`` series) the tree checks too.

    ``branch``: the branch the series is meant for (``--base``, the bot's
    branch); "behind" is measured against it. Defaults to ``base``.
    """
    check_size(series)
    registered = discover()
    checks = select(registered, only, skip)
    with _zygotes(checks, series, config):
        if applied is None and tree is not None:
            applied = apply_series(series, config, tree, base, use_cache)
        units, outcomes = _run_all(series, config, checks, applied, use_cache, branch or base)
    report = Report(series=series, tree=str(applied.repo) if applied else None,
                    base=applied.base if applied else None,
                    base_why=applied.base_why if applied else "no tree",
                    coverage=coverage(registered.values()))
    said: set[tuple[int, str]] = set()
    for check in checks:
        mine = [o for u, o in zip(units, outcomes) if u.check is check]
        result = result_of(check, mine)
        if check.nipa_needs_tree and applied is None:
            result.nipa_unknown = "needs --tree"  # for NIPA's rule
        report.add(result, unique(_once(mine, said)))
        if progress:
            progress(result)
    for b in ([] if only else load().broken):
        report.add(*_broken_result(b))
    report.findings.sort(key=lambda f: f.sort_key)
    return report


def _run_all(series: Series, config: Config, checks: list[CheckInfo], applied: Applied | None,
             use_cache: bool, branch: str | None) -> tuple[list[Unit], list[Outcome]]:
    """Every unit of ``checks`` on ``series`` (on the ``applied`` commits
    when there are some) and its outcome."""
    with _scratch(config, use_cache or applied is None) as scratch:
        view = TreeView(repo=applied.repo, applied=applied, config=config, use_cache=use_cache,
                        branch_name=branch, scratch=scratch) \
            if applied is not None else None
        pctx = [PatchContext(series=series, n=i, mail=m, config=config, tree=view)
                for i, m in enumerate(series.patches, 1)]
        sctx = SeriesContext(series=series, config=config, patches=pctx, tree=view)
        units = plan(checks, view, pctx, sctx)
        try:
            if view is not None and any(u.ctx is not None for u in units):
                # Exported once here, before the units fork, so they share it.
                view.scripts  # noqa: B018
            return units, run_units(units, series, view, config,
                                    ResultCache(config.cache if use_cache else None))
        finally:
            if view:
                view.close()


def coverage(checks) -> dict[str, list[str]]:
    """NIPA context -> the ids of the checks that declare it."""
    out: dict[str, list[str]] = {}
    for c in checks:
        for name in c.nipa:
            out.setdefault(name, []).append(c.id)
    return out


def _once(outcomes: list[Outcome], said: set[tuple[int, str]]) -> list[Finding]:
    """The findings of ``outcomes``, where a reason several checks could not
    run for (one unreadable diff stops every check that reads it) is said
    once, by the first of them; each check's status still names it."""
    out = []
    for o in outcomes:
        for f in o.findings:
            if o.state == "error":
                if (f.patch, f.message) in said:
                    continue
                said.add((f.patch, f.message))
            out.append(f)
    return out


def _broken_result(b: Broken) -> tuple[CheckResult, list[Finding]]:
    """A module in checks/ that declares no valid check: a check that never
    ran, so the verdict is not clean while it is missing."""
    return (CheckResult(b.id, "crashed", 0.0, reason=f"{b.module}: {b.reason}"),
            [Finding(check=b.id, severity=Severity.WARNING, patch=0,
                     message=f"{b.module} is not a valid check: {b.reason}",
                     hint="report this to napipatch (a broken check module)")])


@contextlib.contextmanager
def _scratch(config: Config, needless: bool):
    """A directory the forked units of one --no-cache run share, removed after."""
    if needless:
        yield None
        return
    d = Path(tempfile.mkdtemp(prefix="run-", dir=config.cache))
    try:
        yield d
    finally:
        shutil.rmtree(d, ignore_errors=True)
