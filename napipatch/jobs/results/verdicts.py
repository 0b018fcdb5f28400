"""How build and boot results become findings (on the channels ``STEPS``,
``GUEST`` and ``TESTS``; the remote job puts them on ``HOST``), and the
one-line TAP summaries every job prints. A kernel splat goes on the channel
of the run it came during: ``TESTS`` for a selftest, else ``GUEST``.

Shared by the local jobs, the remote (idpf) job and the bot, so a failed
test reads the same wherever it ran.
"""

from __future__ import annotations

from napipatch.jobs.boot import result as bootmod
from napipatch.jobs.build.builder import Step
from napipatch.jobs.executor import GUEST, OWN, STEPS, TESTS
from napipatch.jobs.results import netstate
from napipatch.jobs.results import splats as splatmod
from napipatch.jobs.results.selftests import CaseResult
from napipatch.jobs.results.splats import Splat
from napipatch.jobs.results.tap import Result
from napipatch.report.findings import Finding, Severity
from napipatch.report.status import NipaState


def tap_lines(tests: list[Result]) -> str:
    """The plan's TAP results, one line a test."""
    return "\n".join(f"{t.status:6} {t.n:2} - {t.description}"
                     + (f"  ({t.reason})" if t.reason else "") for t in tests)


def _counts(statuses: list[str]) -> str:
    """``N ok, N skip, N not ok`` (and ``N xfail`` when there are any)."""
    shown = ("ok", "skip", "not ok") + (("xfail",) if "xfail" in statuses else ())
    return ", ".join(f"{statuses.count(s)} {s}" for s in shown)


def tap_counts(tests: list[Result]) -> str:
    return _counts([t.status for t in tests])


def step_findings(target: str, steps: list[Step]) -> list[Finding]:
    out: list[Finding] = []
    prev_errors: set[str] = set()
    broken_since: int | None = None
    for s in steps:
        who = "the base" if s.patch == 0 else "this patch"
        if not s.ok:
            keys = {d.key for d in s.errors}
            new = [d for d in s.errors if d.key not in prev_errors]
            if new or broken_since is None:
                first = (new or s.errors)[0]
                out.append(Finding(
                    check=STEPS, severity=Severity.ERROR, patch=s.patch,
                    file=first.file, line=first.line,
                    message=f"{who} does not build for {target}: {_short(first.text)}",
                    hint=f"full log: {s.log}",
                    details=s.error_excerpt or "\n".join(d.text for d in s.errors[:20])))
                broken_since = s.patch
            else:
                out.append(Finding(
                    check=STEPS, severity=Severity.INFO, patch=s.patch,
                    message=f"still does not build for {target} (same errors as since "
                            f"{'the base' if broken_since == 0 else f'patch {broken_since}'})",
                    hint=f"full log: {s.log}"))
            prev_errors = keys
        else:
            prev_errors, broken_since = set(), None
        if s.patch == 0:
            continue  # the base's own warnings are the baseline, not findings
        for d in s.new_warnings[:20]:
            out.append(Finding(check=STEPS, severity=Severity.WARNING, patch=s.patch,
                               file=d.file, line=d.line,
                               message=f"new compiler warning ({target}): {_short(d.text)}",
                               details=d.text, hint=f"full log: {s.log}"))
        if len(s.new_warnings) > 20:
            out.append(Finding(check=STEPS, severity=Severity.WARNING, patch=s.patch,
                               message=f"{len(s.new_warnings) - 20} more new warnings ({target})",
                               hint=f"full log: {s.log}"))
        for m in s.missing:
            out.append(Finding(check=STEPS, severity=Severity.ERROR, patch=s.patch, file=m,
                               message=f"{m} was not built for {target}",
                               hint="the target's must-build objects are missing after make"))
        for c in s.config_lost:
            out.append(Finding(check=STEPS, severity=Severity.WARNING, patch=s.patch,
                               message=f"{target} config lost {c} after this patch",
                               hint="a Kconfig change dropped an option the target needs"))
    return out


