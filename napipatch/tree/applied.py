"""What applying a series gives: its base and, per patch, the commit after
it or why it did not apply. Both ways of applying (apply.py) give this.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from napipatch.mails.hunks import UnparsableDiff, parse_diff


@dataclass
class ApplyFailure:
    patch: int  # 1..N
    file: str | None
    line: int | None
    hunk: int | None
    reason: str

    def __str__(self) -> str:
        where = self.file or "?"
        if self.hunk:
            where += f" hunk #{self.hunk}"
        if self.line:
            where += f" (at line {self.line})"
        return f"patch {self.patch} does not apply: {where}: {self.reason}"


@dataclass
class Applied:
    """The base and, per patch, the commit after it (None when not applied).

    ``commits`` has one entry per patch, applied or not: the patches after
    the first that failed are None too."""

    repo: Path
    base: str
    base_why: str
    commits: list[str | None] = field(default_factory=list)
    failure: ApplyFailure | None = None

    def before(self, i: int) -> str | None:
        """Commit before patch i (1-based)."""
        return self.base if i == 1 else self.commits[i - 2]

    def after(self, i: int) -> str | None:
        return self.commits[i - 1]

    @property
    def tip(self) -> str | None:
        return self.commits[-1] if self.commits and self.failure is None else None

    @property
    def good(self) -> list[str]:
        """The commits of the patches before the first that failed: what a
        build or boot of a partly applied series can use."""
        done = [c for c in self.commits if c]
        return done[:self.failure.patch - 1] if self.failure else done


# ----------------------------------------------------------------------
# Why a patch did not apply, from what ``git apply`` / ``git am`` said:
# the file, the line and which of the patch's hunks, in one ApplyFailure.
#
# git names the file and the line the failing hunk expected; the hunk's
# number is found in the patch itself (unidiff), as a reviewer counts them.


_FAILED_AT = re.compile(r"patch failed: (\S+?):(\d+)")
_NO_APPLY = re.compile(r"(?:error: )?(\S+): (patch does not apply|does not exist in index|"
                       r"already exists in index|No such file or directory|does not match index)")
_INVALID = re.compile(r"invalid path '(.+?)'")
OUTSIDE = "names a path outside the tree (or inside .git); not applied"


def _strip(name: str) -> str:
    return name[2:] if name.startswith(("a/", "b/")) else name


def hunk_number(diff: str, path: str, old_line: int) -> int | None:
    """Which hunk of ``path`` in ``diff`` starts at ``old_line`` (1-based);
    None when no hunk does or the diff cannot be read."""
    try:
        patchset = parse_diff(diff)
    except UnparsableDiff:
        return None
    for pf in patchset:
        if path not in (_strip(pf.source_file), _strip(pf.target_file)):
            continue
        for n, hunk in enumerate(pf, 1):
            if hunk.source_start == old_line:
                return n
    return None


def failure(index: int, diff: str, stderr: str) -> ApplyFailure:
    """Patch ``index`` (its ``diff``) failed with ``stderr``."""
    bad = _INVALID.search(stderr)
    if bad:
        return ApplyFailure(index, bad.group(1), None, None, OUTSIDE)
    f = _FAILED_AT.search(stderr)
    if f:
        path, line = f.group(1), int(f.group(2))
        return ApplyFailure(index, path, line, hunk_number(diff, path, line),
                            "context does not match the tree")
    n = _NO_APPLY.search(stderr)
    if n:
        return ApplyFailure(index, n.group(1), None, None, n.group(2))
    last = [ln for ln in stderr.splitlines() if ln.strip()]
    return ApplyFailure(index, None, None, None,
                        (last[-1] if last else "git apply failed").removeprefix("error: "))
