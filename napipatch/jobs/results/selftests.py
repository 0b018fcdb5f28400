"""Which of the kernel's own selftests run in the guest, from where, and how
their KTAP output becomes one result per test case.

The tests come from the applied series itself (the series under test adds
them), exported from the commit with ``git archive`` into the cache, since
napipatch applies series without checkouts. A test is named as kselftest
names it, ``<dir>:<program>`` (``net:nl_netdev.py``); a case inside a Python
test's KTAP is ``net:nl_netdev.py:napi_threaded_check``.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field
from pathlib import Path

from napipatch import fileio
from napipatch.jobs.results import netstate, tap
from napipatch.tree import gitutil
from napipatch.tree.export import MARKER, export_paths, is_exported

ROOT = "tools/testing/selftests"
# What a Python selftest needs from the tree: the tests and their lib/, the
# YNL library and CLI, and the netlink specs (and schemas) YNL loads.
EXPORT = [ROOT, "tools/net/ynl", "tools/include", "Documentation/netlink"]
KEEP = 6  # exported trees kept per build directory
DEFAULT_TIMEOUT = 45  # kselftest's runner default when a dir has no settings
TIMEOUT_RC = 124  # timeout(1)'s status, kselftest's "timeout_rc"
SKIP_RC = 4  # KSFT_SKIP

_PROGS = re.compile(r"^TEST_PROGS\s*[:+]?=\s*(.*)$")


@dataclass(frozen=True)
class Selftest:
    dir: str  # relative to tools/testing/selftests: net, drivers/net
    prog: str  # nl_netdev.py
    timeout: int = DEFAULT_TIMEOUT

    @property
    def name(self) -> str:
        return f"{self.dir}:{self.prog}"


@dataclass
class CaseResult:
    name: str  # net:nl_netdev.py:napi_threaded_check, or net:nl_netdev.py
    status: str  # ok | not ok | skip | xfail (tap.Result.status)
    excerpt: str = ""
    reason: str = ""  # the SKIP reason, a directive and its data, or "timed out after N s"
    flaky: str = ""  # failed on the first run, passed on the retry: how the first run failed


@dataclass
class ProgramRun:
    """One program's run in the guest, between the runner's markers."""

    test: str  # net:nl_netdev.py
    rc: int | None  # None: the guest was killed while it ran
    output: list[str] = field(default_factory=list)
    retry: ProgramRun | None = None  # the second run of a program whose first run failed
    before: dict | None = None  # the guest's netdev snapshot before the run (netsnap)
    after: dict | None = None  # and after it

    @property
    def leaks(self) -> list[str]:
        """What the run (and its retry) left behind or changed in the netdev state."""
        out = netstate.leaks(self.before, self.after)
        if self.retry is not None:
            out += [x for x in self.retry.leaks if x not in out]
        return out


def export_tools(repo: Path, commit: str, dest_root: Path) -> Path:
    """A read-only copy of ``commit``'s selftests, YNL and specs: the guest's
    KSRC. Cached by commit (~33 MB each, the KEEP most recently used are
    kept); a partial export (killed run) is redone. Callers hold the build
    directory's lock."""
    dest = Path(dest_root) / commit
    if is_exported(dest):
        (dest / MARKER).touch()  # recently used: kept by _prune
        return dest
    _prune(Path(dest_root))
    export_paths(repo, commit, EXPORT, dest, required=ROOT)
    return dest


def _prune(root: Path) -> None:
    if not root.is_dir():
        return
    # Dot names are exports under way (export.py's temporary directories).
    done = sorted((d for d in root.iterdir() if not d.name.startswith(".") and is_exported(d)),
                  key=lambda d: (d / MARKER).stat().st_mtime, reverse=True)
    for d in done[KEEP - 1:]:
        fileio.discard_dir(d)  # renamed away whole first: never half-deleted under its name


def test_progs(makefile: str) -> list[str]:
    """The TEST_PROGS of a selftests Makefile (continuation lines joined)."""
    text = makefile.replace("\\\n", " ")
    progs: list[str] = []
    for line in text.splitlines():
        m = _PROGS.match(line.strip())
        if m:
            progs += [w for w in m.group(1).split() if "$" not in w]
    return progs


def settings_timeout(settings: str | None) -> int:
    """``timeout=N`` from a dir's kselftest ``settings`` file."""
    for line in (settings or "").splitlines():
        k, _, v = line.partition("=")
        if k.strip() == "timeout" and v.strip().isdigit():
            return int(v.strip())
    return DEFAULT_TIMEOUT


def show(repo: Path, commit: str, path: str) -> str | None:
    cp = gitutil.git(repo, "show", f"{commit}:{path}", check=False)
    return cp.stdout if cp.returncode == 0 else None