def _short(text: str) -> str:
    for sep in (" error: ", " warning: "):
        if sep in text:
            return text.split(sep, 1)[1]
    return text


def boot_findings(target: str, res: bootmod.BootResult, patch: int) -> list[Finding]:
    out: list[Finding] = []
    for t in res.failed:
        detail = "\n".join(t.after) if t.after else res.excerpt(t.line.strip())
        # napipatch's own plan: no test of NIPA's contest
        out.append(Finding(check=GUEST, severity=Severity.ERROR, patch=patch,
                           message=f"{target}: test failed: {t.description}"
                                   + (f" ({t.reason})" if t.reason else ""),
                           hint=f"console log: {res.console_log}", details=detail, nipa={}))
    if not res.finished:
        why = (f"timed out after {res.seconds:.0f} s" if res.timed_out
               else "the guest stopped before the plan finished")
        splat = bootmod.splat(res.console)
        out.append(Finding(check=GUEST, severity=Severity.ERROR, patch=patch,
                           message=f"{target}: test plan did not finish: {why}"
                                   + (f" ({splat})" if splat else ""),
                           hint=f"console log: {res.console_log}",
                           details=res.excerpt(splat) if splat else res.excerpt()))
    elif res.plan_rc and not res.failed:
        out.append(Finding(check=GUEST, severity=Severity.ERROR, patch=patch,
                           message=f"{target}: test plan exited with status {res.plan_rc}",
                           hint=f"console log: {res.console_log}", details=res.excerpt(),
                           nipa={}))
    return out




def selftest_counts(cases: list[CaseResult]) -> str:
    return _counts([c.status for c in cases])


def selftest_lines(cases: list[CaseResult]) -> str:
    """One line a case: ``status  name  (reason)``."""
    return "\n".join(f"{c.status:6} {c.name}" + (f"  ({c.reason})" if c.reason else "")
                     for c in cases)


# What a case's outcome is in NIPA's contest (contest/remote/lib/results.py):
# a skipped case makes its program "skip", which pw_contest.py posts as warning.
CONTEST = {"ok": NipaState.SUCCESS, "xfail": NipaState.SUCCESS, "skip": NipaState.WARNING}


def failed_lead(target: str, name: str) -> str:
    """How the finding of a case that failed at the tip begins (the bot's
    memory finds a case's finding by it)."""
    return f"{target}: selftest {name} failed at "


