"""What the netdev CI (NIPA) will post to patchwork, forecast from a report.

For each patch and each NIPA context (``report.nipa``): success, warning
or fail with a one-line description, made from the findings of the checks
that answer for the context (``CheckResult.nipa``, from ``@check(nipa=)``).
Each finding counts as its ``Finding.nipa`` says, else as its severity
(error fail, warning warning, info success), so the forecast shows NIPA's
state where napipatch's own severity is lower on purpose. A context gets
the worst state among its findings.

"unknown" where napipatch cannot tell here, never success: no check
answers for the context (``Context.note`` says why), its check was not
selected, was skipped (no ``--tree``), or gave no result (crashed, timed
out, could not run). A fail is certain even then; a warning is not.
Where NIPA does not test a patch at all (no ``.py`` file for ``pylint``),
the cell is NIPA's own success with NIPA's "skip" line. When the series
does not apply, NIPA posts ``apply`` (fail) and runs nothing else. A
report of jobs alone forecasts only the contexts its jobs answer for
(``Report.forecast_scope``).
"""

from __future__ import annotations

from dataclasses import dataclass

from napipatch.report.findings import Finding
from napipatch.report.model import SKIPPED, CheckResult, Report
from napipatch.report.nipa import CONTEXTS, Context, Files, touched
from napipatch.report.status import NipaState

_BY_SEVERITY = {"error": "fail", "warning": "warning", "info": "success"}
_MAX = 200  # characters of a description (patchwork shows one line)


@dataclass(frozen=True)
class Cell:
    state: str        # a NipaState: success | warning | fail | unknown
    description: str

    def to_json(self) -> dict:
        return {"state": self.state, "description": self.description}


def state_of(f: Finding, context: str) -> str | None:
    """What ``f`` means to ``context``: a state, or None (not NIPA's rule)."""
    if f.nipa is None:
        return _BY_SEVERITY[f.severity.value]
    return f.nipa.get(context)


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _MAX else text[:_MAX - 3] + "..."


def _where(f: Finding) -> str:
    if not f.file:
        return ""
    return f"{f.file}:{f.line}: " if f.line else f"{f.file}: "


def _describe(hits: list[tuple[str, Finding]], state: str, scope: str) -> str:
    """``1 fail, 2 warnings: FILE:LINE: message`` for the first worst finding."""
    fails = sum(s == "fail" for s, _ in hits)
    warns = sum(s == "warning" for s, _ in hits)
    counts = ", ".join(p for p in (f"{fails} fail" if fails else "",
                                   f"{warns} warning{'s' * (warns != 1)}" if warns else "") if p)
    first = next(f for s, f in hits if s == state)
    on = f"patch {first.patch}: " if scope == "series" and first.patch else ""
    return _short(f"{counts}: {on}{_where(first)}[{first.check}] {first.message}")


def _check_id(r: CheckResult) -> str:
    """The check a result is of: a per-target job's ``selftest/virtio-net`` is ``selftest``."""
    return r.id.partition("/")[0]


def _findings_of(report: Report, results: list[CheckResult], ctx: Context, n: int,
                 ) -> list[tuple[str, Finding]]:
    ids = {_check_id(r) for r in results}
    out = []
    for f in report.findings:
        if f.check not in ids or (ctx.scope == "patch" and f.patch not in (0, n)):
            continue
        state = state_of(f, ctx.name)
        if state and state != "success":
            out.append((state, f))
    return out


def _missing(results: list[CheckResult], hits: list[tuple[str, Finding]], ctx: Context) -> str:
    """Why some of ``results`` gave no answer ("" when all did); the check
    is named when several answer for the context."""
    why = []
    for r in results:
        who = f"{r.id}: " if len(results) > 1 else ""
        if r.status == SKIPPED:
            why.append(f"{who}not run: {r.reason or 'skipped'}")
        elif not r.completed:
            why.append(f"{who}{r.missing}")
        elif r.nipa_unknown:
            why.append(f"{who}not run: {r.nipa_unknown}")
    done = bool(ctx.partial_by) and any(r.id == ctx.partial_by and r.completed
                                        for r in results)
    why += [ctx.partial or f"{f.check}: {f.message}" for s, f in hits
            if s == "unknown" and not (done and f.check != ctx.partial_by)]
    return "; ".join(dict.fromkeys(why))


def _from_checks(report: Report, ctx: Context, n: int) -> Cell:
    results = [r for r in report.checks if ctx.name in r.nipa]
    if not results:
        ids = report.coverage.get(ctx.name)
        if ids:
            return Cell("unknown", f"not run here: {', '.join(ids)} not selected "
                                   f"(--only {','.join(ids)})")
        return Cell("unknown", ctx.note or "napipatch has no check for it")
    hits = _findings_of(report, results, ctx, n)
    worst = max((s for s, _ in hits if s != "unknown"), key=lambda s: NipaState(s).rank,
                default="success")
    missing = _missing(results, hits, ctx)
    if worst == "fail" or not missing:
        if worst == "success":
            return Cell("success", f"no findings ({', '.join(r.id for r in results)})")
        return Cell(worst, _describe(hits, worst, ctx.scope))
    return Cell("unknown", _short(missing))


def _apply_cell(report: Report, ctx: Context, n: int) -> Cell | None:
    cell = _from_checks(report, ctx, n)
    if cell.state == "fail":
        return Cell("fail", _short("Patch does not apply: " + cell.description.split(": ", 1)[-1]))
    return None if cell.state == "success" else cell


