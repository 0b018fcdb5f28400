"""Shared fixtures: the real Linux 6.12 tree, a throwaway store, the CLI.

The kernel tree is Debian's linux-source-6.12 prepared once into a git
repository under ~/.cache/napipatch (or $NAPIPATCH_TEST_TREE) and reused
by every test run; tests never check it out or move its branch: they make
commits with a temporary index and read them back by id.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LORE = Path(__file__).resolve().parent / "fixtures" / "lore"  # copied from shared/lore
FIXTURES = Path(__file__).resolve().parent / "fixtures"
TARBALL = Path("/usr/src/linux-source-6.12.tar.xz")


# A test that (even through another fixture) uses one of these fixtures
# must carry the marker, so that `-m "not tree"` / `-m "not build"` really
# leave out every test that needs the prepared kernel tree / builds kernels.
# Collection fails otherwise: a forgotten marker cannot slip in unnoticed.
REQUIRED_MARKERS = {"kernel_tree": "tree", "build_dir": "build"}


def _unmarked(items) -> list[str]:
    """'nodeid: uses FIXTURE without @pytest.mark.MARK' for every offender."""
    return [f"{item.nodeid}: uses the {fixture} fixture but lacks @pytest.mark.{mark}"
            for item in items
            for fixture, mark in REQUIRED_MARKERS.items()
            # fixturenames is the whole closure: fixtures of fixtures count
            if fixture in getattr(item, "fixturenames", ())
            and item.get_closest_marker(mark) is None]


@pytest.hookimpl(tryfirst=True)  # before -m deselects anything: check every collected test
def pytest_collection_modifyitems(config, items):
    bad = _unmarked(items)
    if bad:
        raise pytest.UsageError("tests that need a marker they lack (see REQUIRED_MARKERS in "
                                "tests/conftest.py):\n  " + "\n  ".join(bad))


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


_IDENT = {"GIT_AUTHOR_NAME": "Test Author", "GIT_AUTHOR_EMAIL": "author@example.org",
          "GIT_COMMITTER_NAME": "Test Author", "GIT_COMMITTER_EMAIL": "author@example.org",
          "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z", "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z"}


def commit_files(repo: Path, parent: str, changes: dict[str, str | None], message: str,
                 author: tuple[str, str] | None = None) -> str:
    """A commit on ``parent`` with ``changes`` ({path: text, or None to delete}).

    Uses a temporary index: the repository's checkout and branches are
    never touched, so the shared cached tree stays pristine.
    """
    with tempfile.TemporaryDirectory() as td:
        env = {"GIT_INDEX_FILE": str(Path(td) / "index")}
        git(repo, "read-tree", parent, env=env)
        for path, text in changes.items():
            if text is None:
                git(repo, "rm", "--cached", "-q", path, env=env)
                continue
            blob = git(repo, "hash-object", "-w", "--stdin", input=text)
            git(repo, "update-index", "--add", "--cacheinfo", f"100644,{blob},{path}", env=env)
        tree = git(repo, "write-tree", env=env)
    ident = dict(_IDENT)
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


@pytest.fixture
def cli(tmp_path) -> Cli:
    store = tmp_path / "series"
    cache = tmp_path / "cache"
    return Cli(tmp_path, store, cache)


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
    """``napipatch check TARGET --only ID --format json``, asserting it ran."""
    cp = cli("check", target, *args, "--only", check_id, "--format", "json")
    assert cp.returncode in (0, 1), cp.stderr
    import json
    data = json.loads(cp.stdout)
    ran = {c["id"]: c["status"] for c in data["checks"]}
    assert ran.get(check_id) not in (None, "crashed"), (ran, data["findings"])
    assert cp.returncode == (1 if data["summary"]["errors"] else 0)
    return data


def check_findings(cli, target, check_id: str, *args) -> list[dict]:
    return [f for f in check_json(cli, target, check_id, *args)["findings"]
            if f["check"] == check_id]
