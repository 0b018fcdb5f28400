"""The tree's own scripts, taken from the trusted base commit.

A patch from a mailing list is untrusted code: it can rewrite
scripts/checkpatch.pl or the YNL generator. So the scripts napipatch runs
(checkpatch.pl, kernel-doc, ynl-gen-c.py and their data files) are
exported with ``git archive`` from the base commit into a cache directory
keyed by that commit, and never run from the patched tree.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path

from napipatch.errors import NapipatchError

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
    if (dest / ".complete").exists():
        return dest
    with _lock:
        if (dest / ".complete").exists():
            return dest
        dest.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{base[:12]}-", dir=dest.parent))
        try:
            present = []
            for p in TRUSTED_PATHS:
                cp = subprocess.run(["git", "-C", str(repo), "cat-file", "-e", f"{base}:{p}"],
                                    capture_output=True)
                if cp.returncode == 0:
                    present.append(p)
            if present:
                arch = subprocess.Popen(["git", "-C", str(repo), "archive", base, *present],
                                        stdout=subprocess.PIPE)
                tar = subprocess.run(["tar", "-x", "-C", str(tmp)], stdin=arch.stdout,
                                     capture_output=True)
                arch.stdout.close()
                if arch.wait() != 0 or tar.returncode != 0:
                    raise NapipatchError(repo, f"cannot export scripts at {base[:12]}")
            (tmp / ".complete").write_text(base + "\n")
            if dest.exists():
                shutil.rmtree(dest)
            tmp.rename(dest)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
    return dest
