"""The KUnit job: kunit.py under UML at the series and, when a case fails,
at the base.

One kept directory per kernel tree, reused (warm) across runs:

    <build root>/<tree>-<hash>/kunit/src       detached worktree
                                    /obj       kunit.py's --build_dir (ARCH=um)
                                    /logs      one kunit.py log per run
                                    /results   one JSON per (commit, .kunitconfig)
                                    /lock      held for a whole job

kunit.py is the trusted base's (``trusted.kunit_tool``): it runs make in
the tree above its own directory, so the job copies it over the worktree's
tools/testing/kunit after each checkout; the patched tree's copy never
runs. The series runs at the last patch that changes kernel code (not
tools/ or Documentation/), with the .kunitconfig ``select`` makes; a
failing case there is run for at the base with the same .kunitconfig, and
one failing there too is pre-existing.
"""

from __future__ import annotations

import hashlib
import re
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

from napipatch.errors import NapipatchError
from napipatch.jobs.build.builder import (
    KeptTree,
    build_env,
    checkout_worktree,
    compiler,
    run_logged,
)
from napipatch.jobs.executor import OUTPUT, OWN, JobKind, JobResult
from napipatch.jobs.kunit import ktap
from napipatch.jobs.kunit.select import Selection, kernel_paths, select
from napipatch.jobs.warnings.configs import missing, missing_line
from napipatch.jobs.warnings.job import could_not_run
from napipatch.jobs.warnings.seriesresult import SeriesJob
from napipatch.report.findings import Finding, Severity
from napipatch.report.status import NipaState, Status
from napipatch.tree import gitutil
from napipatch.tree.trusted import kunit_tool

KIND = "kunit"
TOOLS = (("make", "make"), ("gcc", "gcc"), ("flex", "flex"), ("bison", "bison"),
         ("bc", "bc"), ("python3", "python3"))
KUNIT = "tools/testing/kunit"
RUN_TIMEOUT = 300  # kunit.py --timeout: the tests, not the build
_MISSING = re.compile(r"^Missing: (.*)$", re.M)


@dataclass
class Run:
    """kunit.py at one commit with one .kunitconfig."""

    commit: str
    options: list[str]
    built: bool = False
    cases: list[ktap.Case] = field(default_factory=list)
    unavailable: list[str] = field(default_factory=list)  # options UML could not have
    tail: list[str] = field(default_factory=list)  # kunit.py's last lines when it failed
    seconds: float = 0.0

    def to_json(self) -> dict:
        return {"commit": self.commit, "options": self.options, "built": self.built,
                "cases": [c.to_json() for c in self.cases], "unavailable": self.unavailable,
                "tail": self.tail, "seconds": self.seconds}

    @classmethod
    def from_json(cls, d: dict) -> Run:
        return cls(d["commit"], d["options"], d["built"], [ktap.Case(**c) for c in d["cases"]],
                   d["unavailable"], d["tail"], d["seconds"])


