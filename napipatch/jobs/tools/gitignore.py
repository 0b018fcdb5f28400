"""The fix of a selftest build's leftover: its name in a .gitignore.

The selftests keep their built programs out of git with bare names (no
slash) in a .gitignore of their directory or of the target above it
(``net/.gitignore`` lists ``af_unix``'s programs): a bare name matches at
any depth below the file. The fix lists the leftover's name in the nearest
.gitignore at the patch, at its sorted place when the file's names are
sorted, else last; the line is computed here, where the patch's tree is
read, and applied by ``napipatch fix`` in the patch that made the leftover.
"""

from __future__ import annotations

import posixpath
import re
from pathlib import Path

from napipatch.jobs.tools.selftest_targets import SELFTESTS
from napipatch.report.findings import edit, fix, not_fixable
from napipatch.tree import gitutil

# What a .gitignore reads as a pattern, not a name: written so, the line
# would ignore other files or none.
_SPECIAL = re.compile(r"[*?\[\]!#\\\s]")


def listing(repo: Path, commit: str, target: str, path: str) -> dict:
    """The fix for ``path`` (tree-relative) left untracked by ``target``'s
    build at ``commit``: one line added to the nearest .gitignore between
    the file's directory and the target's top directory."""
    name = posixpath.basename(path)
    if _SPECIAL.search(name):
        return not_fixable(f"{name!r} would be read as a pattern in a .gitignore")
    top = SELFTESTS + target.split("/")[0]
    d = posixpath.dirname(path)
    if not (d == top or d.startswith(top + "/")):
        # tools/net/ynl's build products: that directory's own business
        return not_fixable(f"{path} is outside {top}")
    while d == top or d.startswith(top + "/"):
        gi = f"{d}/.gitignore"
        cp = gitutil.git(repo, "cat-file", "blob", f"{commit}:{gi}", check=False)
        if cp.returncode == 0:
            return _insert(gi, cp.stdout, name)
        d = posixpath.dirname(d)
    return not_fixable(f"no .gitignore in {posixpath.dirname(path)} or above it in {top} "
                       "(fix does not create one)")


def _insert(gi: str, text: str, name: str) -> dict:
    lines = text.split("\n")
    body = lines[:-1] if lines[-1] == "" else lines   # the file's last newline
    names = [(n, ln) for n, ln in enumerate(body, 1) if ln.strip() and not ln.startswith("#")]
    at = len(body) + 1
    if [ln for _n, ln in names] == sorted(ln for _n, ln in names):
        at = next((n for n, ln in names if ln > name), at)
    return fix(f"listed {name} in {gi} (line {at})", edit(gi, at, [], [name]))
