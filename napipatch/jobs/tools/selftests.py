"""NIPA's build_tools on the selftest targets a patch can change.

For every patch touching include/ or tools/ (NIPA's own test): the targets
``targets.pick`` finds are built at the parent and at the patch, in a kept
worktree of napipatch's build directory (never the user's tree), in place
as NIPA builds them (so a built program missing from .gitignore shows as
untracked), each after a ``git clean`` of its directory and of
tools/net/ynl, against the uapi headers ``make headers`` installed into a
kept O= directory (once per base; again only at a commit changing them).

    <build root>/<tree>-<hash>/tools/src            detached worktree
                                    /obj-headers    make headers (O=)
                                    /results        one JSON per (commit, target)
                                    /lock           held for a whole job

``make -k``: a line that fails at the parent too does not hide the rest.
What counts is make's stderr lines matching warn|error, compared by text
(``lines``), and the files ``git status`` shows untracked after the build
that the parent's build did not leave.
"""

from __future__ import annotations

import os
import posixpath
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

from napipatch import procs
from napipatch.errors import NapipatchError
from napipatch.jobs.build.builder import (
    KeptTree,
    build_env,
    checkout_worktree,
    compiler,
)
from napipatch.jobs.executor import OUTPUT, OWN, JobKind, JobResult
from napipatch.jobs.tools.lines import counted, new_lines, where
from napipatch.jobs.tools.selftest_targets import SELFTESTS, Picked, pick
from napipatch.jobs.warnings.configs import missing, missing_line
from napipatch.jobs.warnings.job import could_not_run
from napipatch.jobs.warnings.seriesresult import SeriesJob
from napipatch.report.findings import Finding, Severity, edit, fix, not_fixable
from napipatch.report.status import NipaState, Status
from napipatch.tree import gitutil

KIND = "build-tools"
# What the selftests napipatch builds need (NIPA's builders have them).
TOOLS = (("make", "make"), ("gcc", "gcc"), ("/usr/include/libmnl/libmnl.h", "libmnl-dev"),
         ("/usr/include/sys/capability.h", "libcap-dev"), ("/usr/include/numa.h", "libnuma-dev"))
_NIPA_PATHS = re.compile(r"^(include)|(tools)/")   # build_tools.sh's grep -E
_UAPI_PATHS = ("include/uapi", "arch/x86/include/uapi", "scripts/headers_install.sh")
TIMEOUT = 3600


def relevant(path: str) -> bool:
    return bool(_NIPA_PATHS.search(path))


@dataclass
class TargetBuild:
    ok: bool
    lines: list[str]
    untracked: list[str]
    seconds: float


@dataclass
class PatchStep:
    patch: int
    picked: Picked
    commit: str   # the patch's: a leftover's fix is read from its .gitignore
    before: dict[str, TargetBuild] = field(default_factory=dict)
    after: dict[str, TargetBuild] = field(default_factory=dict)


class ToolsTree(KeptTree):
    """The kept worktree, its headers install and its per-(commit, target) results."""

    def __init__(self, repo: Path, cache: Path, jobs: int, progress):
        super().__init__(repo, cache, "tools")
        self.repo, self.jobs, self.progress = repo, jobs, progress
        self.src, self.hdr = self.root / "src", self.root / "obj-headers"

    def build(self, commit: str, target: str) -> TargetBuild:
        key = f"{commit[:12]}-{target.replace('/', '_')}"
        if (kept := self.kept(key)) is not None:
            return TargetBuild(**kept)
        checkout_worktree(self.repo, self.src, commit, self.progress)
        self._headers(commit)
        gitutil.git(self.src, "clean", "-fdxq", "--", SELFTESTS + target, "tools/net/ynl")
        before = self._untracked()
        self.progress(f"{KIND}: make -C tools/testing/selftests TARGETS={target} at "
                      f"{commit[:12]}")
        t0 = time.monotonic()
        cp = procs.run(["make", "-k", f"-j{self.jobs}", "-C", str(self.src / SELFTESTS),
                        f"TARGETS={target}", f"KHDR_INCLUDES=-isystem {self.hdr}/usr/include",
                        f"CC={compiler()}"], timeout=TIMEOUT, package="make", cwd=self.src,
                       env=build_env(LC_ALL="C", LANG="C"))
        got = TargetBuild(cp.returncode == 0, counted(cp.stderr or "", str(self.src)),
                          sorted(set(self._untracked()) - set(before)),
                          round(time.monotonic() - t0, 1))
        self.keep(key, got.__dict__)
        return got

    def _untracked(self) -> list[str]:
        out = gitutil.out(self.src, "status", "--porcelain", "--untracked-files=all", "--",
                          "tools/")
        return [ln[3:] for ln in out.splitlines() if ln.startswith("?? ")]

    def _headers(self, commit: str) -> None:
        """``make headers`` into obj-headers unless it holds a commit with the same uapi."""
        stamp = self.hdr / ".napipatch-headers"
        have = stamp.read_text().strip() if stamp.exists() else ""
        if have and gitutil.git(self.repo, "diff", "--quiet", have, commit, "--", *_UAPI_PATHS,
                                check=False).returncode == 0:
            return
        self.hdr.mkdir(parents=True, exist_ok=True)
        self.progress(f"{KIND}: make headers at {commit[:12]}")
        cp = procs.run(["make", "-C", str(self.src), f"O={self.hdr}", f"-j{self.jobs}",
                        "headers"], timeout=TIMEOUT, package="make", stderr="merge",
                       env=dict(os.environ, LC_ALL="C", LANG="C"))
        if cp.returncode != 0:
            tail = "\n".join(cp.stdout.splitlines()[-6:])
            raise NapipatchError(f"make headers at {commit[:12]}", f"failed\n{tail}")
        stamp.write_text(commit + "\n")