class KunitTree(KeptTree):
    """The kept worktree and UML build directory."""

    def __init__(self, repo: Path, base: str, cache: Path, jobs: int, progress):
        super().__init__(repo, cache, "kunit")
        self.repo, self.base, self.cache, self.jobs = repo, base, cache, jobs
        self.progress = progress
        self.src, self.obj = self.root / "src", self.root / "obj"

    def run(self, commit: str, options: list[str], label: str) -> Run:
        key = f"{commit[:12]}-{hashlib.sha256(chr(10).join(options).encode()).hexdigest()[:10]}"
        if (kept := self.kept(key)) is not None:
            return Run.from_json(kept)
        t0 = time.monotonic()
        got = self._kunit(commit, list(options), label)
        if not got.built and got.unavailable:  # once more without what UML cannot have
            got = self._kunit(commit, [o for o in options if o not in got.unavailable], label,
                              unavailable=got.unavailable)
        got.seconds = round(time.monotonic() - t0, 1)
        self.keep(key, got.to_json())
        return got

    def _kunit(self, commit: str, options: list[str], label: str,
               unavailable: list[str] | None = None) -> Run:
        checkout_worktree(self.repo, self.src, commit, self.progress)
        tool = self.src / KUNIT
        shutil.rmtree(tool, ignore_errors=True)
        shutil.copytree(kunit_tool(self.repo, self.base, self.cache), tool)
        self.obj.mkdir(parents=True, exist_ok=True)
        cfg = self.root / "kunitconfig"
        cfg.write_text("".join(f"{o}\n" for o in options))
        outfile = self.obj / "test.log"
        outfile.unlink(missing_ok=True)
        cmd = ["python3", str(tool / "kunit.py"), "run", "--arch=um",
               f"--build_dir={self.obj}", f"--kunitconfig={cfg}", f"--jobs={self.jobs}",
               f"--timeout={RUN_TIMEOUT}", f"--make_options=CC={compiler()}"]
        self.progress(f"{KIND}: kunit.py run --arch=um at {label} ({commit[:12]})")
        env = build_env(LC_ALL="C", LANG="C", PYTHONDONTWRITEBYTECODE="1")
        log = self.root / "logs" / f"{commit[:12]}.log"
        rc, lines = run_logged(cmd, log, env, package="python3",
                               on_line=lambda ln: self.progress(f"{KIND}: {ln[:120]}")
                               if ln.startswith("[") else None)
        out = "\n".join(lines)
        got = Run(commit, options, unavailable=list(unavailable or []))
        if outfile.exists():
            got.built = True
            got.cases = ktap.cases(outfile.read_text(errors="replace"), str(self.src))
            if rc != 0 and not ktap.failing(got.cases):
                got.cases.append(ktap.Case("kunit", "", "crashed", first=f"kunit.py exit "
                                           f"status {rc} with no failing case in its KTAP",
                                           details=lines[-15:]))
            return got
        m = _MISSING.search(out)
        if m and unavailable is None:
            got.unavailable = [e.strip() for e in m.group(1).split(",") if e.strip()]
        got.tail = [ln for ln in lines if ln.strip()][-15:]
        return got


@dataclass
class KunitJob(SeriesJob):
    kinds: ClassVar[tuple[JobKind, ...]] = (JobKind(
        KIND, 9, "the trusted base's kunit.py under UML for the KUnit suites in or beside the "
                 "touched directories, at the series and, when a case fails, at the base",
        queue="build", opt_in=True),)

    kind: str = KIND

    def run(self, progress) -> JobResult:
        t0 = time.monotonic()
        parents = [self.base] + self.commits[:-1]
        at = 0
        for i, (p, c) in enumerate(zip(parents, self.commits), 1):
            paths = gitutil.out(self.repo, "diff", "--no-renames", "--name-only", p,
                                c).splitlines()
            if kernel_paths(paths):
                at = i
        if at == 0:
            return result(None, None, None, 0, round(time.monotonic() - t0, 1))
        commit = self.commits[at - 1]
        changed = gitutil.out(self.repo, "diff", "--no-renames", "--name-only", self.base,
                              commit).splitlines()
        sel = select(self.repo, commit, changed)
        if not sel.suites:
            return result(sel, None, None, at, round(time.monotonic() - t0, 1))
        gone = missing(TOOLS)
        if gone:
            return could_not_run(OUTPUT, KIND, f"{KIND} could not run: {missing_line(gone)}",
                                 self.kind)
        try:
            with KunitTree(self.repo, self.base, self.cache, self.jobs, progress) as kt:
                tip = kt.run(commit, sel.options, f"patch {at}")
                base = None
                if not tip.built or ktap.failing(tip.cases):
                    base = kt.run(self.base, tip.options if not tip.unavailable else
                                  [o for o in tip.options if o not in tip.unavailable], "the base")
        except NapipatchError as exc:
            return could_not_run(OUTPUT, KIND, f"{KIND} could not run: {exc}", self.kind)
        return result(sel, tip, base, at, round(time.monotonic() - t0, 1))


def failed_lead(label: str) -> str:
    """How the finding of a case that fails (not crashed) begins (the bot's
    memory finds a case's finding by it)."""
    return f"KUnit {label} fails"


