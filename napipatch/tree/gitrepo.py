"""GitPython repositories that a forked process can inherit safely.

The engine runs every check unit in a child forked from the parent
(engine/forked.py), and checks read objects through GitPython's
persistent ``git cat-file --batch``. That process belongs to the parent:
a child that wrote to its pipe would interleave requests with the
parent's and both would read the wrong answers, and a child that dropped
its copy of the ``git.Repo`` would *terminate* the parent's process
(GitPython's ``AutoInterrupt`` kills its process when garbage-collected).

So every ``git.Repo`` napipatch keeps is opened here (``open_repo``), and
in a forked child ``os.register_at_fork`` detaches each of them from the
parent's processes before any code of the child runs: the child's copies
of the pipes are pointed at /dev/null, GitPython forgets the process
without killing it, and the child's first read starts a cat-file of its
own. The parent's process carries on untouched.
"""

from __future__ import annotations

import os
import threading
import weakref
from pathlib import Path

import git

from napipatch.errors import NapipatchError

# By identity: git.Repo objects of one directory compare equal, so a
# WeakSet would keep only one of them.
_OPEN: weakref.WeakValueDictionary[int, git.Repo] = weakref.WeakValueDictionary()
_READERS: weakref.WeakValueDictionary[int, ObjectReader] = weakref.WeakValueDictionary()
_GUARD = threading.Lock()      # _OPEN/_READERS consistent at a fork
# The parent's cat-file processes as a child inherited them: kept (their
# pipes now on /dev/null) so no finaliser ever runs on them in the child.
_INHERITED: list = []
_PERSISTENT = ("cat_file_all", "cat_file_header")


def open_repo(path: Path | str, search: bool = False) -> git.Repo:
    """The repository at ``path`` (``search``: or in a directory above it).

    Raises git.InvalidGitRepositoryError or git.NoSuchPathError."""
    # expand_vars=False: a '$' in a path is a '$', not an environment variable.
    repo = git.Repo(str(path), search_parent_directories=search, expand_vars=False)
    with _GUARD:
        _OPEN[id(repo)] = repo
    return repo


def _blind(proc) -> None:
    """Point this process's copies of ``proc``'s pipes at /dev/null: closing
    or flushing them later touches nothing of the parent's."""
    null = os.open(os.devnull, os.O_RDWR)
    try:
        for f in (proc.stdin, proc.stdout, proc.stderr):
            if f is not None and not f.closed:
                os.dup2(null, f.fileno())
    finally:
        os.close(null)


def _detach(repo: git.Repo) -> None:
    for attr in _PERSISTENT:
        cmd = getattr(repo.git, attr, None)
        if cmd is None:
            continue
        proc, cmd.proc = cmd.proc, None   # AutoInterrupt._terminate: nothing to kill
        setattr(repo.git, attr, None)
        if proc is not None:
            _blind(proc)
            _INHERITED.append(proc)


def _in_child() -> None:
    global _GUARD
    _GUARD = threading.Lock()
    for repo in list(_OPEN.values()):
        _detach(repo)
    for reader in list(_READERS.values()):
        # A parent thread may have held the lock at the fork: it never
        # releases it in this process.
        reader._lock = threading.Lock()


os.register_at_fork(before=lambda: _GUARD.acquire(), after_in_parent=lambda: _GUARD.release(),
                    after_in_child=_in_child)


class ObjectReader:
    """Reads objects through GitPython's persistent ``git cat-file --batch``.

    Checks read pre- and post-patch files by object name, so no worktree
    checkout is needed (a full 6.12 checkout costs ~24 s). One process per
    reader and per process: a forked child gets its own (see above).
    """

    def __init__(self, repo: Path):
        self.repo = Path(repo)
        self._git: git.Repo | None = None
        self._lock = threading.Lock()
        with _GUARD:
            _READERS[id(self)] = self

    def read(self, rev: str, path: str) -> bytes | None:
        """A blob's content by commit and path (None: no such file)."""
        got = self.object(f"{rev}:{path}")
        return got[1] if got and got[0] == "blob" else None

    def object(self, name: str) -> tuple[str, bytes] | None:
        """(type, content) of any object name (``sha``, ``rev:dir``); None
        when git has no such object or the name is ambiguous."""
        if "\n" in name:     # one name per line: a newline would desynchronise the batch
            return None
        with self._lock:
            if self._git is None:
                try:
                    self._git = open_repo(self.repo)
                except (git.InvalidGitRepositoryError, git.NoSuchPathError):
                    raise NapipatchError(self.repo, "not a git repository") from None
            g = self._git.git
            try:
                _sha, typ, _size, data = g.get_object_data(name)
            except (ValueError, OSError):
                # git answered "missing" or "ambiguous" (one line: the batch
                # stays in step), or git died (a repository removed under
                # it, a kill): the next read starts a new one.
                if _alive(g.cat_file_all):
                    return None
                g.clear_cache()
                raise NapipatchError(self.repo, "git cat-file --batch ended early") from None
        return (typ.decode() if isinstance(typ, bytes) else typ), data

    def text(self, rev: str, path: str) -> str | None:
        data = self.read(rev, path)
        return None if data is None else data.decode("utf-8", errors="replace")

    def close(self):
        with self._lock:
            if self._git is not None:
                self._git.close()      # ends this process's cat-file (a child's own)
                self._git = None


def _alive(cmd) -> bool:
    return cmd is not None and cmd.proc is not None and cmd.proc.poll() is None
