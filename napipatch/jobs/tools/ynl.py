"""``make -C tools/net/ynl`` as NIPA's ynl test runs it, at the patch that
last changes what it builds, and at the base for comparison.

NIPA builds tools/net/ynl at the series' tip after a distclean and fails
the series when the build fails or its stderr has any line matching
warn|error. What the build reads is the netlink specs, the uapi headers,
the kernel's MAINTAINERS (the generator finds the tree's root by it) and
tools/net/ynl itself: those paths are exported from each commit into a
directory of its own (a clean copy: NIPA's distclean, and nothing of the
untrusted tree runs outside it), built there with the tree's own
generator and Makefiles, and the result kept beside it, so a second run
at the same commit builds nothing. The tip's build equals the build at
the last patch that changes those paths; without one, the base's build is
the series' (built once per base).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from napipatch import procs
from napipatch.errors import NapipatchError
from napipatch.jobs.build.builder import build_env, build_root, compiler, tree_key
from napipatch.jobs.executor import OUTPUT, OWN, JobKind, JobResult
from napipatch.jobs.tools.lines import Where, counted, new_lines, where
from napipatch.jobs.warnings.configs import missing, missing_line
from napipatch.jobs.warnings.job import could_not_run
from napipatch.jobs.warnings.seriesresult import Attributor, SeriesJob
from napipatch.report.findings import Finding, Severity
from napipatch.report.status import NipaState, Status
from napipatch.tree import gitutil
from napipatch.tree.export import export_paths

KIND = "ynl-tools"
EXPORT = ("MAINTAINERS", "tools/net/ynl", "Documentation/netlink", "include/uapi")
TOOLS = (("make", "make"), ("gcc", "gcc"), ("ar", "binutils"), ("python3", "python3"))
_RESULT = ".napipatch-ynl.json"
TIMEOUT = 1800


def affects_ynl(path: str) -> bool:
    """Whether the tools/net/ynl build reads ``path``."""
    return path.startswith(("Documentation/netlink/", "include/uapi/", "tools/net/ynl/"))


@dataclass
class YnlBuild:
    commit: str
    ok: bool
    lines: list[str]
    seconds: float

    def to_json(self) -> dict:
        return {"commit": self.commit, "ok": self.ok, "lines": self.lines,
                "seconds": self.seconds}


def _python_yaml() -> list[tuple[str, str]]:
    """The generator imports PyYAML and jsonschema in the system's python3."""
    cp = procs.run(["python3", "-c", "import yaml, jsonschema"], timeout=60, package="python3")
    return [] if cp.returncode == 0 else [("python3 yaml/jsonschema",
                                           "python3-yaml python3-jsonschema")]


def build(repo: Path, commit: str, cache: Path, jobs: int, progress) -> YnlBuild:
    """tools/net/ynl built at ``commit`` in its own clean copy (kept: the
    same commit builds once)."""
    dest = build_root(cache) / tree_key(repo) / "ynl" / commit[:12]
    done = dest / _RESULT
    if done.exists():
        data = json.loads(done.read_text())
        return YnlBuild(data["commit"], data["ok"], data["lines"], data["seconds"])
    export_paths(repo, commit, EXPORT, dest, required="tools/net/ynl")
    t0 = time.monotonic()
    ynl = dest / "tools/net/ynl"
    env = build_env(LC_ALL="C", LANG="C")
    # a run killed half-way leaves objects: distclean first, as NIPA does
    procs.run(["make", "-C", str(ynl), "distclean"], timeout=TIMEOUT, package="make",
              cwd=dest, env=env)
    progress(f"{KIND}: make -C tools/net/ynl at {commit[:12]}")
    cp = procs.run(["make", "-C", str(ynl), f"-j{jobs}", f"CC={compiler()}"], timeout=TIMEOUT,
                   package="make", cwd=dest, env=env)
    got = YnlBuild(commit, cp.returncode == 0, counted(cp.stderr or "", str(dest)),
                   round(time.monotonic() - t0, 1))
    if not got.ok:
        tail = [ln for ln in (cp.stderr or "").splitlines() if ln.strip()][-3:]
        got.lines += [f"make: exit status {cp.returncode}"] if not tail else []
    tmp = done.with_suffix(".tmp")
    tmp.write_text(json.dumps(got.to_json()))
    tmp.replace(done)
    return got


