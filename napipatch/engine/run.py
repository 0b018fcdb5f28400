"""Running the checks: series -> applied commits -> checks -> findings.

Patch checks run once per patch (after it is applied), series checks once
at the end; independent runs go to a thread pool (the checks mostly wait
on perl, python and git subprocesses). Each result is cached under a key
made of the check's id and version, the base commit and the diffs of the
patches up to the one checked, so re-checking an unchanged series is
near instant.
"""

from __future__ import annotations

import hashlib
import json
import time
import traceback
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from napipatch.tree import gitutil
from napipatch.tree.apply import OUTSIDE, Applied, apply_in_index
from napipatch.config import Config
from napipatch.engine.context import PatchContext, SeriesContext, TreeView
from napipatch.report.findings import Finding, Severity
from napipatch.engine.registry import CheckInfo, discover, select
from napipatch.mails.series import Series


@dataclass
class CheckResult:
    id: str
    status: str  # pass | warn | fail | info | skipped | crashed
    seconds: float
    cached: bool = False
    reason: str = ""


@dataclass
class Report:
    series: Series
    tree: str | None
    base: str | None
    base_why: str
    findings: list[Finding] = field(default_factory=list)
    checks: list[CheckResult] = field(default_factory=list)

    @property
    def errors(self) -> int:
        return sum(f.severity is Severity.ERROR for f in self.findings)

    @property
    def warnings(self) -> int:
        return sum(f.severity is Severity.WARNING for f in self.findings)

    @property
    def exit_code(self) -> int:
        return 1 if self.errors else 0


def _status(findings: list[Finding]) -> str:
    sev = {f.severity for f in findings}
    if Severity.ERROR in sev:
        return "fail"
    if Severity.WARNING in sev:
        return "warn"
    return "info" if sev else "pass"


class ResultCache:
    def __init__(self, root: Path | None):
        self.root = root / "results" if root else None

    def get(self, key: str) -> list[Finding] | None:
        if not self.root:
            return None
        f = self.root / key[:2] / f"{key}.json"
        try:
            return [Finding.from_json(d) for d in json.loads(f.read_text())]
        except (OSError, ValueError, TypeError, KeyError):
            return None

    def put(self, key: str, findings: list[Finding]) -> None:
        if not self.root:
            return
        d = self.root / key[:2]
        d.mkdir(parents=True, exist_ok=True)
        tmp = d / f".{key}.tmp"
        tmp.write_text(json.dumps([f.to_json() for f in findings]))
        tmp.replace(d / f"{key}.json")


def _key(check: CheckInfo, series: Series, upto: int, base: str | None, extra: str) -> str:
    h = hashlib.sha256()
    h.update(f"{check.id}\0{check.fingerprint}\0{base or 'notree'}\0{upto}\0{extra}\0".encode())
    mails = ([series.cover] if series.cover else []) + series.patches[:upto]
    for m in mails:
        h.update(m.subject.raw.encode() + b"\0" + m.body.encode() + b"\0" + m.author.encode())
    return h.hexdigest()


