"""Running real git: one place that spawns it and turns failures into errors."""

from __future__ import annotations

import os
import subprocess
import threading
from pathlib import Path

from napipatch.errors import GitError, NapipatchError

# Commits napipatch creates (applied series, prepared trees) carry this
# identity so they are recognisable and reproducible.
NAPIPATCH_IDENT = {
    "GIT_COMMITTER_NAME": "napipatch",
    "GIT_COMMITTER_EMAIL": "napipatch@localhost",
}


def git(repo: Path | str | None, *args: str, input: str | bytes | None = None,
        env: dict | None = None, check: bool = True, text: bool = True,
        timeout: float | None = None) -> subprocess.CompletedProcess:
    cmd = ["git"]
    if repo is not None:
        cmd += ["-C", str(repo)]
    cmd += list(args)
    full_env = dict(os.environ)
    # A user's pager or editor must never block us.
    full_env.update({"GIT_PAGER": "cat", "GIT_EDITOR": "true", "LC_ALL": "C"})
    if env:
        full_env.update(env)
    if isinstance(input, str) and not text:
        input = input.encode()
    try:
        cp = subprocess.run(cmd, input=input, capture_output=True, env=full_env,
                            text=text, timeout=timeout,
                            **({"errors": "replace"} if text else {}))
    except FileNotFoundError:
        raise NapipatchError("git", "not installed") from None
    if check and cp.returncode != 0:
        err = cp.stderr if text else cp.stderr.decode(errors="replace")
        lines = [ln for ln in err.strip().splitlines() if ln.strip()]
        last = lines[-1] if lines else f"exit status {cp.returncode}"
        raise GitError(f"git {args[0]}", last.removeprefix("fatal: ").removeprefix("error: "))
    return cp


def out(repo, *args, **kw) -> str:
    return git(repo, *args, **kw).stdout.strip()


def is_repo(path: Path) -> bool:
    return git(path, "rev-parse", "--git-dir", check=False).returncode == 0


def require_repo(path: Path) -> Path:
    path = Path(path).resolve()
    if not path.is_dir() or not is_repo(path):
        raise NapipatchError(path, "not a git repository")
    return Path(out(path, "rev-parse", "--show-toplevel"))


def resolve(repo: Path, rev: str) -> str | None:
    cp = git(repo, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}", check=False)
    return cp.stdout.strip() if cp.returncode == 0 else None


class ObjectReader:
    """Reads blobs through one long-lived ``git cat-file --batch``.

    Checks read pre- and post-patch files by object name, so no worktree
    checkout is needed (a full 6.12 checkout costs ~24 s).
    """

    def __init__(self, repo: Path):
        self.repo = repo
        self._proc: subprocess.Popen | None = None
        self._pid = os.getpid()
        self._lock = threading.Lock()

    def _start(self):
        self._proc = subprocess.Popen(
            ["git", "-C", str(self.repo), "cat-file", "--batch"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def read(self, rev: str, path: str) -> bytes | None:
        """A blob's content by commit and path (None: no such file)."""
        with self._lock:
            got = self._object(f"{rev}:{path}")
        return got[1] if got and got[0] == "blob" else None

    def object(self, name: str) -> tuple[str, bytes] | None:
        """(type, content) of any object name (``sha``, ``rev:dir``)."""
        with self._lock:
            return self._object(name)

    def _object(self, name: str) -> tuple[str, bytes] | None:
        if "\n" in name:     # one name per line: a newline would desynchronise the batch
            return None
        if self._pid != os.getpid():
            # A forked child (the engine runs each check in one) must not
            # talk to its parent's cat-file: both would read one pipe.
            self._proc, self._pid = None, os.getpid()
        if self._proc is None:
            self._start()
        p = self._proc
        assert p.stdin and p.stdout
        p.stdin.write(f"{name}\n".encode())
        p.stdin.flush()
        header = p.stdout.readline().decode()
        if not header:       # git died (a repository removed under it, a kill)
            self._proc = None
            p.wait()
            raise NapipatchError(self.repo, "git cat-file --batch ended early")
        if header.endswith("missing\n") or header.endswith("ambiguous\n"):
            return None
        _sha, typ, size = header.split()
        data = p.stdout.read(int(size))
        p.stdout.read(1)
        return typ, data

    def text(self, rev: str, path: str) -> str | None:
        data = self.read(rev, path)
        return None if data is None else data.decode("utf-8", errors="replace")

    def close(self):
        if self._proc and self._pid == os.getpid():
            self._proc.stdin.close()
            self._proc.wait()
            self._proc = None