def selftest_findings(target: str, cases: list[CaseResult], at: int, commit: str,
                      on_base: set[str] | None, console_log: str, base_note: str = "",
                      missing: list[str] | None = None, not_run: list[str] | None = None,
                      leaks: dict[str, list[str]] | None = None) -> list[Finding]:
    """The selftests (``TESTS``): an error a case that fails at the tip (``at``: the
    patch it ran at) twice, info when the base fails it too, info when it
    failed once and passed on the retry (flaky; NIPA's contest: a warning),
    an error a program that leaves netdev state behind (``leaks``; info when
    the base leaks the same), info for the rest."""
    out: list[Finding] = []
    where = f"patch {at} ({commit[:12]})" if at else f"the base ({commit[:12]})"
    for c in cases:
        why = f": {c.reason}" if c.reason else ""
        if c.flaky:
            out.append(Finding(check=TESTS, severity=Severity.INFO, patch=at,
                               message=f"{target}: selftest {c.name} flaky at {where}: {c.flaky}",
                               hint=f"console log: {console_log}; NIPA's contest posts a "
                                    "failure when its first run fails (its retry shows as a flake)",
                               details=c.excerpt, nipa={OWN: NipaState.WARNING}))
        elif c.status != "not ok":
            out.append(Finding(check=TESTS, severity=Severity.INFO, patch=at,
                               message=f"{target}: selftest {c.name} {c.status}{why}",
                               details=c.excerpt, nipa={OWN: CONTEST[c.status]}))
        elif on_base is not None and c.name in on_base:
            # NIPA fails it too, unless its filters (not public) ignore the test
            out.append(Finding(check=TESTS, severity=Severity.INFO, patch=at,
                               message=f"{failed_lead(target, c.name)}{where}{why}: "
                                       "already failing on base",
                               hint=f"console log: {console_log}", details=c.excerpt,
                               nipa={OWN: NipaState.UNKNOWN}))
        else:
            base = f" (not compared with the base: {base_note})" if base_note else ""
            out.append(Finding(check=TESTS, severity=Severity.ERROR, patch=at,
                               message=f"{failed_lead(target, c.name)}{where}{why}{base}",
                               hint=f"console log: {console_log}", details=c.excerpt))
    for test, items in (leaks or {}).items():
        new = [x for x in items if on_base is None or netstate.key(test, x) not in on_base]
        old = [x for x in items if x not in new]
        base = f" (not compared with the base: {base_note})" if base_note and new else ""
        if new:
            out.append(Finding(check=TESTS, severity=Severity.ERROR, patch=at,
                               message=f"{target}: selftest {test} left netdev state changed at "
                                       f"{where}: {'; '.join(new[:3])}"
                                       + (f" (+{len(new) - 3} more)" if len(new) > 3 else "") + base,
                               hint="a test must undo what it sets up (NIPA's env check fails it); "
                                    f"console log: {console_log}",
                               details="\n".join(new)))
        if old:
            out.append(Finding(check=TESTS, severity=Severity.INFO, patch=at,
                               message=f"{target}: selftest {test} left netdev state changed at "
                                       f"{where}: {'; '.join(old[:3])}: already so on base",
                               details="\n".join(old)))
    for name in missing or []:
        out.append(Finding(check=TESTS, severity=Severity.INFO, patch=at,
                           message=f"{target}: selftest {name} not run: not in this tree",
                           nipa={}))
    for name in not_run or []:
        out.append(Finding(check=TESTS, severity=Severity.INFO, patch=at,
                           message=f"{target}: selftest {name} not run: the guest stopped "
                                   "before it", hint=f"console log: {console_log}", nipa={}))
    return out


def splat_findings(target: str, found: list[Splat], at: int, commit: str,
                   on_base: set[str] | None, console_log: str, base_note: str = ""
                   ) -> list[Finding]:
    """An error each kernel splat at the tip (``at``: the patch it ran at),
    on the selftest it came during (``TESTS``) or the boot or plan
    (``GUEST``), at its first frame's FILE:LINE; info when the base
    shows the same splat (``on_base``: fingerprints), whether the test
    printed ok or not."""
    out: list[Finding] = []
    where = f"patch {at} ({commit[:12]})" if at else f"the base ({commit[:12]})"
    for s in found:
        test = s.during not in (splatmod.BOOT, splatmod.PLAN)
        what = f"selftest {s.during}" if test else \
            "the test plan" if s.during == splatmod.PLAN else "the boot"
        head = f"{target}: kernel {s.kind} splat during {what} at {where}: {s.title[:160]}"
        frames = f"first frames: {' < '.join(s.frames[:3])}" if s.frames else "no frames"
        hint = f"{frames}; console log: {console_log}"
        if not s.added and on_base is not None and s.fingerprint in on_base:
            out.append(Finding(check=TESTS if test else GUEST, severity=Severity.INFO,
                               patch=at, file=s.file, line=s.line, hint=hint, details=s.excerpt(),
                               message=f"{head} (first frame {s.where}): pre-existing, the "
                                       "base shows the same splat"))
            continue
        base = " (a line this series adds)" if s.added else \
            f" (not compared with the base: {base_note})" if base_note else ""
        out.append(Finding(check=TESTS if test else GUEST, severity=Severity.ERROR,
                           patch=at, file=s.file, line=s.line, hint=hint, details=s.excerpt(),
                           message=f"{head} (first frame {s.where}){base}"))
    return out
