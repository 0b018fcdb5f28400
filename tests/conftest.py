"""Shared fixtures: the real Linux 6.12 tree, a throwaway store, the CLI.

The kernel tree is Debian's linux-source-6.12 prepared once into a git
repository under ~/.cache/napipatch (or $NAPIPATCH_TEST_TREE) and reused
by every test run; tests never check it out or move its branch: they make
commits with a temporary index and read them back by id.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import pytest

from napipatch.report.model import COMPLETED

ROOT = Path(__file__).resolve().parent.parent
LORE = Path(__file__).resolve().parent / "fixtures" / "lore"  # copied from shared/lore
TARBALL = Path("/usr/src/linux-source-6.12.tar.xz")


# One ccache for the whole suite. ccache keeps its objects in
# $XDG_CACHE_HOME/ccache, and every test sets XDG_CACHE_HOME to a directory
# of its own (the `cli` fixture isolates napipatch's caches), so without this
# each test's kernel build started from an empty ccache: going back to the
# base after a series that changed netdevice.h recompiled ~225 objects cold
# in every build test. The directory is the one ccache would use for this
# user outside the tests (and CCACHE_DIR, when set, wins as it does for ccache).
os.environ.setdefault("CCACHE_DIR", str(Path(os.environ.get("XDG_CACHE_HOME")
                                             or Path.home() / ".cache") / "ccache"))


# The tests' targets: the shipped virtio-net (a symlink) and a leaner idpf
# that proves the same of the driver at half a cold build's CPU (its
# target.toml says why; test_guest_config.py configures the shipped one).
# Set here so every CLI a test starts sees it; a test that wants other
# targets sets its own.
os.environ.setdefault("NAPIPATCH_TARGETS_DIR", str(Path(__file__).resolve().parent
                                                    / "fixtures" / "targets"))


# A test that (even through another fixture) uses one of these fixtures
# must carry the marker, so that `-m "not tree"` / `-m "not build"` really
# leave out every test that needs the prepared kernel tree / builds kernels.
# Collection fails otherwise: a forgotten marker cannot slip in unnoticed.
REQUIRED_MARKERS = {"kernel_tree": "tree", "build_dir": "build"}  # warnings_tree uses both


def _unmarked(items) -> list[str]:
    """'nodeid: uses FIXTURE without @pytest.mark.MARK' for every offender."""
    return [f"{item.nodeid}: uses the {fixture} fixture but lacks @pytest.mark.{mark}"
            for item in items
            for fixture, mark in REQUIRED_MARKERS.items()
            # fixturenames is the whole closure: fixtures of fixtures count
            if fixture in getattr(item, "fixturenames", ())
            and item.get_closest_marker(mark) is None]


# ------------------------------------------------------- the shared build dir
# Every test that builds uses the one build_dir (a persistent git worktree +
# O= directory per target, kept between runs so steps are incremental).
# test_flagship.py (marker `last`) boots threaded-busy-poll@v5, which leaves
# the shared virtio-net build at the v5 tip: v5 changes netdevice.h and the
# uapi netdev.h, so a build test that ran after it in the same run would first
# recompile ~225 objects (2-5 min a step on 2 cores, benchmarks/README.md)
# instead of the ~15 s incremental steps the build tests are written for, and
# test_distributed's Celery waits (120 s / 300 s / 900 s) would be exposed to
# that rebuild. So the flagship must run after every other build test.
#
# A file name sorting last ("test_zz_") only ordered a plain serial run. Under
# pytest-xdist (`-n 2`) tests are handed to workers one by one, so the flagship
# could run before, or at the same time as, other build tests on the other
# worker (the builder's flock keeps the directory consistent, but the others
# then wait out its whole build). Hence, explicitly:
#   * tests marked `last` are moved to the end of the collection;
#   * under xdist, every test using build_dir is one work unit (BUILD_GROUP)
#     run by one worker in collection order, so the build tests run one after
#     another, the flagship last of them; the other tests spread as usual.
#     `--dist loadgroup` with xdist_group marks would say that, but with
#     pytest 9.2 + xdist 3.8 it silently stops grouping (xdist rewrites
#     item._nodeid, which pytest no longer reads: pytest-xdist#1386), so the
#     group is made here: workers list the build tests in a file and
#     _BuildGroupScheduling (loadgroup's own mechanism) reads it.
#   * the build tests that never touch the virtio-net build (idpf's, KUnit's
#     UML, the warnings trees, the tools builds: each its own directory and
#     lock) are marked `side_build` and form a second group, which the other
#     worker runs at the same time: the cold suite's wall time was the one
#     build worker's (55 of 56 minutes) while the other worker sat idle for
#     half of it (benchmarks/README.md, "The test suite"). A side test that
#     does reach a virtio-net directory would only wait on its lock, never
#     see a half-built tree.
BUILD_GROUP = "build-dir"
SIDE_GROUP = "build-dir-side"


def _build_group(item) -> str | None:
    if "build_dir" not in item.fixturenames:
        return None
    return SIDE_GROUP if item.get_closest_marker("side_build") else BUILD_GROUP


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    # tryfirst: check before -m deselects anything, so every collected test is
    # checked (and reordered) whatever the selection.
    bad = _unmarked(items)
    if bad:
        raise pytest.UsageError("tests that need a marker they lack (see REQUIRED_MARKERS in "
                                "tests/conftest.py):\n  " + "\n  ".join(bad))
    # stable: everything else keeps its order, `last` tests keep theirs
    items.sort(key=lambda item: item.get_closest_marker("last") is not None)
    group_dir = getattr(config, "workerinput", {}).get("napipatch_build_group")
    if group_dir:  # an xdist worker: tell the controller which tests build
        groups = {item.nodeid: g for item in items if (g := _build_group(item))}
        out = Path(group_dir) / f"{config.workerinput['workerid']}.json"
        tmp = out.with_suffix(".tmp")
        tmp.write_text(json.dumps(groups))
        tmp.replace(out)  # the controller never reads a half-written list


def pytest_configure(config):
    # In the xdist controller (workers see dist == "no"): the modes that split
    # tests by file or run them everywhere would break up the build group.
    dist = config.getoption("dist", "no")
    if dist not in ("no", "load", "loadgroup") and config.getoption("tx", None):
        raise pytest.UsageError(f"--dist {dist}: use the default (load) or loadgroup, which keep "
                                f"the tests sharing the build directory on one worker, in order "
                                f"(see BUILD_GROUP in tests/conftest.py)")


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node):
    """xdist controller, per worker: where to write its list of build tests."""
    config = node.config
    if not hasattr(config, "_napipatch_build_group"):
        config._napipatch_build_group = Path(tempfile.mkdtemp(prefix="napipatch-build-group-"))
    node.workerinput["napipatch_build_group"] = str(config._napipatch_build_group)



# The two build groups are the suite's long chains (one test after another
# on one worker each: ~40 and ~25 of a cold run's minutes), so their
# processes go first: an xdist worker about to run a test of neither group
# (the many short ones, each with slack) lowers its own priority, once, so
# that once its own group is done it never lengthens the other's chain.
# Measured: niced, the side group's cold idpf build starved behind
# virtio-net's and made the side chain the run's tail, so the groups keep
# normal priority. The nice value is mild: a niced test still gets a
# quarter of a core against a nice-0 compiler, enough for its own waits.
NICE = 4
_niced = False


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    global _niced
    if not _niced and os.environ.get("PYTEST_XDIST_WORKER") and _build_group(item) is None:
        os.nice(NICE)  # children (make, QEMU, the CLI) inherit it
        _niced = True

def pytest_unconfigure(config):
    d = getattr(config, "_napipatch_build_group", None)
    if d:
        shutil.rmtree(d, ignore_errors=True)


@pytest.hookimpl(optionalhook=True, tryfirst=True)
def pytest_xdist_make_scheduler(config, log):
    if config.getoption("dist") not in ("load", "loadgroup"):
        return None
    from xdist.scheduler import LoadScopeScheduling

    class _BuildGroupScheduling(LoadScopeScheduling):
        """Load scheduling, except that each build group is one scope (unit)."""

        _groups: dict[str, str] | None = None

        def _split_scope(self, nodeid: str) -> str:
            # Called once every worker has finished collecting, i.e. after
            # each one wrote its list (before it reported its collection).
            if self._groups is None:
                self._groups = {}
                d = getattr(config, "_napipatch_build_group", None)
                for f in (d.glob("*.json") if d else ()):
                    self._groups.update(json.loads(f.read_text()))
            return self._groups.get(nodeid, nodeid)

    return _BuildGroupScheduling(config, log)


# ------------------------------------------------------- what each test costs
# NAPIPATCH_TEST_COST=FILE appends one JSON line per test: its wall time and
# the CPU time it used, its own and its processes' (make, gcc, QEMU, the
# CLI: every child a test waits for counts). CPU seconds hardly move with
# the machine's load, so they say what a test costs even on a busy machine;
# benchmarks/suite_cost.py sums them (benchmarks/README.md, "The test suite").
def _cpu_seconds() -> float:
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    out = os.environ.get("NAPIPATCH_TEST_COST")
    if not out:
        yield
        return
    start, wall, cpu = time.time(), time.monotonic(), _cpu_seconds()
    yield
    # the worker and the start time place each test on the run's timeline
    # (benchmarks/suite_cost.py --timeline: where a worker waited, the tail)
    line = json.dumps({"test": item.nodeid, "wall": round(time.monotonic() - wall, 2),
                       "cpu": round(_cpu_seconds() - cpu, 2),
                       "build": "build_dir" in item.fixturenames,
                       "worker": os.environ.get("PYTEST_XDIST_WORKER", ""),
                       "start": round(start, 2)})
    with open(out, "a") as f:  # one short write per line: workers do not interleave
        f.write(line + "\n")


def _tree_path() -> Path:
    env = os.environ.get("NAPIPATCH_TEST_TREE")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "napipatch" / "linux-6.12"


@pytest.fixture(scope="session")
def kernel_tree() -> Path:
    """The prepared 6.12 git tree (prepared on first use, ~1 minute)."""
    from napipatch.tree.kerneltree import prepare

    path = _tree_path()
    if not (path / ".git").exists():
        if not TARBALL.exists():
            pytest.fail(f"{TARBALL} missing: run scripts/install.sh (apt-get install linux-source-6.12)")
        path.parent.mkdir(parents=True, exist_ok=True)
        prepare(TARBALL, path)
    return path


@pytest.fixture(scope="session")
def build_dir() -> Path:
    """One build directory for every test that builds a kernel.

    $NAPIPATCH_TEST_BUILD_DIR, else ~/.cache/napipatch/build, kept between
    runs so later runs are incremental (the first build is ~7-11 min).
    """
    d = Path(os.environ.get("NAPIPATCH_TEST_BUILD_DIR")
             or Path.home() / ".cache" / "napipatch" / "build")
    d.mkdir(parents=True, exist_ok=True)
    return d


@pytest.fixture(scope="session")
def warnings_tree(build_dir, kernel_tree, base_commit) -> Path:
    """build_dir with the kept tree of `napipatch test warnings` configured
    (allmodconfig) and prepared at the base for the three configurations,
    once per session (kept between runs: cold, about 2-4 min a configuration
    on 2 cores). Tests then run the CLI with NAPIPATCH_BUILD_DIR=build_dir."""
    from napipatch.jobs.warnings.configs import CONFIGS
    from napipatch.jobs.warnings.tree import WarnTree

    old = os.environ.get("NAPIPATCH_BUILD_DIR")
    os.environ["NAPIPATCH_BUILD_DIR"] = str(build_dir)
    try:
        with WarnTree(kernel_tree, build_dir) as wt:
            wt.checkout(base_commit)
            for cfg in CONFIGS.values():
                wt.configure(cfg)
                wt.prepare(cfg)
    finally:
        if old is None:
            os.environ.pop("NAPIPATCH_BUILD_DIR")
        else:
            os.environ["NAPIPATCH_BUILD_DIR"] = old
    return build_dir


@pytest.fixture(scope="session")
def base_commit(kernel_tree) -> str:
    return git(kernel_tree, "rev-parse", "v6.12.117-debian^{commit}") if _has_tag(kernel_tree) \
        else git(kernel_tree, "rev-parse", "HEAD")


def _has_tag(repo) -> bool:
    return subprocess.run(["git", "-C", str(repo), "rev-parse", "-q", "--verify",
                           "v6.12.117-debian"], capture_output=True).returncode == 0


def git(repo, *args, input=None, env=None) -> str:
    e = dict(os.environ, GIT_PAGER="cat", LC_ALL="C")
    e.update(env or {})
    cp = subprocess.run(["git", "-C", str(repo), *args], input=input, capture_output=True,
                        text=True, env=e)
    if cp.returncode != 0:
        raise AssertionError(f"git {' '.join(args)}: {cp.stderr}")
    return cp.stdout.strip()


def small_repo(path: Path) -> Path:
    """An empty repository with an identity, for tests that need no kernel."""
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    git(path, "config", "user.name", "T")
    git(path, "config", "user.email", "t@example.org")
    return path


IDENT = {"GIT_AUTHOR_NAME": "Test Author", "GIT_AUTHOR_EMAIL": "author@example.org",
          "GIT_COMMITTER_NAME": "Test Author", "GIT_COMMITTER_EMAIL": "author@example.org",
          "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z", "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z"}


def commit_files(repo: Path, parent: str, changes: dict[str, str | None], message: str,
                 author: tuple[str, str] | None = None) -> str:
    """A commit on ``parent`` with ``changes`` ({path: text, or None to delete}).

    Uses a temporary index: the repository's checkout and branches are
    never touched, so the shared cached tree stays pristine. A changed file
    keeps its mode (an edited selftest stays executable); a new one is 100644.
    """
    with tempfile.TemporaryDirectory() as td:
        env = {"GIT_INDEX_FILE": str(Path(td) / "index")}
        git(repo, "read-tree", parent, env=env)
        for path, text in changes.items():
            if text is None:
                git(repo, "rm", "--cached", "-q", path, env=env)
                continue
            blob = git(repo, "hash-object", "-w", "--stdin", input=text)
            old = git(repo, "ls-files", "-s", "--", path, env=env).split(" ", 1)[0]
            mode = old if old in ("100644", "100755") else "100644"
            git(repo, "update-index", "--add", "--cacheinfo", f"{mode},{blob},{path}", env=env)
        tree = git(repo, "write-tree", env=env)
    ident = dict(IDENT)
    if author:
        ident.update(GIT_AUTHOR_NAME=author[0], GIT_AUTHOR_EMAIL=author[1])
    if "Signed-off-by:" not in message:
        message = message.rstrip("\n") + f"\n\nSigned-off-by: {ident['GIT_AUTHOR_NAME']} <{ident['GIT_AUTHOR_EMAIL']}>\n"
    return git(repo, "commit-tree", tree, "-p", parent, "-F", "-", input=message, env=ident)


def edit(repo: Path, rev: str, path: str, old: str, new: str, count: int = 1) -> str:
    """The text of ``path`` at ``rev`` with ``old`` replaced by ``new`` (must occur)."""
    text = git(repo, "cat-file", "blob", f"{rev}:{path}") + "\n"
    assert old in text, f"{old!r} not in {path}"
    return text.replace(old, new, count)


def format_patch(repo: Path, revrange: str, outdir: Path, *extra: str) -> Path:
    """``git format-patch --base`` of ``revrange`` into ``outdir``."""
    outdir.mkdir(parents=True, exist_ok=True)
    base = revrange.split("..")[0]
    git(repo, "format-patch", "-q", f"--base={base}", "-o", str(outdir), *extra, revrange)
    return outdir


class Cli:
    """Runs the installed ``napipatch`` command as a user would."""

    def __init__(self, cwd: Path, store: Path, cache: Path):
        self.cwd, self.store, self.cache = cwd, store, cache

    def __call__(self, *args, input=None, check=None, env=None) -> subprocess.CompletedProcess:
        e = dict(os.environ, NAPIPATCH_SERIES_DIR=str(self.store),
                 XDG_CACHE_HOME=str(self.cache), COLUMNS="200")
        # Tests share the prepared tree through NAPIPATCH_TEST_TREE, not
        # through the cache dir they isolate.
        e.update(env or {})
        cp = subprocess.run([sys.executable, "-m", "napipatch", *map(str, args)], cwd=self.cwd,
                            input=input, capture_output=True, text=True, env=e)
        if check is not None:
            assert cp.returncode == check, (cp.returncode, cp.stdout[-3000:], cp.stderr[-3000:])
        return cp


# What napipatch derives from a base commit alone, shared by every test of a
# run: the trusted scripts exported from the base (napipatch/tree/trusted.py)
# and the base's grep results (napipatch/tree/treegrep.py), both keyed by the
# base commit and made under lock files for processes sharing a cache. Each
# test's cache is otherwise its own (results, applied series, b4); without
# this, each test exported the same scripts and grepped the same 86,000 files
# again: about 3 of the 5 CPU seconds of a small `check --tree`.
SHARED_CACHES = ("trusted", "grep")


@pytest.fixture(scope="session")
def shared_base_cache(tmp_path_factory) -> Path:
    base = tmp_path_factory.getbasetemp()
    # under xdist each worker's basetemp sits in the run's own directory
    d = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "shared-cache"
    for sub in SHARED_CACHES:
        (d / sub).mkdir(parents=True, exist_ok=True)
    return d


def own_cache(cache: Path, shared_base_cache: Path) -> Path:
    """``cache`` as a test's XDG_CACHE_HOME: its results its own, the base's
    trusted scripts and grep results the run's."""
    (cache / "napipatch").mkdir(parents=True)
    for sub in SHARED_CACHES:
        (cache / "napipatch" / sub).symlink_to(shared_base_cache / sub, target_is_directory=True)
    return cache


