"""A vng boot of the series tip with the plan and the kernel selftests, and,
only when a selftest case fails (twice: the guest retries a failed program)
or a program leaks netdev state, a boot of the base running just those
programs (the base's own copies), so a case already failing, or a leak
already there, is told apart from one the series brought.

Runs inside the Builder's lock: the base boot rebuilds the build directory
at the base (the next run builds the tip again, incrementally).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from napipatch.jobs.boot import vng
from napipatch.jobs.boot.result import BootResult
from napipatch.jobs.build.builder import Builder
from napipatch.jobs.results import choose, netstate, selftests
from napipatch.jobs.results.selftests import CaseResult, Selftest
from napipatch.jobs.targets import Target


@dataclass
class GuestRun:
    res: BootResult
    cases: list[CaseResult] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)  # asked for, not in the tree
    # cases failing, and leaks (netstate.key), on the base too (None: not compared)
    on_base: set[str] | None = None
    base_note: str = ""  # why the base was not compared
    chosen: choose.Choice | None = None  # which selftests ran and why

    @property
    def leaks(self) -> dict[str, list[str]]:
        """What each program left behind in the guest's netdev state."""
        return leaks_of(self.res)


def _tests(repo: Path, target: Target, base: str | None, commit: str
           ) -> tuple[list[Selftest], list[str], choose.Choice]:
    """The series' changed selftests, those exercising what it changes, then
    the target's list (choose.py); timeouts capped."""
    chosen = choose.choose(repo, base, commit, target.selftests, limit=target.selftest_related,
                           ignore=target.selftest_ignore)
    tests, missing = selftests.resolve(repo, commit, [c.name for c in chosen.tests])
    cap = target.selftest_max_timeout
    return [Selftest(t.dir, t.prog, min(t.timeout, cap)) for t in tests], missing, chosen


def cases_of(res: BootResult) -> list[CaseResult]:
    hang = res.excerpt(lines=60) if res.timed_out else ""
    return [c for r in res.runs for c in selftests.case_results(r, hang)]


def leaks_of(res: BootResult) -> dict[str, list[str]]:
    return {r.test: r.leaks for r in res.runs if r.leaks}


def boot_tip(b: Builder, kernel: Path, commit: str, base: str | None,
             timeout: float | None, progress) -> GuestRun:
    target = b.target
    tests, missing, chosen = _tests(b.repo, target, base, commit)
    ksrc = selftests.export_tools(b.repo, commit, b.dirs.root / "selftests")
    progress(f"{target.name}: booting {commit[:12]} with vng: plan + "
             f"{len(tests)} selftest{'s' if len(tests) != 1 else ''}")
    res = vng.boot(kernel, target, b.dirs.root, b.dirs.root.parent, ksrc, tests,
                   timeout=timeout, progress=progress)
    run = GuestRun(res, cases_of(res), missing, chosen=chosen)
    failed = [c for c in run.cases if c.status == "not ok"]
    if (failed or run.leaks) and base and base != commit:
        run.on_base, run.base_note = _on_base(b, kernel, base, failed, list(run.leaks), progress)
    return run


def _on_base(b: Builder, kernel: Path, base: str, failed: list[CaseResult], leaked: list[str],
             progress) -> tuple[set[str] | None, str]:
    progs = list(dict.fromkeys([":".join(c.name.split(":")[:2]) for c in failed
                                if _base_has(b.repo, base, c.name)]
                               + [p for p in leaked if _base_has(b.repo, base, p)]))
    tests, _ = selftests.resolve(b.repo, base, progs)
    if not tests:
        return set(), ""  # the failed cases are new in the series: nothing to compare
    progress(f"{b.target.name}: building the base to run {len(tests)} failed or leaking "
             "selftest(s) there")
    step = b.step(0, base, "base-for-selftests")
    if not step.ok:
        return None, f"the base does not build (log: {step.log})"
    cap = b.target.selftest_max_timeout
    tests = [Selftest(t.dir, t.prog, min(t.timeout, cap)) for t in tests]
    ksrc = selftests.export_tools(b.repo, base, b.dirs.root / "selftests")
    res = vng.boot(kernel, b.target, b.dirs.root, b.dirs.root.parent, ksrc, tests,
                   plan=False, progress=progress)
    return ({c.name for c in cases_of(res) if c.status == "not ok"}
            | {netstate.key(t, x) for t, xs in leaks_of(res).items() for x in xs}), ""


def _base_has(repo: Path, base: str, case: str) -> bool:
    """Whether the base's copy of the program could run ``case``: it exists
    and (for a KTAP case) names it. A case the base lacks is new: no boot."""
    d, prog, *rest = case.split(":")
    text = selftests.show(repo, base, f"{selftests.ROOT}/{d}/{prog}")
    return text is not None and (not rest or rest[0] in text)
