"""``napipatch --version``: napipatch's version and the tools it found.

A report is only as good as the tools behind it: a bug report or a "why
does the CI disagree" question needs b4's, git's and the linters' versions
as much as napipatch's, so they are printed together, each as found here
(or "not found", which is what a check then reports too).
"""

from __future__ import annotations

import shutil
import sys
from importlib import metadata
from pathlib import Path

from napipatch.errors import NapipatchError
from napipatch.tree import gitutil


def _dist(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "not found"


def _linter(name: str, pin: str) -> str:
    """The linter's version, as installed beside napipatch, and whether it is the pinned one."""
    dist = pin.split("==")[0]
    have = _dist(dist)
    exe = Path(sys.executable).parent / name
    if not (exe.is_file() or shutil.which(name)):
        return "not found"
    want = pin.split("==")[1]
    return have if have == want else f"{have} (napipatch is tested with {want})"


def _git() -> str:
    try:
        return gitutil.out(None, "--version").strip().removeprefix("git version ")
    except NapipatchError:
        return "not found"


def lines() -> list[str]:
    """``name version`` for napipatch, python, git, b4 and each linter."""
    out = [("napipatch", _dist("napipatch")),
           ("python", sys.version.split()[0]),
           ("git", _git()),
           ("b4", _dist("b4"))]
    from napipatch.checks._lint import TOOLS  # only for --version

    out += [(name, _linter(name, pin)) for name, pin in TOOLS.items()]
    return [f"{name:10} {version}" for name, version in out]