@pytest.fixture
def cli(tmp_path, shared_base_cache) -> Cli:
    return Cli(tmp_path, tmp_path / "series", own_cache(tmp_path / "cache", shared_base_cache))


@pytest.fixture(scope="session")
def lore_dir() -> Path:
    assert LORE.is_dir(), f"{LORE} missing"
    return LORE


def one_patch(repo: Path, base: str, tmp_path: Path, changes: dict, subject: str,
              name: str = "mail") -> tuple[Path, str]:
    """A one-commit series on ``base`` made with format-patch: (directory, commit)."""
    c = commit_files(repo, base, changes, subject if "\n" in subject else f"{subject}\n\nTest fixture.\n")
    return format_patch(repo, f"{base}..{c}", tmp_path / name), c


def check_json(cli, target, check_id: str, *args) -> dict:
    """``napipatch check TARGET --only ID --format json``, asserting the
    check completed (pass, info, warn or fail): a skipped check (no --tree)
    finds nothing, so "no findings" from it would prove nothing."""
    cp = cli("check", target, *args, "--only", check_id, "--format", "json")
    assert cp.returncode in (0, 1), cp.stderr
    data = json.loads(cp.stdout)
    ran = {c["id"]: (c["status"], c["reason"]) for c in data["checks"]}
    assert ran.get(check_id, ("",))[0] in COMPLETED, (ran, data["findings"])
    assert cp.returncode == (1 if data["summary"]["errors"] else 0)
    return data


