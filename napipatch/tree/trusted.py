"""The tree's own scripts, taken from the trusted base commit.

A patch from a mailing list is untrusted code: it can rewrite
scripts/checkpatch.pl or the YNL generator. So the scripts napipatch runs
(checkpatch.pl, kernel-doc, ynl-gen-c.py and their data files) are
exported with ``git archive`` from the base commit into a cache directory
keyed by that commit, and never run from the patched tree.
"""

from __future__ import annotations

import hashlib
import threading
from pathlib import Path

from napipatch.tree.export import export_paths, is_exported

# What the checks need from the tree, as paths inside it.
TRUSTED_PATHS = ("scripts", "tools/net/ynl", "Documentation/netlink",
                 # kernel-doc in newer trees: tools/docs/kernel-doc + its kdoc package
                 "tools/docs", "tools/lib/python")
_lock = threading.Lock()


def scripts_root(repo: Path, base: str, cache: Path) -> Path:
    """A directory holding TRUSTED_PATHS as they are at ``base``."""
    # The key names what was exported too, so adding a path re-exports.
    what = hashlib.sha256("\0".join(TRUSTED_PATHS).encode()).hexdigest()[:8]
    dest = cache / "trusted" / f"{base}-{what}"
    if is_exported(dest):
        return dest
    with _lock:
        if not is_exported(dest):
            export_paths(repo, base, TRUSTED_PATHS, dest)
    return dest
