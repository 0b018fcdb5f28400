"""Several napipatch processes at once on ONE cache and ONE store.

A git hook and a manual check, two Celery workers, b4 and an editor: each
is a process of its own sharing ``~/.cache/napipatch`` and the series
store. Here real ``napipatch`` processes start together on an empty cache:
checks of threaded-busy-poll@v5 against the 6.12 tree, imports into the
store (two versions of one series, whose series.toml both rewrite, and a
series of its own) and a ``send --dry-run``. Nothing may crash, no update
may be lost, and the checks must say exactly what a serial run says. The
round runs twice: the second one meets a warm cache.

"At once" is meant: Python's start-up under load spreads processes over
seconds, which would hide the races. So each process is the CLI as
``python -m napipatch`` runs it (``runpy`` of ``napipatch.__main__``), held
after its imports until every one of them is ready.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import pytest

from conftest import LORE, ROOT

pytestmark = pytest.mark.tree

SERIES = "threaded-busy-poll"
SPEC = f"{SERIES}@v5"
V4 = LORE / "threaded-busy-poll-v4.mbox"
CHECKS = 4  # concurrent `check` processes per round
ROUNDS = 2


def _env(cache: Path, store: Path, gitconfig: Path) -> dict:
    return dict(os.environ, XDG_CACHE_HOME=str(cache), NAPIPATCH_SERIES_DIR=str(store),
                COLUMNS="200", GIT_CONFIG_GLOBAL=str(gitconfig), GIT_CONFIG_NOSYSTEM="1")


# argv: READY-FILE GO-FILE NAPIPATCH-ARGS...
_AT_ONCE = """
import os, runpy, sys, time
import napipatch.cli
ready, go, args = sys.argv[1], sys.argv[2], sys.argv[3:]
open(ready, "w").close()
while not os.path.exists(go):
    time.sleep(0.002)
