"""Fixup commits on the user's branch: the git side of ``napipatch fix``.

What a fix may do to the user's repository is narrow, and said here: it
refuses a repository it could hurt (uncommitted changes to tracked files,
a detached HEAD, a range that is not a straight line of commits), builds
each fixup with a temporary index and ``git commit-tree`` (the user's
index, files and branch untouched meanwhile), then moves the branch and
the work tree together from the old HEAD to the last fixup, and back when
the ref cannot move. Untracked files are never touched: ``read-tree -m
-u`` refuses to overwrite one.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

from napipatch.errors import GitError, NapipatchError
from napipatch.tree.gitutil import git, require_repo, resolve


@dataclass(frozen=True)
class Range:
    """BASE..TIP in ``repo``, oldest commit first; ``branch`` and ``head``
    are the checked-out branch and its commit ("" when not asked)."""

    repo: Path
    base: str
    tip: str
    commits: list[str]
    branch: str = ""
    head: str = ""


def straight_range(repo: Path, revrange: str) -> Range:
    """BASE..TIP as a straight line of commits: a one-line error (exit 2)
    for another range, a merge in it, or a BASE that is not under TIP."""
    repo = require_repo(repo)
    if revrange.count("..") != 1 or "..." in revrange:
        raise NapipatchError(revrange, "not a range BASE..HEAD")
    left, right = revrange.split("..")
    base, tip = resolve(repo, left or "HEAD"), resolve(repo, right or "HEAD")
    if base is None or tip is None:
        raise NapipatchError(revrange, f"no commit {left if base is None else right!r} in {repo}")
    merges = git(repo, "rev-list", "--merges", f"{base}..{tip}").stdout.split()
    if merges:
        raise NapipatchError(revrange, f"not a straight line of commits: {merges[-1][:12]} "
                             "is a merge")
    if git(repo, "merge-base", "--is-ancestor", base, tip, check=False).returncode != 0:
        raise NapipatchError(revrange, "not a straight line of commits: BASE is not an "
                             "ancestor of HEAD")
    commits = git(repo, "rev-list", "--reverse", f"{base}..{tip}").stdout.split()
    if not commits:
        raise NapipatchError(revrange, "no commits in range")
    return Range(repo, base, tip, commits)


def writable(rng: Range) -> Range:
    """``rng`` on a repository fix may commit to: a branch checked out, no
    uncommitted change to a tracked file, TIP on that branch."""
    ref = git(rng.repo, "symbolic-ref", "-q", "HEAD", check=False).stdout.strip()
    if not ref.startswith("refs/heads/"):
        raise NapipatchError(rng.repo, "HEAD is detached: check out the branch holding the "
                             "commits (fix commits on top of it)")
    dirty = git(rng.repo, "status", "--porcelain", "--untracked-files=no").stdout.splitlines()
    if dirty:
        raise NapipatchError(rng.repo, f"has uncommitted changes to tracked files "
                             f"({dirty[0][3:]}{' ...' if len(dirty) > 1 else ''}): commit or "
                             "stash them first")
    head = resolve(rng.repo, "HEAD")
    if git(rng.repo, "merge-base", "--is-ancestor", rng.tip, head, check=False).returncode:
        raise NapipatchError(rng.tip[:12], f"is not on the branch {ref[11:]}: fix commits on "
                             "top of the branch holding the range")
    return Range(rng.repo, rng.base, rng.tip, rng.commits, ref, head)


def text_at(repo: Path, rev: str, path: str) -> str | None:
    """The UTF-8 text of ``path`` at ``rev``; None when absent or not text."""
    cp = git(repo, "cat-file", "blob", f"{rev}:{path}", check=False, text=False)
    if cp.returncode != 0:
        return None
    try:
        return cp.stdout.decode()
    except UnicodeDecodeError:
        return None


def subject_of(repo: Path, rev: str) -> str:
    return git(repo, "log", "-1", "--format=%s", rev).stdout.strip()


def message_of(repo: Path, rev: str) -> str:
    """The whole commit message of ``rev``, as ``git commit --fixup=amend:`` copies it."""
    return git(repo, "log", "-1", "--format=%B", rev).stdout.rstrip("\n") + "\n"


def with_trailers(repo: Path, message: str, trailers: list[str]) -> str:
    """``message`` with ``trailers`` added to its trailer block, where git
    puts them (``git interpret-trailers``; one already there is kept once)."""
    args = [a for t in trailers for a in ("--trailer", t)]
    return git(repo, "interpret-trailers", "--if-exists", "addIfDifferent", *args,
               input=message).stdout


def merge3(base: str, ours: str, theirs: str) -> str | None:
    """``git merge-file`` of three texts: ``theirs``' change to ``base``
    carried onto ``ours``; None when they conflict."""
    with tempfile.TemporaryDirectory(prefix="napipatch-fix-") as td:
        names = []
        for name, text in (("ours", ours), ("base", base), ("theirs", theirs)):
            (Path(td) / name).write_text(text)
            names.append(str(Path(td) / name))
        cp = git(None, "merge-file", "-p", *names, check=False)
    return cp.stdout if cp.returncode == 0 else None


def commit_files(repo: Path, parent: str, files: dict[str, str], message: str) -> str:
    """A commit on ``parent`` with ``files`` ({path: text}) written, as the
    user (their identity, now), through a temporary index: no ref moves."""
    with tempfile.TemporaryDirectory(prefix="napipatch-fix-") as td:
        env = {"GIT_INDEX_FILE": str(Path(td) / "index")}
        git(repo, "read-tree", parent, env=env)
        for path, text in sorted(files.items()):
            blob = git(repo, "hash-object", "-w", "--stdin", input=text).stdout.strip()
            old = git(repo, "ls-files", "-s", "--", path, env=env).stdout.split(" ", 1)[0]
            mode = old if old in ("100644", "100755") else "100644"
            git(repo, "update-index", "--add", "--cacheinfo", f"{mode},{blob},{path}", env=env)
        tree = git(repo, "write-tree", env=env).stdout.strip()
    return git(repo, "commit-tree", tree, "-p", parent, "-F", "-", input=message).stdout.strip()


def move_branch(rng: Range, new: str) -> None:
    """The branch, the index and the work tree from ``rng.head`` to ``new``
    together (a fast-forward); when the ref cannot move, the index and the
    files go back and the branch stays where it was."""
    git(rng.repo, "read-tree", "-m", "-u", rng.head, new)
    try:
        git(rng.repo, "update-ref", "-m", "napipatch fix", rng.branch, new, rng.head)
    except GitError:
        git(rng.repo, "read-tree", "-m", "-u", new, rng.head, check=False)
        raise
