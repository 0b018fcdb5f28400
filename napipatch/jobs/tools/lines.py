"""What NIPA counts in a tools build: the lines of make's stderr matching
``warn`` or ``error`` (case-insensitive, as its ``grep -i -c``), and which of
them are new against another build, compared by text.

A line is keyed without its line and column numbers and without the build
directory's path, so a warning that only moved, or was printed from another
checkout, is not new; one more copy of the same text is.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

_COUNTED = re.compile(r"warn|error", re.IGNORECASE)
_POS = re.compile(r":\d+(?::\d+)?:")
_WHERE = re.compile(r"^(?P<file>[^\s:]+\.[ch]):(?P<line>\d+)(?::\d+)?: ")


def counted(stderr: str, root: str) -> list[str]:
    """The lines NIPA counts, with ``root/`` (the build directory) removed."""
    prefix = root.rstrip("/") + "/"
    return [ln.replace(prefix, "").rstrip() for ln in stderr.splitlines()
            if _COUNTED.search(ln)]


def key(line: str) -> str:
    return _POS.sub(":", line).strip()


def new_lines(before: list[str], after: list[str]) -> list[str]:
    """The lines of ``after`` whose text ``before`` has fewer copies of."""
    left = Counter(key(ln) for ln in before)
    out = []
    for ln in after:
        k = key(ln)
        if left[k] > 0:
            left[k] -= 1
        else:
            out.append(ln)
    return out


@dataclass(frozen=True)
class Where:
    file: str | None
    line: int | None


def where(line: str, base_dir: str = "") -> Where:
    """FILE:LINE of a compiler line (``busy_poller.c:12: warning: ...``),
    the file made relative to the tree with ``base_dir`` when it is bare."""
    m = _WHERE.match(line)
    if not m:
        return Where(None, None)
    f = m.group("file")
    if "/" not in f and base_dir:
        f = f"{base_dir.rstrip('/')}/{f}"
    return Where(f.removeprefix("../").removeprefix("./"), int(m.group("line")))
