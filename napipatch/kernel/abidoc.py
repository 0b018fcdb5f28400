"""Documentation/ABI entries: their ``What:`` paths, and whether one covers a sysfs path.

An ABI file is a list of entries, each opening with one or more ``What:``
lines (a path per line, further paths may follow on indented lines) and
then ``Date:``, ``Contact:``, ``Description:``. Paths use placeholders
(``<iface>``, ``<queue>``, ``*``, ``X``/``N`` in names); the kernel's
``get_abi.pl`` turns them into regexes the same way. Reading the ``What:``
lines here avoids running a Perl script per attribute (and needs no
trusted copy of it: only the files' text is read).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

ABI_DIR = "Documentation/ABI/"

_WHAT = re.compile(r"^What:\s*(\S.*?)\s*$")
_MORE = re.compile(r"^\s+(/\S+)\s*$")
_PLACEHOLDER = re.compile(r"(<[^>/]*>|\*)")
# Values a sysfs path of ours gets for its placeholders before matching.
_SAMPLES = {"<iface>": "eth0", "<queue>": "0"}


@dataclass(frozen=True)
class What:
    path: str    # as written: /sys/class/net/<iface>/threaded
    file: str    # Documentation/ABI/testing/sysfs-class-net
    line: int

    @property
    def name(self) -> str:
        return self.path.rstrip("/").rsplit("/", 1)[-1]

    def regex(self) -> re.Pattern:
        parts = _PLACEHOLDER.split(self.path)
        # split() with a group alternates text, placeholder, text ...
        rx = "".join(re.escape(p) if i % 2 == 0 else ("[^/]*" if p == "*" else "[^/]+")
                     for i, p in enumerate(parts))
        return re.compile(rx + "/?")


def parse_whats(text: str, file: str, first_line: int = 1) -> list[What]:
    """Every path an ABI text documents, with its line."""
    out: list[What] = []
    in_what = False
    for i, line in enumerate(text.split("\n"), first_line):
        m = _WHAT.match(line)
        if m:
            out.append(What(m.group(1), file, i))
            in_what = True
            continue
        m = _MORE.match(line) if in_what else None
        if m:
            out.append(What(m.group(1), file, i))
            continue
        in_what = False
    return out


def sample(path: str) -> str:
    """``path`` with our placeholders filled in (``<iface>`` -> ``eth0``)."""
    for k, v in _SAMPLES.items():
        path = path.replace(k, v)
    return path


def covers(what: What, path: str | None, name: str) -> bool:
    """Does ``what`` document the attribute ``name`` at ``path`` (None: unknown)?"""
    if path is None:
        return what.name == name or what.path.endswith("/" + name)
    if what.name not in (name, "*") and not _PLACEHOLDER.search(what.name):
        return False
    return what.regex().fullmatch(sample(path)) is not None


def documented(whats: list[What], path: str | None, name: str) -> What | None:
    return next((w for w in whats if covers(w, path, name)), None)