@dataclass
class YnlJob(SeriesJob):
    kinds: ClassVar[tuple[JobKind, ...]] = (JobKind(
        KIND, 6, "make -C tools/net/ynl from a clean copy, at the last patch changing a "
                 "netlink spec or a uapi header and at the base", queue="build", warnings=True,
        opt_in=True),)

    kind: str = KIND

    def run(self, progress) -> JobResult:
        t0 = time.monotonic()
        att = Attributor(self.repo, self.base, self.commits)
        touched = att.changed(affects_ynl)
        last = max((att.last_touch(p) for p in touched), default=0)
        gone = missing(TOOLS)
        if not gone:
            gone = _python_yaml()
        if gone:
            return could_not_run(OUTPUT, KIND, f"{KIND} could not run: {missing_line(gone)}",
                                 self.kind)
        try:
            base = build(self.repo, self.base, self.cache, self.jobs, progress)
            at = base if last == 0 else build(self.repo, self.commits[last - 1], self.cache,
                                              self.jobs, progress)
        except NapipatchError as exc:
            return could_not_run(OUTPUT, KIND, f"{KIND} could not run: {exc}", self.kind)
        return result(base, at, last, touched, round(time.monotonic() - t0, 1),
                      _locator(self.repo, at.commit))


def result(base: YnlBuild, at: YnlBuild, last: int, touched: list[str],
           seconds: float, locate=lambda name: f"tools/net/ynl/{name}") -> JobResult:
    """Findings: each new warning/error line on the patch ``last``; NIPA's
    state (any line, or a failed build, fails the series) on each."""
    fails = (not at.ok) or bool(at.lines)
    nipa = {OWN: NipaState.FAIL if fails else NipaState.SUCCESS}
    patch = last or 0
    new = new_lines(base.lines, at.lines) if last else []
    findings = []
    for ln in new:
        w = where(ln, "tools/net/ynl")
        if w.file and w.file.count("/") == 3:   # make -C a subdirectory: a bare name
            w = Where(locate(w.file.rsplit("/", 1)[1]), w.line)
        sev = Severity.ERROR if "error" in ln.lower() else Severity.WARNING
        findings.append(Finding(check=OUTPUT, severity=sev, patch=patch, file=w.file, line=w.line,
                                message=f"make -C tools/net/ynl: {ln}", nipa=nipa,
                                hint="NIPA's ynl test fails on any warning or error line"))
    old = len(at.lines) - len(new)
    if old:
        findings.append(Finding(
            check=OUTPUT, severity=Severity.INFO, patch=patch, nipa=nipa,
            message=f"{old} warning/error line{'s' * (old != 1)} of the tools/net/ynl build "
                    "are the base's too (NIPA fails on them all the same)",
            details="\n".join(at.lines)))
    if not at.ok and base.ok:
        findings.append(Finding(check=OUTPUT, severity=Severity.ERROR, patch=patch, nipa=nipa,
                                message="tools/net/ynl does not build at this patch "
                                        "(it does at the base)",
                                details="\n".join(at.lines[-10:])))
    elif not at.ok:
        findings.append(Finding(check=OUTPUT, severity=Severity.INFO, patch=patch, nipa=nipa,
                                message="tools/net/ynl does not build at the base either"))
    where_ = f"patch {last} ({at.commit[:12]}, the last to change " \
             f"{_few(touched)})" if last else "the base (no patch changes a spec, a uapi " \
                                              "header or tools/net/ynl)"
    findings.append(Finding(
        check=OUTPUT, severity=Severity.INFO, patch=0,
        message=f"make -C tools/net/ynl at {where_}: {len(at.lines)} warning/error "
                f"line{'s' * (len(at.lines) != 1)} ({len(new)} new; the base has "
                f"{len(base.lines)})", details="\n".join(at.lines)))
    status = Status.FAIL if (not at.ok and base.ok) or any(
        f.severity is Severity.ERROR for f in findings) else Status.WARN if new else Status.PASS
    return JobResult(kind=KIND, target=KIND, status=status, findings=findings, seconds=seconds,
                     data={"patch": last, "base": base.to_json(), "at": at.to_json()})


def _locator(repo: Path, commit: str):
    """A bare file name of the build's stderr (make -C lib) as its path in
    the tree; generated code (not in git) is tools/net/ynl/generated/'s."""
    names = gitutil.out(repo, "ls-tree", "-r", "--name-only", commit, "--",
                        "tools/net/ynl/").splitlines()

    def locate(name: str) -> str:
        hits = [p for p in names if p.rsplit("/", 1)[-1] == name]
        if len(hits) == 1:
            return hits[0]
        return f"tools/net/ynl/generated/{name}" if "-user." in name else f"tools/net/ynl/{name}"
    return locate


def _few(paths: list[str]) -> str:
    return ", ".join(paths[:2]) + (f" and {len(paths) - 2} more" if len(paths) > 2 else "")