def check_skipped(cli, target, check_id: str, *args) -> str:
    """``napipatch check TARGET`` (every check), asserting ID was not run
    (status ``skipped``, no findings); the reason it gives. (Named by
    ``--only``, a check that cannot run is an error, exit 2.)"""
    cp = cli("check", target, *args, "--format", "json")
    assert cp.returncode in (0, 1, 2), cp.stderr
    data = json.loads(cp.stdout)
    (got,) = [c for c in data["checks"] if c["id"] == check_id]
    assert got["status"] == "skipped", (got, data["findings"])
    assert [f for f in data["findings"] if f["check"] == check_id] == []
    return got["reason"]


def check_findings(cli, target, check_id: str, *args) -> list[dict]:
    return [f for f in check_json(cli, target, check_id, *args)["findings"]
            if f["check"] == check_id]


def nipa_states(data: dict, context: str) -> list[str]:
    """The NIPA forecast's state for ``context`` on each patch of a JSON report."""
    return [p["nipa"][context]["state"] for p in data["series"]["patches"]]


# ------------------------------------------------- a loopback "remote host"
# OpenSSH's sshd on 127.0.0.1 with a key of the test's own, and a veth pair
# in two network namespaces for the plan's interface (v0, peer 10.99.0.2):
# the remote (idpf) job's host in test_distributed.py and in the remote
# check's fixtures. With boot = "none" the kernel is only copied there and
# the plan runs on this machine's kernel.
def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port: int, timeout: float = 20) -> None:
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise AssertionError(f"nothing listens on {port}")


