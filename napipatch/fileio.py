"""Files that several processes share: the cache and the series store.

A git hook, a manual ``napipatch check``, two Celery workers, b4 and an
editor may all use one cache directory and one store at the same time. So
every writer there goes through this module:

* ``atomic_write`` / ``replacing``: the new content goes to a temporary
  file of this writer's own (a random name, created with ``O_EXCL``, in
  the destination's directory) and is renamed over the destination. A
  reader sees the old file or the new one, never half of one; and no two
  writers share a temporary file (with a fixed ``.x.tmp`` name one writer
  renamed the other's file away under it: FileNotFoundError).
* ``temp_dir`` + ``publish_dir``: a directory is filled under a name of its
  own and renamed into place only if nothing is there yet. A complete
  directory another process may be running scripts from is never deleted;
  ``discard_dir`` moves one aside before deleting it, so no one sees a
  half-deleted directory under its real name.
* ``locked``: an ``flock`` on a lock file, for a read-modify-write
  (``series.toml``) or for work worth doing once (grepping the base, a
  ``git archive``). Waiting is bounded: past the timeout ``LockTimeout``
  (a NapipatchError naming the lock file and its holder) is raised.

Standard library only (and napipatch.errors): everything may import this.
"""

from __future__ import annotations

import errno
import fcntl
import os
import secrets
import shutil
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from napipatch.errors import NapipatchError

LOCK_TIMEOUT = 300.0  # seconds; callers doing longer work under a lock pass their own
_NAME_MAX = 200  # of the destination's name inside a temporary name (NAME_MAX is 255)


class LockTimeout(NapipatchError):
    """Another process held the lock for longer than the caller would wait."""


def _temp_name(dest: Path, suffix: str) -> Path:
    return dest.with_name(f".{dest.name[:_NAME_MAX]}.{secrets.token_hex(6)}{suffix}")


def _new_temp(dest: Path) -> tuple[int, Path]:
    """A new, empty file beside ``dest`` that no other writer has: (fd, path).

    Created 0666 minus the umask, as ``open(dest, "w")`` would (mkstemp's
    0600 would turn a group-readable store private)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC
    while True:
        tmp = _temp_name(dest, ".tmp")
        try:
            return os.open(tmp, flags, 0o666), tmp
        except FileExistsError:
            continue


def _mode_of(dest: Path, mode: int | None) -> int | None:
    """``mode``, else the mode of the file being replaced (None: a new file)."""
    if mode is not None:
        return mode
    try:
        return os.stat(dest).st_mode & 0o7777
    except OSError:
        return None


def _sync_dir(d: Path) -> None:
    try:
        fd = os.open(d, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


@contextmanager
def replacing(dest: Path, *, fsync: bool = False, mode: int | None = None) -> Iterator[Path]:
    """A temporary path (an empty file) to write ``dest``'s new content to,
    e.g. with a tool's ``-o``; renamed over ``dest`` when the block ends
    without an exception, removed when it raises."""
    dest = Path(dest)
    fd, tmp = _new_temp(dest)
    try:
        want = _mode_of(dest, mode)
        if want is not None:
            os.fchmod(fd, want)
        os.close(fd)
        fd = -1
        yield tmp
        if fsync:
            _fsync_path(tmp)
        os.replace(tmp, dest)
        if fsync:
            _sync_dir(dest.parent)
    except BaseException:
        if fd >= 0:
            os.close(fd)
        tmp.unlink(missing_ok=True)
        raise


def _fsync_path(p: Path) -> None:
    fd = os.open(p, os.O_RDONLY | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_fd(fd: int, data: bytes | str, encoding: str, fsync: bool) -> None:
    raw = data.encode(encoding) if isinstance(data, str) else data
    view = memoryview(raw)
    while view:
        view = view[os.write(fd, view):]
    if fsync:
        os.fsync(fd)


def atomic_write(dest: Path, data: bytes | str, *, fsync: bool = False, mode: int | None = None,
                 encoding: str = "utf-8") -> Path:
    """Replace ``dest`` with ``data`` in one rename; ``fsync`` also makes it
    durable (the file, then the directory). ``mode``: else the replaced
    file's, else 0666 minus the umask."""
    dest = Path(dest)
    with replacing(dest, fsync=fsync, mode=mode) as tmp:
        fd = os.open(tmp, os.O_WRONLY | os.O_CLOEXEC)
        try:
            _write_fd(fd, data, encoding, False)   # replacing() syncs when asked
        finally:
            os.close(fd)
    return dest


