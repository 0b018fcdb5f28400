"""The engine reports each identical finding once, whatever the check."""

from __future__ import annotations

from napipatch.engine.statics import unique
from napipatch.report.findings import Finding, Severity


def _f(sev="warning", line=3, message="m", check="c", patch=1, details=""):
    return Finding(check=check, severity=Severity(sev), patch=patch, message=message,
                   file="a.c", line=line, details=details)


def test_identical_findings_once_most_severe_kept():
    got = unique([_f(details="first"), _f("error", details="second"), _f(line=4),
                  _f(check="d"), _f(patch=2), _f(message="n"), _f()])
    assert [(f.check, f.patch, f.line, f.message, f.severity.value, f.details) for f in got] == [
        ("c", 1, 3, "m", "error", "first"), ("c", 1, 4, "m", "warning", ""),
        ("d", 1, 3, "m", "warning", ""), ("c", 2, 3, "m", "warning", ""),
        ("c", 1, 3, "n", "warning", "")]
