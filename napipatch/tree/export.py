"""Files of one commit on disk: ``git archive`` of some paths into a
directory, all or nothing.

Used for the trusted scripts of a base commit (``trusted``) and for the
selftests a guest runs (``jobs.selftests``). The export goes to a temporary
directory beside the destination and is renamed into place with a
``.complete`` marker, so a run killed half-way leaves nothing that looks
done.
"""

from __future__ import annotations

import io
import shutil
import tarfile
import tempfile
from pathlib import Path

from napipatch.errors import NapipatchError
from napipatch.tree import gitutil

MARKER = ".complete"


def is_exported(dest: Path) -> bool:
    return (Path(dest) / MARKER).exists()


def export_paths(repo: Path, commit: str, paths: tuple[str, ...] | list[str], dest: Path,
                 required: str | None = None) -> Path:
    """``paths`` (those ``commit`` has) as they are at ``commit``, in ``dest``.
    ``required``: a path whose absence is an error."""
    dest = Path(dest)
    present = [p for p in paths if gitutil.git(repo, "cat-file", "-e", f"{commit}:{p}",
                                               check=False).returncode == 0]
    if required and required not in present:
        raise NapipatchError(commit[:12], f"the tree has no {required}")
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{commit[:12]}-", dir=dest.parent))
    try:
        if present:
            cp = gitutil.git(repo, "archive", "--format=tar", commit, *present, text=False,
                             check=False)
            if cp.returncode != 0:
                raise NapipatchError(repo, f"cannot export {', '.join(present)} at {commit[:12]}")
            with tarfile.open(fileobj=io.BytesIO(cp.stdout)) as tf:
                tf.extractall(tmp, filter="tar")
        (tmp / MARKER).write_text(commit + "\n")
        if dest.exists():
            shutil.rmtree(dest)
        tmp.rename(dest)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return dest