def write_new(dest: Path, data: bytes | str, *, encoding: str = "utf-8") -> bool:
    """Create ``dest`` with ``data`` unless it exists: False then, and the
    file there is left as it is. Readers never see it half-written."""
    dest = Path(dest)
    fd, tmp = _new_temp(dest)
    try:
        _write_fd(fd, data, encoding, False)
        os.close(fd)
        fd = -1
        try:
            os.link(tmp, dest)  # unlike rename, never replaces
        except FileExistsError:
            return False
        return True
    finally:
        if fd >= 0:
            os.close(fd)
        tmp.unlink(missing_ok=True)


# ------------------------------------------------------------ directories
def temp_dir(dest: Path) -> Path:
    """A new empty directory beside ``dest``, this process's own. Made 0777
    minus the umask, as ``mkdir`` makes ``dest`` (mkdtemp's 0700 would
    follow it into place)."""
    dest = Path(dest)
    while True:
        tmp = _temp_name(dest, ".tmp")
        try:
            os.mkdir(tmp, 0o777)
            return tmp
        except FileExistsError:
            continue


def publish_dir(src: Path, dest: Path) -> bool:
    """Rename the directory ``src`` to ``dest`` unless ``dest`` is there
    (False: ``src`` is left for the caller). An empty directory at
    ``dest`` counts as absent (rename(2) replaces it)."""
    try:
        os.rename(src, dest)
    except OSError as exc:
        if exc.errno in (errno.EEXIST, errno.ENOTEMPTY):
            return False
        raise
    return True


def _aside(path: Path) -> Path | None:
    """Rename ``path`` to a name of its own (None: nothing was there)."""
    trash = _temp_name(path, ".old")
    try:
        os.rename(path, trash)
    except FileNotFoundError:
        return None
    return trash


def discard_dir(path: Path) -> None:
    """Remove a directory: first renamed to a name of its own (so it leaves
    its real name at once, whole), then deleted."""
    trash = _aside(Path(path))
    if trash is not None:
        shutil.rmtree(trash, ignore_errors=True)


def replace_dir(src: Path, dest: Path) -> None:
    """Put the directory ``src`` at ``dest``, replacing whatever is there.

    The old one is renamed aside first and deleted last, so ``dest`` is
    missing only between two renames and never seen half-deleted. For a
    caller holding the lock every replacer of ``dest`` takes; without one,
    ``publish_dir``."""
    dest = Path(dest)
    trash = _aside(dest)
    try:
        os.rename(src, dest)
    finally:
        if trash is not None:
            shutil.rmtree(trash, ignore_errors=True)


# ------------------------------------------------------------------ locks
def _holder(path: Path) -> str:
    try:
        pid = path.read_text().strip()
    except OSError:
        return ""
    return f" (by pid {pid})" if pid.isdigit() else ""


def _flock(fd: int, deadline: float | None) -> bool:
    """flock ``fd``, polling until ``deadline`` (None: wait for ever)."""
    op = fcntl.LOCK_EX
    if deadline is None:
        fcntl.flock(fd, op)
        return True
    delay = 0.005
    while True:
        try:
            fcntl.flock(fd, op | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            time.sleep(min(delay, left))
            delay = min(delay * 2, 0.1)


def _is_current(fd: int, path: Path) -> bool:
    """Whether ``fd`` is still the file at ``path`` (a holder that removed
    the lock file on release leaves its waiters holding an orphan)."""
    try:
        a, b = os.fstat(fd), os.stat(path)
    except FileNotFoundError:
        return False
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


@contextmanager
def locked(path: Path, *, timeout: float | None = LOCK_TIMEOUT,
           remove: bool = True) -> Iterator[Path]:
    """Hold an flock on the lock file ``path`` (created if need be).

    Processes and threads exclude each other alike (each call opens the file
    anew, and flock locks belong to the open file). ``remove``: the file is
    deleted on release, so none is left in a store kept in git; waiters
    then lock the next file made at that path. A killed holder's lock is
    released by the kernel. Raises LockTimeout after ``timeout`` seconds."""
    path = Path(path)
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666)
        try:
            got = _flock(fd, deadline)
        except BaseException:
            os.close(fd)
            raise
        if not got:
            os.close(fd)
            raise LockTimeout(path, f"still locked after {timeout:g} s{_holder(path)}")
        if _is_current(fd, path):
            break
        os.close(fd)
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)  # named in a waiter's timeout
        yield path
    finally:
        if remove:
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass
        os.close(fd)
