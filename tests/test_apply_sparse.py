"""Applying with an index of only the touched paths makes the same trees as
the commits the patches came from, and the same commits as a full index;
a patch that does not apply is reported alike by either index and by the
worktree way (git am).

The oracle is git itself: a small repository whose commits are turned into
a series with ``git format-patch``; applying the series must give back each
commit's tree. The changes cover what a tree rewrite can get wrong: new
nested directories, a directory emptied, renames, a mode change, a symlink,
a binary file, names that sort differently as directories.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

from napipatch.tree import apply as A
from napipatch.tree.applied import Applied
from napipatch.store.inputs import resolve
from napipatch.store.store import Store

from conftest import git, small_repo


def _step(repo: Path, msg: str, do) -> None:
    do(repo)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", msg)


@pytest.fixture
def series_repo(tmp_path):
    r = small_repo(tmp_path / "repo")

    def base(r):
        for p in ("a/b/c.c", "a/b/d.h", "a/b.c", "a-b/x", "a.b", "gone/only.txt", "z"):
            (r / p).parent.mkdir(parents=True, exist_ok=True)
            (r / p).write_text(f"{p}\nline 2\nline 3\n")
    _step(r, "base", base)
    base_sha = git(r, "rev-parse", "HEAD")

    def p1(r):
        (r / "a/b/c.c").write_text("a/b/c.c\nline 2 changed\nline 3\n")
        (r / "new/deep/dir").mkdir(parents=True)
        (r / "new/deep/dir/f.c").write_text("new\n")
        (r / "gone/only.txt").unlink()                       # the directory goes too
        (r / "a/b/d.h").chmod(0o755)                         # mode change
    _step(r, "one", p1)

    def p2(r):
        os.rename(r / "a.b", r / "a/b/renamed.b")            # rename across directories
        os.symlink("c.c", r / "a/b/link")                    # a symlink
        (r / "a/blob.bin").write_bytes(bytes(range(256)) * 4)   # binary
        (r / "z").write_text("z\nline 2\nline 3\nmore\n")
    _step(r, "two", p2)
    out = tmp_path / "mail"
    git(r, "format-patch", "-q", "--binary", f"--base={base_sha}", "-o", str(out),
        f"{base_sha}..HEAD")
    return r, base_sha, out


def _trees(repo: Path, commits) -> list[str]:
    return [git(repo, "rev-parse", f"{c}^{{tree}}") for c in commits]


def _no_fallback(*a, **k):
    raise AssertionError("fell back to the full index")


def _full_index_way(repo: Path, series, got: Applied) -> Applied:
    """``series`` applied on ``got``'s base with an index of the whole tree."""
    full = Applied(repo=repo, base=got.base, base_why=got.base_why)
    with tempfile.TemporaryDirectory() as td:
        mails = [A._Mail(repo, p.as_format_patch(), Path(td), i)
                 for i, p in enumerate(series.patches, 1)]
        A._in_index(repo, series, full, mails, A._FullIndex(repo, got.base, Path(td) / "index"))
    return full


def test_sparse_apply_gives_the_original_trees(series_repo, tmp_path, monkeypatch):
    r, base, out = series_repo
    series = resolve(str(out), Store(tmp_path / "store"), r)
    with monkeypatch.context() as m:
        m.setattr(A, "_FullIndex", _no_fallback)
        got = A.apply_in_index(r, series)
    assert got.failure is None
    originals = git(r, "rev-list", "--reverse", f"{base}..HEAD").split()
    assert _trees(r, got.commits) == _trees(r, originals)
    # The same commits as the full-index way.
    assert _full_index_way(r, series, got).commits == got.commits


def _break_patch_2(out: Path) -> None:
    """Patch 2 expects a line the tree does not have."""
    f = sorted(out.glob("0002-*.patch"))[0]
    f.write_text(f.read_text().replace(" line 2\n line 3\n+more", " line 2\n line X\n+more"))


NOT_2 = "patch 2 does not apply: z hunk #1 (at line 1): context does not match the tree"


def test_a_failing_patch_is_reported_as_the_full_index_reports_it(series_repo, tmp_path):
    r, base, out = series_repo
    _break_patch_2(out)
    series = resolve(str(out), Store(tmp_path / "store"), r)
    got = A.apply_in_index(r, series)
    assert got.commits[0] is not None and got.commits[1] is None
    assert str(got.failure) == NOT_2


def test_the_worktree_way_stopping_midway_still_says_what_each_patch_gave(series_repo, tmp_path):
    """The worktree way (``series apply``): patch 1 applies and patch 2
    does not, found before any checkout. Like the index way, the result has
    an entry per patch, so asking for patch 2's commit is None, not an
    IndexError, and no worktree is left."""
    r, base, out = series_repo
    _break_patch_2(out)
    series = resolve(str(out), Store(tmp_path / "store"), r)
    wt = tmp_path / "wt"
    got = A.apply_in_worktree(r, series, wt)
    assert str(got.failure) == NOT_2
    assert got.after(2) is None and got.before(2) == got.after(1) and got.tip is None
    assert got.good == [got.after(1)]
    first = git(r, "rev-list", "--reverse", f"{base}..HEAD").split()[0]
    assert _trees(r, [got.after(1)]) == _trees(r, [first])
    assert not wt.exists()          # nothing is left half-applied
    index_way = A.apply_in_index(r, series)
    assert [c is None for c in got.commits] == [c is None for c in index_way.commits] \
        == [False, True]


def test_a_file_where_the_base_has_a_directory_falls_back(series_repo, tmp_path):
    """A patch creating 'a/b' as a file while the base has a directory there
    cannot be expressed by the sparse index; the full index decides."""
    r, base, out = series_repo
    git(r, "checkout", "-q", "-b", "df", base)

    def dir_to_file(r):
        (r / "gone/only.txt").unlink()
        (r / "gone").rmdir()
        (r / "gone").write_text("now a file\n")
    _step(r, "dir to file", dir_to_file)
    c = git(r, "rev-parse", "HEAD")
    d = tmp_path / "df"
    git(r, "format-patch", "-q", f"--base={base}", "-o", str(d), f"{base}..{c}")
    series = resolve(str(d), Store(tmp_path / "store"), r)
    got = A.apply_in_index(r, series)
    assert got.failure is None
    assert _trees(r, got.commits) == _trees(r, [c])


@pytest.mark.tree
def test_v5_on_the_kernel_tree_gives_the_full_index_commits(kernel_tree, monkeypatch):
    store = Store(Path(__file__).resolve().parent.parent / "series")
    series = resolve("threaded-busy-poll@v5", store, kernel_tree)
    with monkeypatch.context() as m:
        m.setattr(A, "_FullIndex", _no_fallback)
        got = A.apply_in_index(kernel_tree, series)
    assert got.failure is None and len(got.commits) == 5
    assert _full_index_way(kernel_tree, series, got).commits == got.commits