def _contest(report: Report, ctx: Context, n: int) -> Cell:
    """NIPA's contest, from the guest's selftests (and KUnit): a test's
    finding says its contest state (``Finding.nipa``: success when it
    passed, warning when it skipped); other findings count by severity. A
    failure is posted as ``pending`` (pw_contest.py), which the description
    says; with no test run, unknown."""
    got = _from_checks(report, ctx, n)
    ids = {_check_id(r) for r in report.checks if ctx.name in r.nipa}
    ran = [f for f in report.findings if f.check in ids and f.nipa and ctx.name in f.nipa]
    if got.state == "fail":
        return Cell("fail", _short("patchwork shows pending (NIPA posts a contest failure as "
                                   "pending): " + got.description))
    if got.state == "unknown":
        return got
    if not ran:
        return Cell("unknown", "no selftest or KUnit case ran here (a guest with selftests: "
                               "napipatch test boot)")
    if got.state == "warning":
        return Cell("warning", _short("patchwork shows warning: " + got.description))
    names = sorted(r.id for r in report.checks if ctx.name in r.nipa)
    return Cell("success", f"{len(ran)} test case{'s' * (len(ran) != 1)} passed "
                           f"({', '.join(names)})")


def _tree_selection(report: Report) -> Cell:
    tree = report.series.tree
    if tree:
        return Cell("success", f"Clearly marked for {tree}")
    return Cell("success", "no tree tag: NIPA guesses the tree (net when it is a fix that "
                           "applies there, else net-next)")


def cell(report: Report, ctx: Context, n: int, files: Files | None,
         stopped: bool) -> Cell | None:
    """The forecast of ``ctx`` on patch ``n``; None when NIPA posts nothing."""
    if ctx.name == "apply":
        return _apply_cell(report, ctx, n)
    if ctx.name == "tree_selection":
        return _tree_selection(report)
    if stopped:
        return Cell("unknown", "not posted: NIPA stops when the series does not apply")
    if ctx.name == "contest":
        return _contest(report, ctx, n)
    skip = ctx.skip(files) if ctx.skip and files is not None else ""
    if skip:
        return Cell("success", skip)
    got = _from_checks(report, ctx, n)
    return got if got.state != "success" or ctx.on_success else None


def forecast(report: Report) -> list[dict[str, Cell]]:
    """Per patch (index 0 is patch 1): {context: Cell} in CONTEXTS' order."""
    apply_ctx = next(c for c in CONTEXTS if c.name == "apply")
    out = []
    for n, mail in enumerate(report.series.patches, 1):
        stopped = (_apply_cell(report, apply_ctx, n) or Cell("", "")).state == "fail"
        files = touched(mail)
        row = {}
        for ctx in CONTEXTS:
            if report.forecast_scope is not None and ctx.name not in report.forecast_scope:
                continue
            got = cell(report, ctx, n, files, stopped)
            if got is not None:
                row[ctx.name] = got
        out.append(row)
    return out


_MARK = {"success": "s", "warning": "w", "fail": "F", "unknown": "?"}


@dataclass(frozen=True)
class Row:
    """One line of the compact table: the contexts that share these marks
    (one per patch) and this note."""

    marks: str
    contexts: tuple[str, ...]
    note: str


def _note(cells: list[Cell | None]) -> str:
    """The descriptions of the non-success cells, once each."""
    notes: dict[str, list[int]] = {}
    for n, c in enumerate(cells, 1):
        if c is not None and c.state != "success":
            notes.setdefault(c.description, []).append(n)
    if len(notes) == 1:
        return next(iter(notes))
    return "; ".join(f"patch {','.join(map(str, ns))}: {d}" for d, ns in notes.items())


def table(fc: list[dict[str, Cell]]) -> list[Row]:
    """The forecast as a few rows: all-success contexts on one row, the
    others one row each (merged when marks and note are the same)."""
    names = [c.name for c in CONTEXTS if any(c.name in row for row in fc)]
    good: list[str] = []
    rows: dict[tuple[str, str], list[str]] = {}
    for name in names:
        cells = [row.get(name) for row in fc]
        marks = " ".join(_MARK[c.state] if c else "." for c in cells)
        if all(c is None or c.state == "success" for c in cells):
            good.append(name)
            continue
        rows.setdefault((marks, _note(cells)), []).append(name)
    out = [Row(" ".join("s" for _ in fc), tuple(good), "")] if good else []
    return out + [Row(m, tuple(ns), note) for (m, note), ns in rows.items()]


_WORST = ("fail", "warning", "unknown", "success")
_WORDS = {"fail": "fail", "warning": "warning", "unknown": "not known here", "success": "success"}


def summary(fc: list[dict[str, Cell]]) -> str:
    """The forecast in one line: how many contexts end in each state (a
    context's state is its worst over the patches)."""
    count = dict.fromkeys(_WORST, 0)
    for name in dict.fromkeys(n for row in fc for n in row):
        states = {row[name].state for row in fc if name in row}
        count[next(s for s in _WORST if s in states)] += 1
    parts = [f"{count[s]} {_WORDS[s]}" for s in reversed(_WORST) if count[s]]
    return "NIPA forecast: " + (", ".join(parts) or "nothing")
