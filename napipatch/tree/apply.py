"""Applying a series onto its base in a real kernel tree.

Two ways, one result type (applied.py), one patch-by-patch walk:
- ``apply_in_index``: a temporary index, ``git apply --cached`` and ``git
  commit-tree`` per patch. No checkout at all (a full 6.12 checkout costs
  ~24 s), the user's branch, index and files are never touched, and the
  commits it makes are reproducible (fixed dates), so the checks can read
  pre/post files by commit and cache by them (applycache.py). The index
  holds only the paths the series touches (sparseapply.py); a failure, or
  a change that index cannot express, is settled by an index of the whole
  base, whose error messages are the reference.
- ``apply_in_worktree``: ``git worktree add`` at the base and ``git am``
  per patch, for ``series apply`` where the user wants files on disk.

Which base (basechoice.py) and why a patch failed (applyerrors.py) are
the same for both.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Callable

from napipatch import procs
from napipatch.errors import GitError, NapipatchError
from napipatch.mails.series import Series
from napipatch.tree import applycache, gitutil
from napipatch.tree.applied import Applied, ApplyFailure
from napipatch.tree.applyerrors import failure
from napipatch.tree.basechoice import choose_base
from napipatch.tree.sparseapply import SparseIndex, touched
from napipatch.tree.treebuild import TreeBuildError

__all__ = ["apply_in_index", "apply_in_worktree"]

# One patch: its commit, or why it failed.
Step = Callable[[int], "str | ApplyFailure"]


def _walk(res: Applied, count: int, step: Step) -> None:
    """``step`` each patch in order until one fails; every patch gets its
    entry in ``res.commits``, None from the failed one on."""
    for i in range(1, count + 1):
        got = step(i) if res.failure is None else None
        if isinstance(got, ApplyFailure):
            res.failure, got = got, None
        res.commits.append(got)


class _Mail:
    """One patch mail split by ``git mailinfo``: the author, date and
    message for commit-tree, and the diff as a file for git apply."""

    def __init__(self, repo: Path, text: str, td: Path, n: int):
        msgf, self.patchf = td / f"msg{n}", td / f"patch{n}"
        cp = gitutil.git(repo, "mailinfo", "--encoding=UTF-8", str(msgf), str(self.patchf),
                         input=text)
        self.info = {}
        for line in cp.stdout.splitlines():
            k, _, v = line.partition(": ")
            self.info[k] = v
        self.message = self.info.get("Subject", "") + "\n\n" + msgf.read_text(errors="replace")

    @property
    def empty(self) -> bool:
        return not self.patchf.read_text(errors="replace").strip()

    def commit(self, repo: Path, tree: str, parent: str) -> str:
        return gitutil.commit_tree(repo, tree, parent, self.message,
                                   self.info.get("Author", "unknown"),
                                   self.info.get("Email", "unknown@invalid"),
                                   self.info.get("Date") or "1970-01-01T00:00:00Z")


class _FullIndex:
    """A temporary index of the whole base tree."""

    def __init__(self, repo: Path, base: str, index_file: Path):
        # Index v4 (prefix-compressed paths) is a third smaller for a kernel
        # tree, and every apply and write-tree reads and writes all of it.
        self.index = gitutil.TempIndex(repo, index_file, GIT_INDEX_VERSION="4")
        self.index.git("read-tree", base)

    def apply(self, patchf: Path) -> procs.CompletedProcess:
        return self.index.apply(patchf)

    def tree(self) -> str:
        return self.index.git("write-tree").stdout.strip()

    def close(self) -> None:
        pass


def _in_index(repo: Path, series: Series, res: Applied, mails: list[_Mail], index) -> None:
    """Apply every patch to ``index`` and commit each tree on the last."""
    parent = [res.base]

    def step(i: int) -> str | ApplyFailure:
        mail = mails[i - 1]
        if mail.empty:
            return ApplyFailure(i, None, None, None, "has no diff")
        cp = index.apply(mail.patchf)
        if cp.returncode != 0:
            return failure(i, series.patches[i - 1].diff, cp.stderr)
        parent[0] = mail.commit(repo, index.tree(), parent[0])
        return parent[0]

    try:
        _walk(res, len(series.patches), step)
    finally:
        index.close()


def _apply(repo: Path, series: Series, res: Applied) -> None:
    with tempfile.TemporaryDirectory(prefix="napipatch-idx-") as tdname:
        td = Path(tdname)
        mails = [_Mail(repo, p.as_format_patch(), td, i) for i, p in enumerate(series.patches, 1)]
        try:
            paths = sorted(set().union(*(touched(repo, m.patchf) for m in mails)))
            _in_index(repo, series, res, mails, SparseIndex(repo, res.base, paths,
                                                            td / "sparse-index"))
            if res.failure is None:
                return
        except (TreeBuildError, GitError, ValueError, IndexError):
            pass
        # A failure, or something the sparse index cannot express: the full
        # index has the last word, and its error messages are the reference.
        res.commits, res.failure = [], None
        _in_index(repo, series, res, mails, _FullIndex(repo, res.base, td / "index"))


def apply_in_index(repo: Path, series: Series, base: str | None = None,
                   cache: Path | None = None) -> Applied:
    """Apply with a temporary index; with ``cache``, reuse an earlier run's commits."""
    repo = gitutil.require_repo(repo)
    sha, why = choose_base(repo, series, base)
    res = Applied(repo=repo, base=sha, base_why=why)
    f = applycache.entry(cache, sha, series) if cache else None
    if f is not None and (hit := applycache.load(f, res, len(series.patches))) is not None:
        return hit
    _apply(repo, series, res)
    if f is not None:
        applycache.save(f, res)
    return res


def apply_in_worktree(repo: Path, series: Series, path: Path, base: str | None = None) -> Applied:
    """``git worktree add`` at the base, then ``git am`` each patch.

    On failure the worktree is removed again: nothing is left half-applied,
    and the user's own checkout is never involved.
    """
    repo = gitutil.require_repo(repo)
    sha, why = choose_base(repo, series, base)
    path = Path(path).resolve()
    if path.exists() and any(path.iterdir()):
        raise NapipatchError(path, "already exists and is not empty")
    gitutil.git(repo, "worktree", "add", "--detach", str(path), sha)
    res = Applied(repo=repo, base=sha, base_why=why)

    def step(i: int) -> str | ApplyFailure:
        p = series.patches[i - 1]
        cp = gitutil.git(path, "am", "--keep-cr", "--whitespace=nowarn",
                         input=p.as_format_patch(), env=dict(gitutil.NAPIPATCH_IDENT),
                         check=False)
        if cp.returncode != 0:
            gitutil.git(path, "am", "--abort", check=False)
            return failure(i, p.diff, cp.stderr + cp.stdout)
        return gitutil.out(path, "rev-parse", "HEAD")

    try:
        _walk(res, len(series.patches), step)
    finally:
        if res.failure:
            gitutil.git(repo, "worktree", "remove", "--force", str(path), check=False)
            shutil.rmtree(path, ignore_errors=True)
            gitutil.git(repo, "worktree", "prune", check=False)
    return res
