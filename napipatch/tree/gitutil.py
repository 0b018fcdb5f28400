"""The git layer: the one place napipatch starts git.

Built on GitPython where it has a call: finding a repository
(``is_repo``, ``require_repo``), walking revisions (``rev_list``) and
reading objects through its persistent ``git cat-file --batch``
(``ObjectReader``, gitrepo.py, which also keeps those processes apart
across the engine's forks). What GitPython has no call for (a temporary
index with ``apply --cached``, ``commit-tree``, ``am``, ``send-email``)
runs through ``git()`` here, which turns a failure into one GitError line
with git's own words.

No module outside napipatch/tree/ imports GitPython or runs git itself
(tests/test_layout.py); config.py reads git config on its own because the
configuration sits below every layer.
"""

from __future__ import annotations

import os
from pathlib import Path

import git as gitpython

from napipatch import procs
from napipatch.errors import GitError, NapipatchError
from napipatch.tree.gitrepo import ObjectReader, open_repo

__all__ = ["NAPIPATCH_IDENT", "ObjectReader", "TempIndex", "commit_tree", "git", "is_repo", "out",
           "require_repo", "resolve", "rev_list", "send_email", "why"]

# Commits napipatch creates (applied series, prepared trees) carry this
# identity so they are recognisable and reproducible.
NAPIPATCH_IDENT = {
    "GIT_COMMITTER_NAME": "napipatch",
    "GIT_COMMITTER_EMAIL": "napipatch@localhost",
}


def why(stderr: str, status: int) -> str:
    """git's reason for a failure: its ``fatal:`` line (hints follow it),
    else its last line."""
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
    fatal = [ln for ln in lines if ln.startswith("fatal: ")]
    last = fatal[0] if fatal else lines[-1] if lines else f"exit status {status}"
    return last.removeprefix("fatal: ").removeprefix("error: ")


def _run(cmd: list[str], env: dict, input, text: bool, timeout, cwd=None):
    # procs: past its deadline git is killed with what it started (a hook,
    # a filter); it reads no terminal input of ours (stdin: /dev/null)
    return procs.run(cmd, timeout=timeout, input=input, env=env, text=text, cwd=cwd,
                     package="git")


def git(repo: Path | str | None, *args: str, input: str | bytes | None = None,
        env: dict | None = None, check: bool = True, text: bool = True,
        timeout: float | None = None) -> procs.CompletedProcess:
    """``git -C repo ARGS``; with ``check``, a failure is a GitError."""
    cmd = ["git"]
    if repo is not None:
        cmd += ["-C", str(repo)]
    cmd += list(args)
    full_env = dict(os.environ)
    # A user's pager or editor must never block us; C messages are parsed.
    full_env.update({"GIT_PAGER": "cat", "GIT_EDITOR": "true", "LC_ALL": "C"})
    if env:
        full_env.update(env)
    if isinstance(input, str) and not text:
        input = input.encode()
    cp = _run(cmd, full_env, input, text, timeout)
    if check and cp.returncode != 0:
        err = cp.stderr if text else cp.stderr.decode(errors="replace")
        raise GitError(f"git {args[0]}", why(err, cp.returncode))
    return cp


def patch_id(diff: str) -> str | None:
    """``git patch-id --stable`` of a diff: equal for the same change, even
    moved to other lines or rebased (no repository needed). None for an
    empty diff."""
    if not diff.strip():
        return None
    cp = git(None, "patch-id", "--stable", input=diff.encode("utf-8", "replace"), text=False,
             check=False)
    got = cp.stdout.decode(errors="replace").split()
    return got[0] if cp.returncode == 0 and got else None


def out(repo, *args, **kw) -> str:
    return git(repo, *args, **kw).stdout.strip()


def send_email(cwd: Path, args: list[str], env: dict) -> procs.CompletedProcess:
    """``git send-email ARGS`` run in ``cwd`` as the user would run it (their
    locale: it writes mail headers), never waiting on a terminal."""
    return _run(["git", "send-email", *args], dict(os.environ, GIT_PAGER="cat", **env), None,
                True, None, cwd=cwd)


# ------------------------------------------------------------ repositories
def _discover(path: Path | str) -> gitpython.Repo | None:
    try:
        return open_repo(path, search=True)
    except (gitpython.InvalidGitRepositoryError, gitpython.NoSuchPathError):
        return None


def is_repo(path: Path) -> bool:
    """``path`` is in a git repository (a bare one too)."""
    return _discover(path) is not None


def require_repo(path: Path) -> Path:
    """The top of the work tree holding ``path``; an error when there is none."""
    path = Path(path).resolve()
    repo = _discover(path) if path.is_dir() else None
    if repo is None:
        raise NapipatchError(path, "not a git repository")
    if not repo.working_tree_dir:
        raise NapipatchError(path, "is a bare repository: napipatch needs one with a work tree")
    return Path(repo.working_tree_dir)


# --------------------------------------------------------------- revisions
def resolve(repo: Path, rev: str) -> str | None:
    cp = git(repo, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}", check=False)
    return cp.stdout.strip() if cp.returncode == 0 else None


def rev_list(repo: Path, revrange: str, max_count: int | None = None,
             no_merges: bool = False) -> list[str]:
    """The commits of ``revrange``, newest first (git rev-list, by GitPython).
    A bad range is a NapipatchError naming it, with git's reason."""
    opts = {"no_merges": no_merges}
    if max_count is not None:
        opts["max_count"] = max_count
    g = open_repo(repo, search=True).git
    # with_exceptions=False: git's own stderr, not GitPython's wrapper of it.
    # --end-of-options: a range is never an option; "--": nor a path.
    status, stdout, stderr = g.rev_list("--end-of-options", revrange, "--",
                                        with_extended_output=True, with_exceptions=False, **opts)
    if status != 0:
        raise NapipatchError(revrange, why(stderr, status))
    return stdout.split()


# -------------------------------------------------------------- plumbing
def commit_tree(repo: Path, tree: str, parent: str, message: str, author: str, email: str,
                date: str) -> str:
    """A commit of ``tree`` on ``parent`` (no ref moves), by napipatch, with
    ``date`` as both dates: the same inputs give the same commit."""
    env = dict(NAPIPATCH_IDENT, GIT_AUTHOR_NAME=author, GIT_AUTHOR_EMAIL=email,
               GIT_AUTHOR_DATE=date, GIT_COMMITTER_DATE=date)
    return out(repo, "commit-tree", tree, "-p", parent, "-F", "-", input=message, env=env)


class TempIndex:
    """An index file of napipatch's own (``GIT_INDEX_FILE``) in ``repo``:
    ``git apply --cached`` and ``write-tree`` work on it, the user's index,
    branch and files are never touched."""

    def __init__(self, repo: Path, path: Path, **env: str):
        self.repo = repo
        self.env = {"GIT_INDEX_FILE": str(path), **env}

    def git(self, *args: str, **kw) -> procs.CompletedProcess:
        return git(self.repo, *args, env=self.env, **kw)

    def apply(self, patch: Path) -> procs.CompletedProcess:
        """``git apply --cached`` of the patch file; its result, failed or not."""
        return self.git("apply", "--cached", "--whitespace=nowarn", str(patch), check=False)