@pytest.fixture
def sshd(tmp_path):
    exe = shutil.which("sshd") or "/usr/sbin/sshd"
    assert Path(exe).exists(), "sshd missing: run scripts/install.sh (openssh-server)"
    d = tmp_path / "sshd"
    d.mkdir()
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(d / "host")], check=True)
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(d / "user")], check=True)
    (d / "authorized_keys").write_text((d / "user.pub").read_text())
    os.chmod(d / "authorized_keys", 0o600)
    Path("/run/sshd").mkdir(exist_ok=True)  # sshd's privilege separation dir
    port = free_port()
    (d / "config").write_text(
        f"Port {port}\nListenAddress 127.0.0.1\nHostKey {d / 'host'}\n"
        f"AuthorizedKeysFile {d / 'authorized_keys'}\nPermitRootLogin prohibit-password\n"
        f"StrictModes no\nUsePAM no\nPidFile {d / 'pid'}\nPasswordAuthentication no\n"
        "Subsystem sftp /usr/lib/openssh/sftp-server\n")
    p = subprocess.Popen([exe, "-D", "-e", "-f", str(d / "config")], stdout=subprocess.DEVNULL,
                         stderr=open(d / "log", "w"))
    wait_port(port)
    yield port, d / "user"
    p.kill()
    p.wait()


