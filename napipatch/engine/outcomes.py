"""What a unit of work came to (``Outcome``), and how outcomes become a
check's result: its status, its findings each once, a timed-out or crashed
unit said in a finding, a broken check module reported as a check that
crashed.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from napipatch.engine.forked import Ended
from napipatch.engine.registry import Broken, CheckInfo
from napipatch.report.findings import Finding, Severity
from napipatch.report.model import INCOMPLETE, CheckResult, status_of


@dataclass
class Outcome:
    state: str  # ran | partial | skipped | crashed | timeout | error
    findings: list[Finding]
    cached: bool
    seconds: float
    reason: str = ""


def timed_out(check: str, n: int, budget: float) -> Outcome:
    """The outcome of a unit (``check`` on patch ``n``, 0 the series) still
    running when its budget ran out."""
    where = f" on patch {n}" if n else ""
    return Outcome("timeout", [Finding(
        check=check, severity=Severity.WARNING, patch=n,
        message=f"check timed out{where}: still running after {budget:g} s and stopped; "
                "its result is missing from this report",
        hint="raise napipatch.check-timeout, or report a check this slow to napipatch")],
        False, budget, f"ran past {budget:g} s")


def outcome_of(check: str, n: int, ended: Ended, budget: float) -> Outcome:
    """What the engine reports for a unit that ran in its own process."""
    if ended.how == "ok":
        return Outcome("ran", ended.value[0], False, ended.seconds)
    if ended.how == "timeout":
        return timed_out(check, n, budget)
    if ended.how == "raised" and ended.env_error:
        # Bad input or an environment the check cannot work in: not a bug,
        # but no result either.
        return Outcome("error", [Finding(
            check=check, severity=Severity.WARNING, patch=n,
            message=f"could not run: {ended.error}",
            hint="fix the environment (the line says what is missing) and check again")],
            False, ended.seconds, ended.error)
    what = "crashed" if ended.how == "raised" else "died"
    return Outcome("crashed", [Finding(
        check=check, severity=Severity.WARNING, patch=n,
        message=f"check {what}: {ended.error}", hint="report this to napipatch",
        details=ended.trace)], False, ended.seconds, f"{what}: {ended.error}")


def result_of(check: CheckInfo, outcomes: list[Outcome]) -> CheckResult:
    """One check's status from the outcomes of its units."""
    found = [f for o in outcomes for f in o.findings]
    seconds = round(sum(o.seconds for o in outcomes), 3)
    states = {o.state for o in outcomes}
    skipped = next((o for o in outcomes if o.state == "skipped"), None)
    if skipped:
        return CheckResult(check.id, "skipped", 0.0, reason=skipped.reason, nipa=check.nipa,
                           group=check.group)
    for state in INCOMPLETE:   # the most severe first, as the verdict ranks them
        if state in states:
            first = next(o for o in outcomes if o.state == state)
            return CheckResult(check.id, state, seconds, reason=first.reason, nipa=check.nipa,
                               group=check.group)
    return CheckResult(check.id, status_of(found), seconds,
                       cached=bool(outcomes) and all(o.cached for o in outcomes),
                       reason="some patches did not apply" if "partial" in states else "",
                       nipa=check.nipa, group=check.group)


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


def coverage(checks) -> dict[str, list[str]]:
    """NIPA context -> the ids of the checks that declare it."""
    out: dict[str, list[str]] = {}
    for c in checks:
        for name in c.nipa:
            out.setdefault(name, []).append(c.id)
    return out


def once(outcomes: list[Outcome], said: set[tuple[int, str]]) -> list[Finding]:
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


def broken_result(b: Broken) -> tuple[CheckResult, list[Finding]]:
    """A module in checks/ that declares no valid check: a check that never
    ran, so the verdict is not clean while it is missing."""
    return (CheckResult(b.id, "crashed", 0.0, reason=f"{b.module}: {b.reason}"),
            [Finding(check=b.id, severity=Severity.WARNING, patch=0,
                     message=f"{b.module} is not a valid check: {b.reason}",
                     hint="report this to napipatch (a broken check module)")])


