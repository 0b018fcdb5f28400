"""Turning Debian's ``linux-source-X.Y`` tarball into a git tree.

The commit is made with a fixed identity and date, so every machine that
prepares the same tarball gets the same commit id: a series exported with
``--base`` on one machine finds its ``base-commit:`` on another.
"""

from __future__ import annotations

import glob
import re
import shutil
from pathlib import Path

from napipatch import fileio, procs
from napipatch.errors import NapipatchError
from napipatch.tree import gitutil
from napipatch.tree.gitutil import git

PREPARE_WAIT = 1800.0  # seconds: unpacking and committing takes a minute or several
_FIXED = {
    "GIT_AUTHOR_NAME": "napipatch", "GIT_AUTHOR_EMAIL": "napipatch@localhost",
    "GIT_COMMITTER_NAME": "napipatch", "GIT_COMMITTER_EMAIL": "napipatch@localhost",
    "GIT_AUTHOR_DATE": "2000-01-01T00:00:00Z", "GIT_COMMITTER_DATE": "2000-01-01T00:00:00Z",
}


def cut_debian_gitignore(text: str) -> str:
    """Drop Debian's trailing 'ignore everything at the top level' section.

    Without this, ``git add -A`` in the unpacked source sees an empty tree.
    """
    m = re.search(r"\n#\n# Debian packaging: ignore everything.*\Z", text, re.S)
    if m:
        return text[: m.start() + 1]
    lines = text.splitlines(keepends=True)
    return "".join(ln for ln in lines if ln.strip() not in ("/*", "!/debian/"))


def kernel_version(tree: Path) -> str:
    mk = (tree / "Makefile").read_text(errors="replace")
    parts = [re.search(rf"^{k} = (\S*)", mk, re.M) for k in ("VERSION", "PATCHLEVEL", "SUBLEVEL")]
    return ".".join(m.group(1) for m in parts if m and m.group(1))


def prepare(tarball: Path, dest: Path) -> str:
    """Unpack ``tarball`` into ``dest`` and commit it; returns the commit id.

    A tree already prepared (the tag exists) is left as it is. Two first
    runs at once (two test workers) unpack once: the second waits for the
    first's tree under the lock file beside ``dest``.
    """
    tarball, dest = Path(tarball), Path(dest)
    if (dest / ".git").exists():
        return _prepared(dest)
    if not tarball.is_file():
        raise NapipatchError(tarball, "no such tarball (apt-get install linux-source-6.12)")
    dest.parent.mkdir(parents=True, exist_ok=True)
    with fileio.locked(dest.with_name(f".{dest.name}.lock"), timeout=PREPARE_WAIT):
        if (dest / ".git").exists():
            return _prepared(dest)
        # Halves left by killed runs: no one else prepares while we hold the lock.
        for old in dest.parent.glob(f".{glob.escape(dest.name)}.*.tmp"):
            shutil.rmtree(old, ignore_errors=True)
        tmp = fileio.temp_dir(dest)
        try:
            _unpack(tarball, tmp)
            if not fileio.publish_dir(tmp, dest):
                raise NapipatchError(dest, "exists and is not a tree napipatch prepared")
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
    return gitutil.out(dest, "rev-parse", "HEAD")


def _prepared(dest: Path) -> str:
    tags = gitutil.out(dest, "tag", "--list", "v*-debian")
    if tags:
        return gitutil.out(dest, "rev-parse", tags.splitlines()[0] + "^{commit}")
    raise NapipatchError(dest, "is a git repository but not one napipatch prepared")


def _unpack(tarball: Path, tmp: Path) -> None:
    """The tarball as one commit, tagged, in the empty directory ``tmp``."""
    # tar(1) is several times faster than tarfile on xz; strip the top dir.
    cp = procs.run(["tar", "-xf", str(tarball), "-C", str(tmp), "--strip-components=1"],
                   timeout=None, package="tar")
    if cp.returncode != 0:
        raise NapipatchError(tarball, f"cannot unpack: {cp.stderr.strip().splitlines()[-1:]}")
    gi = tmp / ".gitignore"
    if gi.exists():
        gi.write_text(cut_debian_gitignore(gi.read_text()))
    ver = kernel_version(tmp)
    git(tmp, "init", "-q", "-b", "master")
    git(tmp, "config", "gc.auto", "0")
    git(tmp, "add", "-A")
    git(tmp, "commit", "-q", "--no-verify", "-m", f"Linux {ver} (Debian linux-source)\n\n"
        f"Imported from {tarball.name} by napipatch tree prepare.", env=_FIXED)
    git(tmp, "tag", f"v{ver}-debian")
