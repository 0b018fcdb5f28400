"""Turning Debian's ``linux-source-X.Y`` tarball into a git tree.

The commit is made with a fixed identity and date, so every machine that
prepares the same tarball gets the same commit id: a series exported with
``--base`` on one machine finds its ``base-commit:`` on another.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

from napipatch.errors import NapipatchError
from napipatch.tree import gitutil
from napipatch.tree.gitutil import git

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

    A tree already prepared (the tag exists) is left as it is.
    """
    tarball, dest = Path(tarball), Path(dest)
    if (dest / ".git").exists():
        tags = gitutil.out(dest, "tag", "--list", "v*-debian")
        if tags:
            return gitutil.out(dest, "rev-parse", tags.splitlines()[0] + "^{commit}")
        raise NapipatchError(dest, "is a git repository but not one napipatch prepared")
    if not tarball.is_file():
        raise NapipatchError(tarball, "no such tarball (apt-get install linux-source-6.12)")
    tmp = dest.with_name(dest.name + ".partial")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    # tar(1) is several times faster than tarfile on xz; strip the top dir.
    cp = subprocess.run(["tar", "-xf", str(tarball), "-C", str(tmp), "--strip-components=1"],
                        capture_output=True, text=True)
    if cp.returncode != 0:
        shutil.rmtree(tmp, ignore_errors=True)
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
    tmp.rename(dest)
    return gitutil.out(dest, "rev-parse", "HEAD")
