"""Files of one commit on disk: ``git archive`` of some paths into a
directory, all or nothing.

Used for the trusted scripts of a base commit (``trusted``) and for the
selftests a guest runs (``jobs.results.selftests``). The export goes to a temporary
directory of its own beside the destination and is renamed into place with
a ``.complete`` marker, so a run killed half-way leaves nothing that looks
done.

Several processes may ask for one export at once (a hook and a manual
check, two workers) and may be running scripts from it: a complete
destination is never deleted or replaced. One process exports under the
destination's lock file while the others wait and then use its copy; and
the rename only ever fills an absent destination (a copy made without the
lock, by a process that gave up waiting, is dropped if one is there by
then). A destination without its marker is a killed run's leftover, or
one being pruned: it is replaced only under the lock.
"""

from __future__ import annotations

import io
import shutil
import tarfile
from pathlib import Path

from napipatch import fileio
from napipatch.errors import NapipatchError
from napipatch.tree import gitutil

MARKER = ".complete"
# git archive of the trusted scripts takes seconds; under heavy load, a
# minute. Past this, a waiter exports a copy of its own instead.
EXPORT_WAIT = 600.0


def is_exported(dest: Path) -> bool:
    return (Path(dest) / MARKER).exists()


def lock_of(dest: Path) -> Path:
    """The lock file of the destination ``dest`` (beside it)."""
    dest = Path(dest)
    return dest.with_name(f".{dest.name}.lock")


def export_paths(repo: Path, commit: str, paths: tuple[str, ...] | list[str], dest: Path,
                 required: str | None = None) -> Path:
    """``paths`` (those ``commit`` has) as they are at ``commit``, in ``dest``
    (left as it is when already exported). ``required``: a path whose
    absence is an error."""
    dest = Path(dest)
    if is_exported(dest):
        return dest
    dest.parent.mkdir(parents=True, exist_ok=True)
    try:
        with fileio.locked(lock_of(dest), timeout=EXPORT_WAIT):
            if not is_exported(dest):  # else exported while we waited
                _export(repo, commit, paths, dest, required, locked=True)
    except fileio.LockTimeout:
        _export(repo, commit, paths, dest, required, locked=False)
    return dest


def _export(repo: Path, commit: str, paths, dest: Path, required: str | None,
            locked: bool) -> None:
    present = [p for p in paths if gitutil.git(repo, "cat-file", "-e", f"{commit}:{p}",
                                               check=False).returncode == 0]
    if required and required not in present:
        raise NapipatchError(commit[:12], f"the tree has no {required}")
    tmp = fileio.temp_dir(dest)
    try:
        if present:
            cp = gitutil.git(repo, "archive", "--format=tar", commit, *present, text=False,
                             check=False)
            if cp.returncode != 0:
                raise NapipatchError(repo, f"cannot export {', '.join(present)} at {commit[:12]}")
            with tarfile.open(fileobj=io.BytesIO(cp.stdout)) as tf:
                tf.extractall(tmp, filter="tar")
        (tmp / MARKER).write_text(commit + "\n")
        _publish(tmp, dest, locked)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _publish(tmp: Path, dest: Path, locked: bool) -> None:
    """``tmp`` (complete) at ``dest``, unless a complete copy is there."""
    if fileio.publish_dir(tmp, dest):
        return
    if locked and not is_exported(dest):
        fileio.replace_dir(tmp, dest)  # a killed run's leftover: no one uses it
        return
    if not is_exported(dest):
        raise NapipatchError(dest, "an incomplete export is there and another process "
                             f"holds {lock_of(dest).name}")
    shutil.rmtree(tmp, ignore_errors=True)  # another process's copy won