@pytest.fixture
def veth_netns():
    tag = uuid.uuid4().hex[:6]
    a, b = f"np-a-{tag}", f"np-b-{tag}"
    sh = f"""set -e
ip netns add {a}; ip netns add {b}
ip -n {a} link add v0 type veth peer name v1 netns {b}
ip netns exec {a} ethtool -K v0 gro on
ip -n {b} addr add 10.99.0.2/24 dev v1
ip -n {a} link set lo up; ip -n {b} link set lo up; ip -n {b} link set v1 up
"""
    subprocess.run(["sh", "-c", sh], check=True)
    yield a
    subprocess.run(["sh", "-c", f"ip netns del {a}; ip netns del {b}"], check=False)


def ssh_host(port, key, netns, boot="none", **extra) -> dict:
    """The loopback host as a RemoteJob's ``host``. The host key is checked
    (accept-new) against a known_hosts file of the test's own, never the user's."""
    return {"host": "127.0.0.1", "port": port, "key": str(key), "iface": "v0", "boot": boot,
            "peer": "10.99.0.2", "addr": "10.99.0.1/24", "netns": netns,
            "known_hosts": str(Path(key).parent / "known_hosts"), **extra}


def remote_report(res, kernel_tree: Path, base_commit: str):
    """The report a user gets from a RemoteJob's result ``res``: v5's series
    with the remote check's result and findings added (its exit code, text)."""
    from napipatch.engine.registry import discover
    from napipatch.mails.mbox import read_patch_dir
    from napipatch.mails.series import assemble
    from napipatch.pipeline.jobchecks import results_of
    from napipatch.report.model import build

    v5 = ROOT / "series/threaded-busy-poll/v5"
    return build(assemble(read_patch_dir(v5), str(v5)), results_of([discover()["remote"]], res),
                 tree=str(kernel_tree), base=base_commit, base_why="test")


def host_gitconfig(path: Path, host: dict, target: str = "idpf") -> Path:
    """A git config file (for GIT_CONFIG_GLOBAL) that gives ``target`` the
    host ``host`` (ssh_host()'s keys) as ``napipatch.TARGET.*``."""
    lines = [f'[napipatch "{target}"]']
    lines += [f"\t{k.replace('_', '-')} = {v}" for k, v in host.items() if v != ""]
    path.write_text("\n".join(lines) + "\n")
    return path
