"""The trust boundary: what napipatch runs from a tree, and where it lets a
program it does not trust run.

The tree's own scripts, taken from the trusted base commit.

A patch from a mailing list is untrusted code: it can rewrite
scripts/checkpatch.pl or the YNL generator. So the scripts napipatch runs
(checkpatch.pl, kernel-doc, ynl-gen-c.py and their data files) are
exported with ``git archive`` from the base commit into a cache directory
keyed by that commit, and never run from the patched tree. Processes
sharing the cache share the export: one makes it, the others wait for it,
and no one deletes it under another (``export``).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import posixpath
import shutil
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

from napipatch.tree import gitutil
from napipatch.tree.export import export_paths

# What the checks need from the tree, as paths inside it.
TRUSTED_PATHS = ("scripts", "tools/net/ynl", "Documentation/netlink",
                 # kernel-doc in newer trees: tools/docs/kernel-doc + its kdoc package
                 "tools/docs", "tools/lib/python")


def scripts_root(repo: Path, base: str, cache: Path) -> Path:
    """A directory holding TRUSTED_PATHS as they are at ``base``."""
    # The key names what was exported too, so adding a path re-exports.
    what = hashlib.sha256("\0".join(TRUSTED_PATHS).encode()).hexdigest()[:8]
    # export_paths locks with a file: threads and processes alike wait for one export.
    return export_paths(repo, base, TRUSTED_PATHS, cache / "trusted" / f"{base}-{what}")


def kunit_tool(repo: Path, base: str, cache: Path) -> Path:
    """tools/testing/kunit (kunit.py, its parser and configs) as it is at
    ``base``. kunit.py runs make in the tree above its own directory, so
    the KUnit job copies this into its worktree over the patched copy."""
    dest = export_paths(repo, base, ("tools/testing/kunit",), cache / "trusted" / f"{base}-kunit",
                        required="tools/testing/kunit")
    return dest / "tools" / "testing" / "kunit"


# ----------------------------------------------------------------------
# A throwaway checkout of one commit, for a program napipatch does not trust
# to leave a tree as it found it (the user's AI review agent).
#
# Not ``git worktree add``: a worktree's git directory lives in the user's
# repository, so a ``git commit`` or ``git checkout -b`` in it would change
# the user's refs. Here the checkout is a repository of its own (``git
# init``) that borrows the objects of the user's repository read-only
# (``objects/info/alternates``): nothing is copied, and what a program does
# in it (objects, refs, files) stays in it. The files checked out are the
# directories the series touches (a cone-mode sparse checkout: the top-level
# files, the touched directories whole) unless the whole tree is asked for;
# the rest is still there for ``git grep``/``git show HEAD:path``. A full
# 6.12 checkout costs ~25 s, the touched directories well under one.


def cone(paths: set[str]) -> list[str]:
    """The directories holding ``paths`` (files at the top need none)."""
    return sorted({d for p in paths if (d := posixpath.dirname(p))})


def git_common_dir(repo: Path) -> Path:
    """Where ``repo`` keeps its objects and refs (a worktree's main .git)."""
    return Path(gitutil.out(repo, "rev-parse", "--path-format=absolute", "--git-common-dir"))


def _populate(repo: Path, commit: str, into: Path, dirs: list[str] | None) -> None:
    gitutil.git(None, "init", "-q", str(into))
    common = git_common_dir(repo)
    (into / ".git" / "objects" / "info" / "alternates").write_text(
        f"{common / 'objects'}\n", encoding="utf-8")
    gitutil.git(into, "update-ref", "--no-deref", "HEAD", commit)
    if dirs is not None:
        # a sparse index: the untouched directories are one entry each, not 87,000
        gitutil.git(into, "sparse-checkout", "set", "--cone", "--sparse-index", "--", *dirs)
    gitutil.git(into, "reset", "-q", "--hard", "HEAD")


def _writable(func, path, _exc) -> None:
    """rmtree's retry for what a program made read-only under its directory."""
    with contextlib.suppress(OSError):
        os.chmod(os.path.dirname(path), stat.S_IRWXU)
        os.chmod(path, stat.S_IRWXU)
        func(path)


@contextlib.contextmanager
def throwaway_checkout(repo: Path, commit: str, paths: set[str] | None) -> Iterator[Path]:
    """A checkout of ``commit`` of ``repo`` in a new temporary directory:
    the directories holding ``paths``, or everything (None). Removed on
    leaving, whatever was done in it."""
    top = Path(tempfile.mkdtemp(prefix="napipatch-checkout-"))
    try:
        into = top / "tree"
        _populate(repo, commit, into, None if paths is None else cone(paths))
        yield into
    finally:
        shutil.rmtree(top, onerror=_writable)
        shutil.rmtree(top, ignore_errors=True)
