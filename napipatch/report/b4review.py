"""A report as b4's review CI JSON (``b4.review-perpatch-check-cmd``).

b4 0.15+ (``b4 review``) runs each per-patch check command with the patch
on stdin and reads a JSON list of ``{"tool", "status": "pass|warn|fail",
"summary", "url", "details"}`` (b4/review/checks.py); ``details`` may be a
JSON list of ``{"status", "context", "state", "description"}``, which its
TUI shows one line each, as it shows patchwork's checks.

Two entries: ``napipatch`` (the findings: fail on an error or when a check
gave no result, so an unchecked patch never shows as passed; warn on a
warning) and ``napipatch-nipa`` (the forecast of the netdev CI's patchwork
checks; pass only when every context is a known success, since an unknown
one may yet turn red).
"""

from __future__ import annotations

import json

from napipatch.report.findings import Finding
from napipatch.report.forecast import Cell
from napipatch.report.model import Report

# b4's status for a NIPA state (report.status.NipaState), and the states
# most severe first: an unknown context may yet turn red, so above success.
_STATUS = {"success": "pass", "warning": "warn", "fail": "fail", "unknown": "unknown"}
_ORDER = ("fail", "warning", "unknown", "success")
_SEV = {"error": "fail", "warning": "warn", "info": "pass"}


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'s' * (n != 1)}"


def _where(f: Finding, numbered: bool) -> str:
    at = f"{f.file}:{f.line}: " if f.file and f.line else f"{f.file}: " if f.file else ""
    return (f"patch {f.patch}: " if numbered and f.patch else "") + at


def _findings_entry(report: Report, findings: list[Finding], what: str = "this patch",
                    numbered: bool = False) -> dict:
    details = [{"status": _SEV[f.severity.value], "context": f.check,
                "description": _where(f, numbered) + f.message} for f in findings]
    details += [{"status": "fail", "context": c.id,
                 "description": f"{c.missing}; {what} is not fully checked"}
                for c in report.incomplete]
    errors = sum(f.severity.value == "error" for f in findings)
    warnings = sum(f.severity.value == "warning" for f in findings)
    infos = len(findings) - errors - warnings
    if report.incomplete:
        status = "fail"
        summary = report.completion_line()
    elif errors or warnings:
        status = "fail" if errors else "warn"
        summary = ", ".join(p for p in (_plural(errors, "error") if errors else "",
                                        _plural(warnings, "warning") if warnings else "") if p)
    else:
        status = "pass"
        summary = f"passed all {len(report.completed)} checks" + \
            (f" ({_plural(infos, 'info')})" if infos else "")
    return {"tool": "napipatch", "status": status, "summary": summary, "url": "",
            "details": json.dumps(details) if details else ""}


def _forecast_entry(cells: dict[str, Cell]) -> dict:
    counts = {s: sum(c.state == s for c in cells.values()) for s in _ORDER}
    status = "fail" if counts["fail"] else "warn" if counts["warning"] or counts["unknown"] \
        else "pass"
    summary = "NIPA forecast: " + ", ".join(f"{n} {s}" for s, n in counts.items() if n)
    details = [{"status": _STATUS[c.state], "context": name, "state": c.state,
                "description": c.description} for name, c in cells.items()]
    return {"tool": "napipatch-nipa", "status": status, "summary": summary, "url": "",
            "details": json.dumps(details)}


def merged(forecast: list[dict[str, Cell]]) -> dict[str, Cell]:
    """One cell per context for the whole run: the most severe patch's
    (fail, warning, unknown, success), naming the patch when there are several."""
    out: dict[str, Cell] = {}
    for n, row in enumerate(forecast, 1):
        for name, c in row.items():
            have = out.get(name)
            if have is None or _ORDER.index(c.state) < _ORDER.index(have.state):
                where = f"patch {n}: " if len(forecast) > 1 and c.state != "success" else ""
                out[name] = Cell(c.state, where + c.description)
    return out


def b4_review(report: Report, forecast: list[dict[str, Cell]]) -> list[dict]:
    """b4's entries for a run (b4 gives one patch on stdin)."""
    out = [_findings_entry(report, report.findings)]
    if forecast:
        out.append(_forecast_entry(merged(forecast)))
    return out


def b4_review_series(report: Report, forecast: list[dict[str, Cell]],
                     series_checks: set[str]) -> list[dict]:
    """b4's entries for the cover letter's row (``b4.review-series-check-cmd``):
    the series checks' findings (each patch's own are in its row, from the
    per-patch command) and the forecast of the whole series."""
    own = [f for f in report.findings if f.check in series_checks or not f.patch]
    out = [_findings_entry(report, own, "the series", numbered=True)]
    if forecast:
        out.append(_forecast_entry(merged(forecast)))
    return out