@dataclass
class ToolsJob(SeriesJob):
    kinds: ClassVar[tuple[JobKind, ...]] = (JobKind(
        KIND, 7, "the selftest targets a patch can change (make -C tools/testing/selftests), "
                 "at its parent and at the patch", queue="build", warnings=True, opt_in=True),)

    kind: str = KIND

    def run(self, progress) -> JobResult:
        t0 = time.monotonic()
        parents = [self.base] + self.commits[:-1]
        plans = []
        for i, (p, c) in enumerate(zip(parents, self.commits), 1):
            paths = gitutil.out(self.repo, "diff", "--no-renames", "--name-only", p,
                                c).splitlines()
            if any(relevant(x) for x in paths):
                plans.append((i, p, c, pick(self.repo, c, paths)))
        if any(pl[3].targets for pl in plans):
            gone = missing(TOOLS)
            if gone:
                return could_not_run(OUTPUT, KIND, f"{KIND} could not run: "
                                     f"{missing_line(gone)}", self.kind)
        steps = []
        try:
            with ToolsTree(self.repo, self.cache, self.jobs, progress) as tt:
                for i, p, c, picked in plans:
                    st = PatchStep(i, picked, c)
                    for t in picked.targets:
                        st.before[t] = tt.build(p, t)
                        st.after[t] = tt.build(c, t)
                    steps.append(st)
        except NapipatchError as exc:
            return could_not_run(OUTPUT, KIND, f"{KIND} could not run: {exc}", self.kind)
        return result(steps, len(self.commits), round(time.monotonic() - t0, 1), self.repo)


def result(steps: list[PatchStep], total: int, seconds: float, repo: Path) -> JobResult:
    findings: list[Finding] = []
    for st in steps:
        findings += step_findings(st, repo)
    bad = any(f.severity is Severity.ERROR for f in findings)
    warn = any(f.severity is Severity.WARNING for f in findings)
    return JobResult(kind=KIND, target=KIND, status=Status.FAIL if bad else Status.WARN if warn else Status.PASS,
                     findings=findings, seconds=seconds,
                     data={"patches": [{"patch": s.patch, "targets": s.picked.targets,
                                        "skipped": s.picked.skipped,
                                        "dropped": s.picked.dropped,
                                        "before": {t: b.__dict__ for t, b in s.before.items()},
                                        "after": {t: b.__dict__ for t, b in s.after.items()}}
                                       for s in steps], "patches_total": total})


def step_findings(st: PatchStep, repo: Path) -> list[Finding]:
    """One patch: its new lines and untracked files (each with its
    .gitignore line as a fix, read from ``repo`` at the patch), and what
    was built."""
    n_before = sum(len(b.lines) for b in st.before.values())
    n_after = sum(len(b.lines) for b in st.after.values())
    new_files = {t: sorted(set(st.after[t].untracked) - set(st.before[t].untracked))
                 for t in st.after}
    grew = n_after > n_before or any(new_files.values())
    nipa = {OWN: NipaState.FAIL if grew else NipaState.SUCCESS}
    out: list[Finding] = []
    for t, after in st.after.items():
        for ln in new_lines(st.before[t].lines, after.lines):
            w = where(ln, SELFTESTS + t)
            sev = Severity.ERROR if "error" in ln.lower() else Severity.WARNING
            out.append(Finding(check=OUTPUT, severity=sev, patch=st.patch, file=w.file,
                               line=w.line, message=f"selftests {t}: {ln}", nipa=nipa,
                               hint=f"make -C tools/testing/selftests TARGETS={t}"))
        for f in new_files[t]:
            out.append(Finding(check=OUTPUT, severity=Severity.ERROR, patch=st.patch, file=f,
                               message=f"{f} is left untracked by the {t} selftests build: "
                                       "add it to .gitignore", nipa=nipa,
                               hint=f"list {posixpath.basename(f)} in the .gitignore of its "
                                    f"directory or of {SELFTESTS}{t.split('/')[0]}",
                               fix=listing(repo, st.commit, t, f)))
    out += _said(st, n_before, n_after)
    return out


