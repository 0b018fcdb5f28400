"""A vng boot of the series tip with the plan and the kernel selftests, and,
only when a selftest case fails (twice: the guest retries a failed program),
a program leaks netdev state or the kernel splats, a boot of the base
running just those programs (the base's own copies; the plan too when the
splat came during the boot or the plan), so a case already failing, a leak
already there or a splat the base shows too is told apart from one the
series brought.

The tip's splats are decoded (``splats.decode``) before the base is built:
the base's build replaces the tip's vmlinux.

Runs inside the Builder's lock: the base boot rebuilds the build directory
at the base (the next run builds the tip again, incrementally).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from napipatch.jobs.boot import vng
from napipatch.jobs.boot.result import BootResult
from napipatch.jobs.build import guestconfig
from napipatch.jobs.build.builder import Builder
from napipatch.jobs.results import choose, netstate, selftests, splats
from napipatch.jobs.results.selftests import CaseResult, Selftest
from napipatch.jobs.results.splats import Splat
from napipatch.jobs.targets import Target
from napipatch.kernel import kconfig
from napipatch.tree import gitutil


@dataclass
class GuestRun:
    res: BootResult
    cases: list[CaseResult] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)  # asked for, not in the tree
    # cases failing, and leaks (netstate.key), on the base too (None: not compared)
    on_base: set[str] | None = None
    base_note: str = ""  # why the base was not compared
    chosen: choose.Choice | None = None  # which selftests ran and why
    splats: list[Splat] = field(default_factory=list)  # the tip's, one a (what ran, fingerprint)
    base_splats: set[str] | None = None  # fingerprints the base shows (None: not compared)
    # options the merged selftest fragments asked for that the kernel lacks,
    # and the chosen tests' dirs whose fragment it does not merge (guestconfig)
    lacking: list[kconfig.Lacking] = field(default_factory=list)
    unmerged: list[str] = field(default_factory=list)

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
             timeout: float | None, progress, cache: Path) -> GuestRun:
    target = b.target
    tests, missing, chosen = _tests(b.repo, target, base, commit)
    ksrc = selftests.export_tools(b.repo, commit, b.dirs.root / "selftests")
    progress(f"{target.name}: booting {commit[:12]} with vng: plan + "
             f"{len(tests)} selftest{'s' if len(tests) != 1 else ''}")
    res = vng.boot(kernel, target, b.dirs.root, b.dirs.root.parent, ksrc, tests,
                   timeout=timeout, progress=progress)
    run = GuestRun(res, cases_of(res), missing, chosen=chosen,
                   splats=splats.unique(splats.scan(res.console)),
                   lacking=guestconfig.lacking(target, b.dirs.obj, b.dirs.src),
                   unmerged=guestconfig.unmerged(target, b.repo, base or commit,
                                                 [t.dir for t in tests]))
    guestconfig.explain_skips(run.cases, run.lacking, run.unmerged)
    if run.splats:
        decode_splats(b, run.splats, base, cache, progress)
    failed = [c for c in run.cases if c.status == "not ok"]
    if base and base != commit:
        _mark_added(b.repo, base, commit, run.splats)
    unsure = [s for s in run.splats if not s.added]
    if (failed or run.leaks or unsure) and base and base != commit:
        on_base, fps, run.base_note = _on_base(b, kernel, base, failed, list(run.leaks), unsure,
                                               progress)
        run.on_base = on_base if failed or run.leaks else None
        run.base_splats = fps if unsure else None
    return run


def _mark_added(repo: Path, base: str, commit: str, found: list[Splat]) -> None:
    """A splat whose FILE:LINE the series adds (its WARN_ON, say) cannot
    be the base's: it is new without booting the base."""
    for f in {s.file for s in found if s.file and s.line}:
        diff = gitutil.git(repo, "diff", "-U0", base, commit, "--", f, check=False).stdout
        lines = splats.added_lines(diff)
        for s in found:
            s.added = s.added or (s.file == f and s.line in lines)


def decode_splats(b: Builder, found: list[Splat], trusted: str | None, cache: Path,
                  progress) -> None:
    """FILE:LINE for each splat's frames, by the trusted base's
    decode_stacktrace.sh against the tip's vmlinux (a failure is a note)."""
    progress(f"{b.target.name}: decoding {len(found)} kernel splat(s)")
    splats.decode_trusted(found, b.repo, trusted, cache, b.dirs.obj / "vmlinux", b.dirs.src)


def _on_base(b: Builder, kernel: Path, base: str, failed: list[CaseResult], leaked: list[str],
             found: list[Splat], progress) -> tuple[set[str] | None, set[str] | None, str]:
    """At the base: the failed cases' programs, the leaking ones, and those
    a splat came during (the plan too when one came during the boot or the
    plan). Returns the cases failing there with the leaks there
    (netstate.key), the splat fingerprints seen there, and why it was not
    compared (then both are None)."""
    names = [":".join(c.name.split(":")[:2]) for c in failed if _base_has(b.repo, base, c.name)]
    names += [p for p in leaked if _base_has(b.repo, base, p)]
    names += [s.during for s in found if s.during not in (splats.BOOT, splats.PLAN)
              and _base_has(b.repo, base, s.during)]
    plan = any(s.during in (splats.BOOT, splats.PLAN) for s in found)
    tests, _ = selftests.resolve(b.repo, base, list(dict.fromkeys(names)))
    if not tests and not plan:
        return set(), set(), ""  # new in the series: nothing to compare
    progress(f"{b.target.name}: building the base to run {len(tests)} selftest(s) there"
             + (" and the plan" if plan else ""))
    step = b.step(0, base, "base-for-selftests")
    if not step.ok:
        return None, None, f"the base does not build (log: {step.log})"
    cap = b.target.selftest_max_timeout
    tests = [Selftest(t.dir, t.prog, min(t.timeout, cap)) for t in tests]
    ksrc = selftests.export_tools(b.repo, base, b.dirs.root / "selftests")
    res = vng.boot(kernel, b.target, b.dirs.root, b.dirs.root.parent, ksrc, tests,
                   plan=plan, progress=progress)
    return ({c.name for c in cases_of(res) if c.status == "not ok"}
            | {netstate.key(t, x) for t, xs in leaks_of(res).items() for x in xs},
            {s.fingerprint for s in splats.scan(res.console)}, "")


def _base_has(repo: Path, base: str, case: str) -> bool:
    """Whether the base's copy of the program could run ``case``: it exists
    and (for a KTAP case) names it. A case the base lacks is new: no boot."""
    d, prog, *rest = case.split(":")
    text = selftests.show(repo, base, f"{selftests.ROOT}/{d}/{prog}")
    return text is not None and (not rest or rest[0] in text)