sys.argv = ["napipatch", *args]
runpy.run_module("napipatch", run_name="__main__", alter_sys=True)
"""


class Starter:
    """Processes that begin their napipatch command together, on ``go()``."""

    def __init__(self, d: Path):
        self.d, self.procs = d, {}
        d.mkdir()

    def start(self, name: str, args: list, cwd: Path, env: dict) -> None:
        self.procs[name] = subprocess.Popen(
            [sys.executable, "-c", _AT_ONCE, self.d / f"{name}.ready", self.d / "go",
             *map(str, args)], cwd=cwd, env=env, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True)

    def go(self) -> dict[str, tuple[int, str, str]]:
        for name, p in self.procs.items():
            while not (self.d / f"{name}.ready").exists():
                assert p.poll() is None, (name, p.communicate())
                time.sleep(0.01)
        (self.d / "go").touch()
        out = {}
        for name, p in self.procs.items():
            stdout, stderr = p.communicate(timeout=900)
            out[name] = (p.returncode, stdout, stderr)
        return out


def _variant(tmp: Path, version: int) -> Path:
    """The v4 lore thread posted as ``version``: a version of its own."""
    f = tmp / f"tbp-v{version}.mbox"
    f.write_text(V4.read_text().replace("net-next v4 ", f"net-next v{version} "))
    return f


def _verdict(stdout: str) -> tuple[list, list]:
    """What a user reads off a JSON report: each check's status and reason,
    and the findings (not the seconds, nor whether it came from the cache)."""
    data = json.loads(stdout)
    checks = sorted((c["id"], c["status"], c.get("reason")) for c in data["checks"])
    findings = sorted(json.dumps(f, sort_keys=True) for f in data["findings"])
    return checks, findings


def _problems(name: str, cp: tuple[int, str, str], want: int) -> list[str]:
    """What went wrong with one process: exit status, traceback, a crashed check."""
    rc, out, err = cp
    bad = []
    if rc != want:
        bad.append(f"{name}: exit status {rc}, not {want}: {err.strip()[-500:]}")
    if "Traceback" in err or "internal error" in err:
        bad.append(f"{name}: traceback: {err.strip()[-800:]}")
    crashed = [ln.strip() for ln in out.splitlines() if "crashed" in ln]
    if crashed:
        bad.append(f"{name}: {'; '.join(crashed)[:800]}")
    return bad


def _leftovers(*roots: Path) -> list[str]:
    """Temporary files and directories, lock files: none once all are done."""
    bad = []
    for root in roots:
        for p in root.rglob("*"):
            n = p.name
            if n.endswith((".tmp", ".lock", ".old")) or ".partial" in n:
                bad.append(str(p.relative_to(root)))
    return bad


@pytest.fixture
def setup(tmp_path, kernel_tree):
    store = tmp_path / "series"
    store.mkdir()
    shutil.copytree(ROOT / "series" / SERIES, store / SERIES)
    gitconfig = tmp_path / "gitconfig"
    gitconfig.write_text("[user]\n\tname = Test Author\n\temail = author@example.org\n")
    linux = tmp_path / "linux"  # send's --repo: git send-email runs there, not in the shared tree
    subprocess.run(["git", "clone", "-q", "--shared", "--no-checkout", str(kernel_tree),
                    str(linux)], check=True)
    return store, gitconfig, linux


def test_concurrent_checks_imports_and_sends_share_one_cache_and_store(tmp_path, kernel_tree,
                                                                       setup):
    store, gitconfig, linux = setup
    check = ["check", SPEC, "--tree", kernel_tree, "--format", "json"]

    # The reference: one process alone, on a cache of its own.
    ref_env = _env(tmp_path / "serial-cache", store, gitconfig)
    ref = subprocess.run([sys.executable, "-m", "napipatch", *map(str, check)], cwd=tmp_path,
                         env=ref_env, capture_output=True, text=True)
    assert ref.returncode in (0, 1), ref.stderr
    assert _problems("serial check", (ref.returncode, ref.stdout, ref.stderr),
                     ref.returncode) == []
    want = _verdict(ref.stdout)

    env = _env(tmp_path / "cache", store, gitconfig)  # ONE cache, empty, for every process
    imported: list[int] = []
    for r in range(ROUNDS):
        versions = [10 + 3 * r + i for i in range(3)]  # versions of one series: one series.toml
        mboxes = {v: _variant(tmp_path, v) for v in versions}
        st = Starter(tmp_path / f"round{r}")
        for i in range(CHECKS):
            st.start(f"check{i}", check, tmp_path, env)
        for v, f in mboxes.items():
            st.start(f"import-v{v}", ["series", "import", f, "--name", "tbp"], tmp_path, env)
        st.start(f"import-own{r}", ["series", "import", V4, "--name", f"own{r}"], tmp_path, env)
        st.start("send", ["send", SPEC, "--repo", linux, "--dry-run", "--to",
                          "netdev@example.org"], tmp_path, env)
        done = st.go()

        bad = []
        for i in range(CHECKS):
            cp = done[f"check{i}"]
            mine = _problems(f"check{i}", cp, ref.returncode)
            if not mine and _verdict(cp[1]) != want:
                mine.append(f"check{i}: not the serial run's result: {_verdict(cp[1])}")
            bad += mine
        for name in [f"import-v{v}" for v in versions] + [f"import-own{r}", "send"]:
            bad += _problems(name, done[name], 0)
        if f"would send {SPEC}: 6 messages" not in done["send"][1]:
            bad.append(f"send: {done['send'][1][-500:]}")
        # No lost update: every version imported so far, in this round or
        # the one before, is in series.toml, and its patches are there.
        imported += versions
        rec = tomllib.loads((store / "tbp" / "series.toml").read_text())
        if sorted(rec["versions"]) != sorted(f"v{v}" for v in imported):
            bad.append(f"series.toml of tbp lost versions: has {sorted(rec['versions'])}, "
                       f"imported {imported}")
        assert bad == [], f"round {r}:\n" + "\n".join(bad)
        for v in imported:
            assert len(list((store / "tbp" / f"v{v}").glob("*.patch"))) == 5
        own = tomllib.loads((store / f"own{r}" / "series.toml").read_text())
        assert list(own["versions"]) == ["v4"]
        assert _leftovers(store, tmp_path / "cache") == []

    # The store reads back whole, the series the checks read untouched.
    listing = subprocess.run([sys.executable, "-m", "napipatch", "series", "list"], cwd=tmp_path,
                             env=env, capture_output=True, text=True)
    assert listing.returncode == 0, listing.stderr
    names = [ln.split()[0] for ln in listing.stdout.splitlines()]
    assert names == sorted([SERIES, "tbp"] + [f"own{r}" for r in range(ROUNDS)])
    assert (store / SERIES / "series.toml").read_bytes() == \
        (ROOT / "series" / SERIES / "series.toml").read_bytes()


def test_a_kept_tree_keeps_results_whole_and_holds_its_lock(tmp_path):
    """The tools, KUnit, dt and warnings jobs' directory: a result kept by
    one run is read by the next; while one process holds it, another's
    non-blocking try on the same lock fails."""
    import fcntl
    import subprocess as sp

    from napipatch.jobs.build.builder import KeptTree
    repo = tmp_path / "repo"
    sp.run(["git", "init", "-q", str(repo)], check=True)
    with KeptTree(repo, tmp_path / "cache", "kunit") as t:
        assert t.kept("abc") is None
        t.keep("abc", {"cases": [1, 2]})
        with open(t.root / "lock") as f:
            try:
                fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
                held = False
            except BlockingIOError:
                held = True
        assert held
    assert KeptTree(repo, tmp_path / "cache", "kunit").kept("abc") == {"cases": [1, 2]}
    assert not list((t.root / "results").glob("*.tmp"))