def _said(st: PatchStep, n_before: int, n_after: int) -> list[Finding]:
    """What was built, skipped and left out (NIPA builds every target)."""
    pk, out = st.picked, []
    if pk.targets:
        built = ", ".join(f"{t} (for {pk.why[t]})" for t in pk.targets)
        out.append(Finding(check=OUTPUT, severity=Severity.INFO, patch=st.patch,
                           message=f"selftests built at the parent and the patch: {built}; "
                                   f"warning/error lines {n_before} -> {n_after}"))
    else:
        out.append(Finding(check=OUTPUT, severity=Severity.INFO, patch=st.patch,
                           message="no selftest target sees this patch's include/ or tools/ "
                                   "changes (no uapi header a selftest includes)"))
    if pk.skipped:
        out.append(Finding(check=OUTPUT, severity=Severity.INFO, patch=st.patch,
                           message=f"not built, as NIPA skips them (SKIP_TARGETS): "
                                   f"{', '.join(pk.skipped)}"))
    left = pk.dropped + pk.unseen
    if left:
        out.append(Finding(check=OUTPUT, severity=Severity.INFO, patch=st.patch,
                           message=f"not built here: {', '.join(left[:4])}"
                                   f"{' and more' if len(left) > 4 else ''} "
                                   f"(bounded to {len(pk.targets)} targets)",
                           nipa={OWN: NipaState.UNKNOWN}))
    return out


# ----------------------------------------------------------------------
# The fix of a selftest build's leftover: its name in a .gitignore.
#
# The selftests keep their built programs out of git with bare names (no
# slash) in a .gitignore of their directory or of the target above it
# (``net/.gitignore`` lists ``af_unix``'s programs): a bare name matches at
# any depth below the file. The fix lists the leftover's name in the nearest
# .gitignore at the patch, at its sorted place when the file's names are
# sorted, else last; the line is computed here, where the patch's tree is
# read, and applied by ``napipatch fix`` in the patch that made the leftover.


# What a .gitignore reads as a pattern, not a name: written so, the line
# would ignore other files or none.
_SPECIAL = re.compile(r"[*?\[\]!#\\\s]")


def listing(repo: Path, commit: str, target: str, path: str) -> dict:
    """The fix for ``path`` (tree-relative) left untracked by ``target``'s
    build at ``commit``: one line added to the nearest .gitignore between
    the file's directory and the target's top directory."""
    name = posixpath.basename(path)
    if _SPECIAL.search(name):
        return not_fixable(f"{name!r} would be read as a pattern in a .gitignore")
    top = SELFTESTS + target.split("/")[0]
    d = posixpath.dirname(path)
    if not (d == top or d.startswith(top + "/")):
        # tools/net/ynl's build products: that directory's own business
        return not_fixable(f"{path} is outside {top}")
    while d == top or d.startswith(top + "/"):
        gi = f"{d}/.gitignore"
        cp = gitutil.git(repo, "cat-file", "blob", f"{commit}:{gi}", check=False)
        if cp.returncode == 0:
            return _insert(gi, cp.stdout, name)
        d = posixpath.dirname(d)
    return not_fixable(f"no .gitignore in {posixpath.dirname(path)} or above it in {top} "
                       "(fix does not create one)")


def _insert(gi: str, text: str, name: str) -> dict:
    lines = text.split("\n")
    body = lines[:-1] if lines[-1] == "" else lines   # the file's last newline
    names = [(n, ln) for n, ln in enumerate(body, 1) if ln.strip() and not ln.startswith("#")]
    at = len(body) + 1
    if [ln for _n, ln in names] == sorted(ln for _n, ln in names):
        at = next((n for n, ln in names if ln > name), at)
    return fix(f"listed {name} in {gi} (line {at})", edit(gi, at, [], [name]))
