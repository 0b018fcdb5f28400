"""A cached result is reused only while what the check read still reads the same.

The key of a result fixes the check's code, the mails and the base commit.
What else a check reads (a config value, a revision resolved in the tree,
the branch the caller named) is recorded beside the result and checked on
reuse, so a changed setting or a fetch is never answered from the cache.
"""

from __future__ import annotations

import json

from conftest import commit_files, format_patch, git, small_repo


def _report(cli, *args) -> dict:
    cp = cli("check", *args, "--format", "json")
    assert cp.returncode in (0, 1), cp.stderr
    return json.loads(cp.stdout)


def _found(data: dict, check: str) -> list[str]:
    return [f["message"] for f in data["findings"] if f["check"] == check]


def _cached(data: dict, check: str) -> bool:
    return next(c["cached"] for c in data["checks"] if c["id"] == check)


def _advance(repo, ref: str, n: int) -> str:
    tip = git(repo, "rev-parse", ref)
    for i in range(n):
        tip = commit_files(repo, tip, {f"n{i}.txt": f"{i}\n"}, f"more {i}\n")
    git(repo, "update-ref", f"refs/heads/{ref}", tip)   # as a fetch moves a branch
    return tip


def _root(repo) -> str:
    """An empty root commit to build on."""
    return git(repo, "commit-tree", git(repo, "mktree", input=""), "-m", "root")


def test_base_commit_follows_the_setting_and_the_branch(cli, tmp_path):
    repo = small_repo(tmp_path / "repo")
    base = commit_files(repo, _root(repo), {"a.c": "int a;\n"}, "base\n")
    git(repo, "update-ref", "refs/heads/main", base)
    patch = commit_files(repo, base, {"a.c": "int a;\nint b;\n"}, "a: add b\n")
    mails = format_patch(repo, f"{base}..{patch}", tmp_path / "out")
    _advance(repo, "main", 3)
    git(repo, "config", "napipatch.base-behind-warn", "2")
    args = (mails, "--tree", repo, "--base", "main", "--only", "base-commit")

    first = _report(cli, *args)
    assert _found(first, "base-commit") == [f"base-commit {base[:12]} is 3 commits behind main"]
    again = _report(cli, *args)
    assert _cached(again, "base-commit") and _found(again, "base-commit") == _found(first, "base-commit")

    git(repo, "config", "napipatch.base-behind-warn", "10")      # a changed setting
    relaxed = _report(cli, *args)
    assert not _cached(relaxed, "base-commit") and _found(relaxed, "base-commit") == []

    _advance(repo, "main", 10)                                      # a fetch
    fetched = _report(cli, *args)
    assert _found(fetched, "base-commit") == [f"base-commit {base[:12]} is 13 commits behind main"]

    # Measured against the branch the caller names; with none, not at all
    # (HEAD of a checkout says nothing about the branch a series goes to).
    unnamed = _report(cli, mails, "--tree", repo, "--only", "base-commit")
    assert _found(unnamed, "base-commit") == []


def test_fixes_lookup_follows_the_repository(cli, tmp_path):
    repo = small_repo(tmp_path / "repo")
    base = commit_files(repo, _root(repo), {"a.c": "int a;\n"}, "base\n")
    git(repo, "update-ref", "refs/heads/main", base)
    # The fixed commit exists elsewhere first (a tree not fetched yet).
    other = tmp_path / "other"
    git(tmp_path, "clone", "-q", "--bare", str(repo), str(other))
    culprit = commit_files(other, base, {"b.c": "int b;\n"}, "b: add b\n")
    git(other, "update-ref", "refs/heads/culprit", culprit)
    patch = commit_files(repo, base, {"a.c": "int a = 1;\n"},
                         f"a: initialise a\n\nFixes: {culprit[:12]} (\"b: add b\")\n"
                         "Signed-off-by: Test Author <author@example.org>\n")
    mails = format_patch(repo, f"{base}..{patch}", tmp_path / "out")
    args = (mails, "--tree", repo, "--only", "fixes-tag")
    tag = f"Fixes: {culprit[:12]} (\"b: add b\")"

    before = _report(cli, *args)
    assert _found(before, "fixes-tag") == \
        [f"{tag}: the tree has no such commit (or the SHA1 is ambiguous)"]
    assert _cached(_report(cli, *args), "fixes-tag")

    git(repo, "fetch", "-q", str(other), "culprit")               # now the tree has it
    after = _report(cli, *args)
    assert not _cached(after, "fixes-tag")
    # ... on a branch the patch is not on.
    assert _found(after, "fixes-tag") == [f"{tag}: {culprit[:12]} is not an ancestor of the "
                                          "patch's base"]