def run_checks(series: Series, config: Config, tree: Path | None = None,
               base: str | None = None, only: list[str] | None = None,
               skip: list[str] | None = None, use_cache: bool = True,
               progress=None) -> Report:
    checks = select(discover(), only, skip)
    applied: Applied | None = None
    view: TreeView | None = None
    report = Report(series=series, tree=None, base=None, base_why="no tree")
    if tree is not None:
        repo = gitutil.require_repo(tree)
        applied = apply_in_index(repo, series, base,
                                 cache=config.cache if use_cache else None)
        view = TreeView(repo=repo, applied=applied, config=config, use_cache=use_cache)
        report.tree, report.base, report.base_why = str(repo), applied.base, applied.base_why
        if (not only or "apply" in only) and "apply" not in (skip or []):
            report.checks.append(CheckResult("apply", "fail" if applied.failure else "pass", 0.0))
            if applied.failure:
                fl = applied.failure
                report.findings.append(Finding(
                    check="apply", severity=Severity.ERROR, patch=fl.patch,
                    message=str(fl), file=fl.file, line=fl.line,
                    hint="do not apply it: a path outside the tree is never legitimate"
                    if fl.reason == OUTSIDE else
                    f"rebase the series onto {applied.base[:12]} ({applied.base_why}), "
                    "or pass --base with the commit it was made on"))
    cache = ResultCache(config.cache if use_cache else None)
    pctx = [PatchContext(series=series, n=i, mail=m, config=config, tree=view)
            for i, m in enumerate(series.patches, 1)]
    sctx = SeriesContext(series=series, config=config, patches=pctx, tree=view)
    extra = config.checkpatch_ignore

    # The unit of work is one check on one patch (or on the series), so a
    # slow check's patches spread over the pool instead of queueing in one
    # thread behind each other.
    units: list[tuple[CheckInfo, PatchContext | SeriesContext | None]] = []
    for check in checks:
        if check.needs in ("scripts", "tree", "build") and view is None:
            units.append((check, None))
        elif check.needs == "build":
            units.append((check, None))
        else:
            units += [(check, ctx) for ctx in (pctx if check.scope == "patch" else [sctx])]
    # Patch by patch, and within a patch the checks that read the whole tree
    # first: the long units start early and those sharing a one-time cost
    # (a grep of the base) do not all wait on it at once.
    rank = {"tree": 0, "scripts": 1, "build": 2, "diff": 3}
    units.sort(key=lambda u: (u[1].n if isinstance(u[1], PatchContext) else 10**6,
                              rank.get(u[0].needs, 3)))

    def one(unit) -> tuple[str, list[Finding], bool, float]:
        """(state, findings, cached, seconds); state is ran|partial|crashed|skip:<why>."""
        check, ctx = unit
        t0 = time.monotonic()
        if ctx is None:
            why = "needs --tree" if view is None else "needs a build (napipatch test)"
            return f"skip:{why}", [], False, 0.0
        if view is not None and check.needs == "tree":
            if (isinstance(ctx, PatchContext) and not ctx.applied) or \
                    (isinstance(ctx, SeriesContext) and ctx.tip is None):
                return "partial", [], True, 0.0
        upto = ctx.n if isinstance(ctx, PatchContext) else len(series.patches)
        tkey = (view.applied.base if view else None)
        if view is not None and isinstance(ctx, PatchContext) and not ctx.applied:
            tkey = f"{tkey}-unapplied"
        key = _key(check, series, upto, tkey,
                   extra + (f"\0{upto}p" if check.scope == "patch" else "\0s"))
        got = cache.get(key)
        if got is not None:
            return "ran", got, True, time.monotonic() - t0
        try:
            got = [_stamp(check.id, f) for f in (check.run(ctx) or [])]
        except Exception as exc:  # a check's bug must not hide the others
            n = ctx.n if isinstance(ctx, PatchContext) else 0
            return "crashed", [Finding(
                check=check.id, severity=Severity.WARNING, patch=n,
                message=f"check crashed: {type(exc).__name__}: {exc}",
                hint="report this to napipatch", details=traceback.format_exc(limit=3))], \
                False, time.monotonic() - t0
        cache.put(key, got)
        return "ran", got, False, time.monotonic() - t0

    jobs = max(1, int(config.jobs or 1))
    try:
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            results = list(zip(units, pool.map(one, units)))
    finally:
        if view:
            view.close()
    for check in checks:
        mine = [r for (c, _), r in results if c is check]
        found = [f for _, fs, _, _ in mine for f in fs]
        seconds = round(sum(s for *_, s in mine), 3)
        states = {st for st, *_ in mine}
        skip = next((st for st in states if st.startswith("skip:")), None)
        if skip:
            result = CheckResult(check.id, "skipped", 0.0, reason=skip.removeprefix("skip:"))
        elif "crashed" in states:
            result = CheckResult(check.id, "crashed", seconds)
        else:
            result = CheckResult(check.id, _status(found), seconds,
                                 cached=all(c for _, _, c, _ in mine) and bool(mine),
                                 reason="some patches did not apply" if "partial" in states
                                 else "")
        report.checks.append(result)
        report.findings += found
        if progress:
            progress(result)
    report.findings.sort(key=lambda f: f.sort_key)
    return report


def _stamp(check_id: str, f: Finding) -> Finding:
    from dataclasses import replace
    return replace(f, check=check_id)
