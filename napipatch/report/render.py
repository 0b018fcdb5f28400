"""Rendering a Report: text (``FILE:LINE:`` first, like gcc and checkpatch
--showfile), markdown (for bots/CI), json, terse and b4-review (for b4).
Every format but terse carries the NIPA forecast (``report.forecast``).
Two parts of text for the sendemail-validate hook: ``lines`` (the finding
lines and what was not checked) and ``forecast`` (the forecast alone).

The findings of a check declared with a ``group`` (``netdev process``:
napipatch's own posting rules, no NIPA test) are shown apart, after the
others, under the group's name (``grouped``).

All text goes through templates/; the JSON schema is documented in
docs/json-report.md and kept stable.
"""

from __future__ import annotations

import json
from functools import lru_cache

import jinja2

from napipatch.report.findings import Finding
from napipatch.report.forecast import Cell, forecast, table
from napipatch.report.model import GROUPS, Report
from napipatch.report.status import Status

_COLOURS = {"error": "\x1b[1;31m", "warning": "\x1b[1;33m", "info": "\x1b[36m"}


def to_data(report: Report) -> dict:
    s = report.series
    fc = forecast(report)
    return {
        "series": {
            "name": s.name,
            "version": s.version,
            "title": s.title,
            "source": s.source,
            "patches": [{"number": i, "subject": m.subject.raw,
                         "nipa": {k: c.to_json() for k, c in cells.items()}}
                        for i, (m, cells) in enumerate(zip(s.patches, fc), 1)],
            "base-commit": s.base_commit,
        },
        "tree": report.tree,
        "base": report.base,
        "base_why": report.base_why,
        "findings": [f.to_json() for f in report.findings],
        "checks": [{"id": c.id, "status": c.status, "seconds": c.seconds,
                    "cached": c.cached, "reason": c.reason, "nipa": list(c.nipa),
                    "group": c.group}
                   for c in report.checks],
        "summary": {"errors": report.errors, "warnings": report.warnings,
                    "infos": len(report.findings) - report.errors - report.warnings,
                    "fixable": sum(f.fixable for f in report.findings),
                    "fix_commands": fix_commands(report.findings),
                    "planned": len(report.planned), "completed": len(report.completed),
                    "incomplete": [{"id": c.id, "status": c.status, "reason": c.reason}
                                   for c in report.incomplete],
                    "verdict": report.verdict, "exit_status": report.exit_code,
                    "line": report.completion_line()},
    }


def fix_commands(findings) -> list[str]:
    """The commands that fix the fixable findings: ``napipatch fix`` (the
    static checks), and with ``--only`` the job checks it runs only when
    named (a build takes minutes)."""
    fixable = [f for f in findings if f.fixable]
    jobs = sorted({f.fix["only"] for f in fixable if f.fix.get("only")})
    return (["napipatch fix"] if any(not f.fix.get("only") for f in fixable) else []) + \
        ([f"napipatch fix --only {','.join(jobs)}"] if jobs else [])


def render_b4_series(report: Report, series_checks: set[str]) -> str:
    """b4 review's JSON for the cover letter's row (the series command)."""
    return json.dumps(b4_review_series(report, forecast(report), series_checks), indent=1) + "\n"


def grouped(data: dict, findings: list[dict] | None = None
            ) -> tuple[list[dict], list[dict]]:
    """``findings`` (the report's by default) split by their check's group:
    the ungrouped ones, and ``{"name", "about", "findings"}`` for each group
    that has some, in ``GROUPS`` order."""
    findings = data["findings"] if findings is None else findings
    group = {c["id"]: c.get("group", "") for c in data["checks"]}
    plain = [f for f in findings if not group.get(f["check"])]
    groups = [{"name": g, "about": about,
               "findings": [f for f in findings if group.get(f["check"]) == g]}
              for g, about in GROUPS.items() if g]
    return plain, [g for g in groups if g["findings"]]


def render_report(report: Report, fmt: str, colour: bool = False) -> str:
    if fmt == "b4-review":
        return json.dumps(b4_review(report, forecast(report)), indent=1) + "\n"
    data = to_data(report)
    if fmt == "json":
        return json.dumps(data, indent=2) + "\n"
    total = len(report.series.patches)

    def sev(name: str) -> str:
        return f"{_COLOURS[name]}{name}\x1b[0m" if colour else name

    def label(f: dict) -> str:
        return "SERIES" if f["patch"] == 0 else f"PATCH {f['patch']}/{total}"

    def where(f: dict) -> str:
        loc = f["file"] or ""
        if loc and f["line"]:
            loc += f":{f['line']}"
        return f"{label(f)} {loc}:" if loc else f"{label(f)}:"

    def line(f: dict) -> str:
        """One finding as gcc and ``checkpatch --showfile`` write it, so
        editors jump to ``FILE:LINE:``; without a file, the patch leads."""
        # [*]: napipatch fix fixes it, as ruff marks what --fix fixes.
        check = f"[{f['check']}]" + (" [*]" if f.get("fixable") else "")
        if not f["file"]:
            return f"{label(f)}: {sev(f['severity'])}: {check} {f['message']}"
        loc = f"{f['file']}:{f['line']}" if f["line"] else f["file"]
        return f"{loc}: {sev(f['severity'])}: {label(f)} {check} {f['message']}"

    def terse(f: dict) -> str:
        """checkpatch --terse --showfile's form, which b4 reads: a line with
        ERROR: is a failure, any other a warning."""
        loc = f"{f['file']}:{f['line']}: " if f["file"] and f["line"] else \
            f"{f['file']}: " if f["file"] else ""
        return f"{loc}{f['severity'].upper()}: [{f['check']}] {f['message']}"

    template = {"text": "report.txt.j2", "markdown": "report.md.j2",
                "terse": "report.terse.j2", "lines": "report.lines.j2",
                "forecast": "nipa.txt.j2"}[fmt]
    rows = table(forecast(report)) if fmt in ("text", "markdown", "forecast") else []
    plain, groups = grouped(data)
    return render(template, r=data, where=where, line=line, terse=terse, sev=sev, total=total,
                  nipa=rows, findings=plain, groups=groups)


# ----------------------------------------------------------------------
# Jinja2 over templates/ (shipped as napipatch.templates), StrictUndefined.
#
# Filters: ``status_words`` says a check's status as a report does
# (``{{ c.status | status_words }}``: ``timed out``, ``could not run``).


@lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("napipatch.templates", "."),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,
    )
    env.filters["status_words"] = lambda status: Status(status).words
    return env


def render(name: str, **data) -> str:
    return environment().get_template(name).render(**data)


# ----------------------------------------------------------------------
# A report as b4's review CI JSON (``b4.review-perpatch-check-cmd``).
#
# b4 0.15+ (``b4 review``) runs each per-patch check command with the patch
# on stdin and reads a JSON list of ``{"tool", "status": "pass|warn|fail",
# "summary", "url", "details"}`` (b4/review/checks.py); ``details`` may be a
# JSON list of ``{"status", "context", "state", "description"}``, which its
# TUI shows one line each, as it shows patchwork's checks.
#
# Two entries: ``napipatch`` (the findings: fail on an error or when a check
# gave no result, so an unchecked patch never shows as passed; warn on a
# warning) and ``napipatch-nipa`` (the forecast of the netdev CI's patchwork
# checks; pass only when every context is a known success, since an unknown
# one may yet turn red).


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
