"""The tree's own scripts, taken from the trusted base commit.

A patch from a mailing list is untrusted code: it can rewrite
scripts/checkpatch.pl or the YNL generator. So the scripts napipatch runs
(checkpatch.pl, kernel-doc, ynl-gen-c.py and their data files) are
exported with ``git archive`` from the base commit into a cache directory
keyed by that commit, and never run from the patched tree. Processes
sharing the cache share the export: one makes it, the others wait for it,
and no one deletes it under another (``export``).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

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