def _dir_of(repo: Path, commit: str, path: str) -> tuple[str, list[str]] | None:
    """The nearest dir above ``path`` whose Makefile lists TEST_PROGS."""
    d = posixpath.dirname(path)
    while d.startswith(ROOT + "/"):
        mk = show(repo, commit, f"{d}/Makefile")
        if mk is not None and test_progs(mk):
            return d[len(ROOT) + 1:], test_progs(mk)
        d = posixpath.dirname(d)
    return None


def changed(repo: Path, base: str, tip: str) -> list[str]:
    """``dir:prog`` of every TEST_PROGS entry the series adds or changes (a
    changed program, or a Makefile that now lists it)."""
    files = gitutil.out(repo, "diff", "--name-only", "--diff-filter=AMR", base, tip,
                        "--", ROOT).splitlines()
    out: list[str] = []
    for f in files:
        found = _dir_of(repo, tip, f)
        if not found:
            continue
        d, progs = found
        rel = f[len(ROOT) + 1 + len(d) + 1:]
        if rel in progs:
            out.append(f"{d}:{rel}")
        elif rel == "Makefile":
            old = set(test_progs(show(repo, base, f) or ""))
            out += [f"{d}:{p}" for p in progs if p not in old]
    return list(dict.fromkeys(out))


def resolve(repo: Path, commit: str, names: list[str]) -> tuple[list[Selftest], list[str]]:
    """``dir:prog`` names -> Selftests with their dir's timeout; and the names
    that ``commit``'s tree does not have (reported, not run)."""
    tests: list[Selftest] = []
    missing: list[str] = []
    for name in dict.fromkeys(names):
        d, _, prog = name.partition(":")
        if not prog or show(repo, commit, f"{ROOT}/{d}/{prog}") is None:
            missing.append(name)
            continue
        tests.append(Selftest(d, prog, settings_timeout(show(repo, commit, f"{ROOT}/{d}/settings"))))
    return tests, missing


def case_results(run: ProgramRun, hang_excerpt: str = "") -> list[CaseResult]:
    """NIPA's retry: a program that failed and passed when run again is
    judged by its retry, its cases that failed the first time marked flaky;
    one that failed twice is judged by its first run, as without a retry."""
    first = _cases(run, hang_excerpt)
    if run.retry is None or not any(c.status == "not ok" for c in first):
        return first
    second = _cases(run.retry, hang_excerpt)
    if any(c.status == "not ok" for c in second):
        again = "failed again on the retry"
        return [CaseResult(c.name, c.status, c.excerpt,
                           (f"{c.reason} ({again})" if c.reason else again)
                           if c.status == "not ok" else c.reason) for c in first]
    failed = {c.name: c for c in first if c.status == "not ok"}
    for c in second:
        if c.name in failed:
            f = failed.pop(c.name)
            c.flaky = f"failed on the first run{f': {f.reason}' if f.reason else ''}, {c.status} on the retry"
            c.excerpt = f"--- first run ---\n{f.excerpt}\n--- retry ---\n{c.excerpt}"
    # a first-run failure the retry has no case for (the program's exit status)
    second += [CaseResult(f.name, "ok", f.excerpt, "", f"failed on the first run"
                          f"{f': {f.reason}' if f.reason else ''}, passed on the retry")
               for f in failed.values()]
    return second


def _cases(run: ProgramRun, hang_excerpt: str = "") -> list[CaseResult]:
    """One result per top-level KTAP case (a case's excerpt holds its
    diagnostics and subtests); a program without KTAP cases is one result
    by its exit status (0 ok, 4 skip, 124 timed out, else not ok)."""
    stem = run.test.split(":", 1)[1].rsplit(".", 1)[0]
    ktap = tap.parse(run.output)
    cases: list[CaseResult] = []
    for r in ktap.results:
        title = r.description
        case = title.split(".", 1)[1] if title.startswith(stem + ".") else title
        cases.append(CaseResult(f"{run.test}:{case or r.n}", r.status,
                                "\n".join(r.before[-30:] + [r.line]), r.reason))
    tail = "\n".join(run.output[-40:])
    failed = f"exit status {run.rc}" + (f" (Bail out! {ktap.bail_out})" if ktap.bail_out else "")
    if run.rc is None:
        cases.append(CaseResult(run.test, "not ok", hang_excerpt or tail,
                                "hung: the guest was killed by the timeout"))
    elif run.rc == TIMEOUT_RC:
        cases.append(CaseResult(run.test, "not ok", tail, "timed out (its settings timeout)"))
    elif not cases:
        status = "ok" if run.rc == 0 else "skip" if run.rc == SKIP_RC else "not ok"
        why = ktap.skip_all if status == "skip" and ktap.skip_all else failed if run.rc else ""
        cases.append(CaseResult(run.test, status, tail, why))
    elif run.rc not in (0, SKIP_RC) and all(c.status != "not ok" for c in cases):
        cases.append(CaseResult(run.test, "not ok", tail, failed))
    return cases