def result(sel: Selection | None, tip: Run | None, base: Run | None, at: int,
           seconds: float) -> JobResult:
    """Each failing case at ``tip`` an error on patch ``at`` at the test's
    FILE:LINE (an info when it fails at the base too); what ran, and why."""
    findings: list[Finding] = []
    if sel is None or tip is None:
        why = "no patch changes kernel code" if sel is None else \
            "no KUnit suite is built in or beside the directories the series changes " \
            f"({_few(sel.dirs)})"
        findings.append(Finding(check=OUTPUT, severity=Severity.INFO, patch=0,
                                message=f"KUnit not run: {why}"))
        return JobResult(kind=KIND, target=KIND, status=Status.PASS, findings=findings,
                         seconds=seconds, data={"patch": at, "suites": []})
    old = {c.key for c in (base.cases if base else []) if c.status in ("not ok", "crashed")}
    if not tip.built:
        pre = base is not None and not base.built
        findings.append(Finding(
            check=OUTPUT, severity=Severity.INFO if pre else Severity.ERROR, patch=at,
            message="the KUnit kernel (ARCH=um) does not build or configure at "
                    f"{'the base either' if pre else f'patch {at} (it does at the base)'}",
            details="\n".join(tip.tail), hint="kunit.py run --arch=um --kunitconfig=... "
                                              "shows the same"))
    for c in ktap.failing(tip.cases):
        pre = c.key in old
        what = "crashed" if c.status == "crashed" else "fails"
        findings.append(Finding(
            check=OUTPUT, severity=Severity.INFO if pre else Severity.ERROR, patch=at,
            file=c.file, line=c.line,
            message=f"{failed_lead(c.label) if what == 'fails' else f'KUnit {c.label} {what}'}"
                    f"{' at the base too' if pre else ''}: {c.first}",
            # a new failure fails NIPA's contest (its KUnit run) as its severity says
            details="\n".join(c.details), nipa={OWN: NipaState.UNKNOWN} if pre else None,
            hint=f"tools/testing/kunit/kunit.py run --arch=um {c.name}"))
    ran = sorted({c.name.split(".")[0] for c in tip.cases})
    counts = {s: sum(c.status == s for c in tip.cases) for s in ("ok", "not ok", "skip")}
    why = "; ".join(f"{s.symbol}: {s.why}" for s in sel.suites)
    # NIPA's contest runs KUnit too: cases that ran count for it (a skip
    # is a warning there, as for a selftest).
    state = NipaState.WARNING if counts["skip"] else NipaState.SUCCESS
    findings.append(Finding(
        check=OUTPUT, severity=Severity.INFO, patch=0,
        nipa={OWN: state} if counts["ok"] or counts["skip"] else {},
        message=f"KUnit under UML at patch {at} ({tip.commit[:12]}): "
                f"{len(ran)} suite{'s' * (len(ran) != 1)} ({', '.join(ran) or 'none ran'}), "
                f"{counts['ok']} passed, {counts['not ok']} failed, {counts['skip']} skipped"
                + (", run at the base too" if base else ""),
        details=f"suites chosen: {why}\n.kunitconfig:\n" + "\n".join(tip.options)
                + (f"\nnot available under UML: {', '.join(tip.unavailable)}"
                   if tip.unavailable else "")
                + (f"\nnot run (bounded to {len(sel.suites)}): "
                   f"{', '.join(s.symbol for s in sel.dropped)}" if sel.dropped else "")))
    status = Status.FAIL if any(f.severity is Severity.ERROR for f in findings) else Status.PASS
    return JobResult(kind=KIND, target=KIND, status=status, findings=findings, seconds=seconds,
                     data={"patch": at, "suites": [s.symbol for s in sel.suites],
                           "dropped": [s.symbol for s in sel.dropped],
                           "tip": tip.to_json(), "base": base.to_json() if base else None})


def _few(items: list[str]) -> str:
    return ", ".join(items[:3]) + (f" and {len(items) - 3} more" if len(items) > 3 else "")
