"""The commits of the repository a developer works in, read with GitPython:
which commit a patch mail was made from, and the commits of the current
branch that its upstream does not have.

A per-patch check command (b4 prep --check, b4 am) gets one mail and no
commit id (b4 drops format-patch's ``From <sha>`` line), so the commit is
found by its subject among the branch's recent commits and confirmed by
``git patch-id``: only then do the tree checks run at its parent.
"""

from __future__ import annotations

from pathlib import Path

import git

from napipatch.mails.mail import PatchMail
from napipatch.tree import gitutil
from napipatch.tree.gitrepo import open_repo

# How far back on the current branch a mail's commit is looked for.
_SEARCH_DEPTH = 300


def _repo(path: Path) -> git.Repo:
    """The repository holding ``path``; closed by ``with``, which ends the
    cat-file GitPython started to read commits."""
    return open_repo(path, search=True)


def _patch_id(repo: git.Repo, diff: str) -> str:
    cp = gitutil.git(repo.working_tree_dir, "patch-id", "--stable", input=diff, check=False)
    return cp.stdout.split()[0] if cp.returncode == 0 and cp.stdout.strip() else ""


def commit_of(path: Path, mail: PatchMail) -> str | None:
    """The commit of the repository at ``path`` that ``mail`` was made from:
    its ``From <sha>`` line when the repository has it, else the commit on
    the current branch with the same subject and the same patch-id."""
    try:
        repo = _repo(path)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        return None
    with repo:
        return _find(repo, mail)


def _find(repo: git.Repo, mail: PatchMail) -> str | None:
    if mail.commit:
        # GitPython's repo.commit() is lazy and accepts any 40 hex digits
        # (lore mboxes say "From 0000..."): ask git whether it is a commit.
        found = gitutil.resolve(Path(repo.working_tree_dir), mail.commit)
        if found:
            return found
    if not mail.diff:
        return None
    want = None
    try:
        for c in repo.iter_commits("HEAD", max_count=_SEARCH_DEPTH):
            if c.summary != mail.subject.title or len(c.parents) != 1:
                continue
            want = want or _patch_id(repo, mail.diff)
            if want and _patch_id(repo, repo.git.show(c.hexsha, "--format=", "-p")) == want:
                return c.hexsha
    except (ValueError, git.GitCommandError):
        return None
    return None


def parent_of(path: Path, sha: str) -> str | None:
    """The first parent of ``sha``; None for a root commit."""
    with _repo(path) as repo:
        parents = repo.commit(sha).parents
        return parents[0].hexsha if parents else None


def upstream_range(path: Path) -> str | None:
    """``UPSTREAM..HEAD`` for the current branch when it has an upstream
    and commits of its own, else None."""
    with _repo(path) as repo:
        try:
            # git's own answer: a local branch (remote ".") is an upstream too.
            up = repo.git.rev_parse("--verify", "-q", "@{upstream}^{commit}")
            head = repo.head.commit.hexsha
        except (git.GitCommandError, ValueError):  # no upstream, detached, no commits
            return None
        revrange = f"{up}..{head}"
        return revrange if any(True for _ in repo.iter_commits(revrange, max_count=1)) else None
