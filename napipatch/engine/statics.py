"""Running the static checks: applied commits -> checks -> findings.

``run_checks`` takes the series as the pipeline applied it
(``napipatch.pipeline``; None: diff-only), plans the units of work (one
check on one patch, or on the series: ``engine.plan``), runs each unit
through the result cache, and aggregates the outcomes into each check's
result and findings (``engine.outcomes``: each identical finding once);
the pipeline makes the report of them and the jobs' (``report.model.build``).
A unit not answered by the cache runs in a process of its own
(``engine.forked``), ``napipatch.jobs`` at a time, with a deadline of
``napipatch.check-timeout`` seconds: past it the unit's whole process
group (its perl, git and Python work) is killed, the check is reported as
``timeout`` with a finding saying so, and the report still comes. A check
that raises NapipatchError could not run here (status ``error``); any
other exception, or a process that dies, is a napipatch bug (``crashed``).
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import shutil
import tempfile
from dataclasses import replace
from pathlib import Path

from napipatch.config import Config
from napipatch.engine import zygote
from napipatch.engine.cache import ResultCache
from napipatch.engine.context import ConfigView, Inputs, PatchContext, SeriesContext, TreeView
from napipatch.engine.forked import Ended, run_forked
from napipatch.engine.outcomes import (
    Outcome,
    broken_result,
    once,
    outcome_of,
    result_of,
    unique,
)
from napipatch.engine.plan import Unit, budget, cache_key, diff_paths, plan, reads, settled
from napipatch.engine.registry import Broken, CheckInfo
from napipatch.mails.hunks import parse_diff
from napipatch.mails.series import Series
from napipatch.report.findings import Finding
from napipatch.report.model import Result
from napipatch.tree.applied import Applied


@contextlib.contextmanager
def warm(checks: list[CheckInfo], series: Series, config: Config):
    """The zygotes of the checks that will have work, started now so they
    warm while the caller applies the series (one core is idle then);
    stopped when the run ends."""
    want = [c for c in checks if c.zygote]
    paths = [diff_paths(m, lambda m=m: parse_diff(m.diff)) for m in series.patches] \
        if want else []
    started = []
    try:
        for c in want:
            if any(reads(c, p) for p in paths):
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


def _record_inputs(ctx: PatchContext | SeriesContext, inputs: Inputs) -> None:
    """From here on (in the unit's own process) every value the check reads
    from the config or resolves in the tree is noted in ``inputs``."""
    for c in [ctx] + (ctx.patches if isinstance(ctx, SeriesContext) else []):
        c.config = ConfigView(c.config, inputs)
        c.inputs = inputs
    if ctx.tree is not None:
        ctx.tree.inputs = inputs


def checked(unit: Unit) -> tuple[list[Finding], list[list]]:
    """Run one unit's check (in the unit's own process): its findings,
    stamped with its id, and the inputs it read."""
    inputs = Inputs()
    _record_inputs(unit.ctx, inputs)
    unit.ctx.check_id = unit.check.id   # this process's own copy: for ctx.ask
    # A netdev process check's findings mean nothing to NIPA (``{}``), whatever it said.
    extra = {"nipa": {}} if unit.check.group else {}
    if not unit.check.fixes:
        extra["fix"] = None     # only a check declaring ``fixes`` fixes
    got = [replace(f, check=unit.check.id, **extra) for f in (unit.check.run(unit.ctx) or [])]
    return got, inputs.items()


def _patch_of(unit: Unit) -> int:
    return unit.ctx.n if isinstance(unit.ctx, PatchContext) else 0


def run_units(units: list[Unit], series: Series, view: TreeView | None, config: Config,
              cache: ResultCache) -> list[Outcome]:
    """Every unit's outcome, in order: settled ones without running, the
    rest each in a forked process within ``napipatch.check-timeout``."""
    outcomes: list[Outcome | None] = [settled(u, series, view, config, cache) for u in units]
    todo = [i for i, o in enumerate(outcomes) if o is None]
    budgets = [budget(units[i].check, config) for i in todo]
    _preload([units[i].check for i in todo])

    def store(k: int, ended: Ended) -> None:
        i = todo[k]
        outcomes[i] = outcome_of(units[i].check.id, _patch_of(units[i]), ended, budgets[k])
        if ended.how == "ok" and cache.enabled:
            cache.put(cache_key(units[i], series, view), *ended.value)

    run_forked([functools.partial(checked, units[i]) for i in todo], max(1, config.jobs),
               budgets, on_end=store)
    return outcomes


def run_checks(series: Series, config: Config, applied: Applied | None,
               checks: list[CheckInfo], *, use_cache: bool = True, progress=None,
               branch: str | None = None, broken: list[Broken] = ()) -> list[Result]:
    """Run ``checks`` on ``series`` as applied (None: diff-only): each
    check's result and findings, in the order of ``checks``, then one
    crashed result per ``broken`` check module (it declares no valid check).

    ``branch``: the branch the series is meant for (``--base``, the bot's
    branch); "behind" is measured against it. The zygotes of ``checks`` are
    the caller's (``warm``), so they warm while it applies.
    """
    units, outcomes = _run_all(series, config, checks, applied, use_cache, branch)
    out: list[Result] = []
    said: set[tuple[int, str]] = set()
    for check in checks:
        mine = [o for u, o in zip(units, outcomes) if u.check is check]
        result = result_of(check, mine)
        if check.nipa_needs_tree and applied is None:
            result.nipa_unknown = "needs --tree"  # for NIPA's rule
        out.append((result, unique(once(mine, said))))
        if progress:
            progress(result)
    return out + [broken_result(b) for b in broken]


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
