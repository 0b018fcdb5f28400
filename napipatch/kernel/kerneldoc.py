"""kernel-doc: running the tree's own script, and reading comments shaped like it.

The script is always the trusted copy exported from the base commit
(``TreeView.scripts``), never the patched tree's: 6.12 has Perl
``scripts/kernel-doc``; later trees ``scripts/kernel-doc.py`` and then
``tools/docs/kernel-doc`` (Python). Their output differs: Perl prints
``FILE:LINE: warning: MSG``, Python ``Warning: FILE:LINE MSG``.
"""

from __future__ import annotations

import bisect
import re
import shutil
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from napipatch import procs

_CANDIDATES = ("tools/docs/kernel-doc", "scripts/kernel-doc.py", "scripts/kernel-doc")
_PERL_LINE = re.compile(r"^(?P<file>[^\s:]+):(?P<line>\d+): (?:warning|error): (?P<msg>.*)$")
_PY_LINE = re.compile(r"^(?:Warning|Error): (?P<file>[^\s:]+):(?P<line>\d+):? (?P<msg>.*)$")


@dataclass(frozen=True)
class KdocWarning:
    file: str
    line: int
    message: str


def command(root: Path) -> list[str] | None:
    """How to run the kernel-doc under ``root`` (a trusted scripts copy)."""
    for rel in _CANDIDATES:
        p = root / rel
        if not p.is_file():
            continue
        try:
            first = p.read_text(errors="replace").split("\n", 1)[0]
        except OSError:
            continue
        if "perl" in first:
            return ["perl", str(p)] if shutil.which("perl") else None
        return ["python3", str(p)]
    return None


def parse_output(text: str) -> list[KdocWarning]:
    """Warnings from kernel-doc's output, in either the Perl or the Python form."""
    out = []
    for ln in text.splitlines():
        m = _PERL_LINE.match(ln.strip()) or _PY_LINE.match(ln.strip())
        if m:
            out.append(KdocWarning(m.group("file"), int(m.group("line")), m.group("msg").strip()))
    return out


def run(cmd: list[str], files: dict[str, str], timeout: int = 300) -> list[KdocWarning]:
    """``kernel-doc -none -Wall`` on ``files`` ({tree path: text}) laid out under a temp dir.

    The files keep their tree paths, so the messages name the real paths.
    Past ``timeout`` seconds: ``procs.ProcessTimeout`` ("perl: timed out").
    """
    if not files:
        return []
    with tempfile.TemporaryDirectory(prefix="napipatch-kdoc-") as td:
        for rel, text in files.items():
            dest = Path(td) / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_text(text)
        cp = procs.run([*cmd, "-none", "-Wall", *files], timeout=timeout, cwd=td)
    return parse_output(cp.stderr + "\n" + cp.stdout)


def new_warnings(before: list[KdocWarning], after: list[KdocWarning],
                 added_lines: dict[str, set[int]] | None = None) -> list[KdocWarning]:
    """Warnings of ``after`` that ``before`` does not have.

    Compared per file by message text without line numbers, as a multiset.
    When a message occurs more often after, the extra ones are taken from
    lines the patch added first.
    """
    left = Counter((w.file, w.message) for w in before)
    added_lines = added_lines or {}
    on_added = lambda w: w.line in added_lines.get(w.file, set())  # noqa: E731
    keep = []
    for w in sorted(after, key=lambda w: (on_added(w), w.line)):
        k = (w.file, w.message)
        if left[k] > 0:
            left[k] -= 1
        else:
            keep.append(w)
    return sorted(keep, key=lambda w: (w.file, w.line))


# ---------------------------------------------------------------- comment shape

_NAME_LINE = re.compile(r"^(?:(?:struct|union|enum|typedef)\s+)?([A-Za-z_]\w*)\s*(?:\(\))?\s*-+\s+\S")
_PARAM = re.compile(r"^@(\w+|\.\.\.)\s*:")
_RETURN = re.compile(r"^Returns?\s*:", re.I)


@dataclass(frozen=True)
class DocShape:
    """What a comment says, read as kernel-doc."""

    name: str | None        # from "name - description"
    params: list[str]       # @names, in order
    has_return: bool
    opens_kdoc: bool        # opens with exactly "/**"

    def looks_like_kdoc(self, declared: str | None) -> bool:
        """Shaped like kernel-doc: @param: lines, or "declared - description"."""
        return bool(self.params) or (self.name is not None and self.name == declared)


def comment_lines(block: list[str]) -> list[str]:
    """The text of a ``/* ... */`` block's lines, without the comment markers."""
    out = []
    for i, ln in enumerate(block):
        s = ln.strip()
        if i == 0:
            s = re.sub(r"^/\*+", "", s)
        if s.endswith("*/"):
            s = s[:-2]
        s = re.sub(r"^\*(?!/)", "", s).strip()
        out.append(s)
    return out


def shape(block: list[str]) -> DocShape:
    text = comment_lines(block)
    first = next((t for t in text if t), "")
    m = _NAME_LINE.match(first)
    params = []
    for t in text:
        pm = _PARAM.match(t)
        if pm:
            params.append(pm.group(1))
    opens = re.match(r"^\s*/\*\*(?!\*)", block[0]) is not None if block else False
    return DocShape(m.group(1) if m else None, params, any(_RETURN.match(t) for t in text), opens)


# ---------------------------------------------------------------- where kernel-doc reads

_DOC_OPEN = re.compile(r"^[ \t]*/\*\*", re.M)
_FUNC_HEAD = re.compile(r"\)[\s\w]*$")     # "...)" or "...) __acquires" before the "{"


def _declaration_end(lines: list[str], k: int) -> int:
    """Index of the last line of the declaration starting at ``lines[k]``.

    Never earlier than kernel-doc's own end: a function ends at its first
    ``{`` or ``;``, a macro at its last ``\\`` continuation, anything else
    (struct, union, enum, typedef) at a ``;`` outside braces.
    """
    depth, head = 0, ""
    for i in range(k, min(len(lines), k + 500)):
        t = lines[i]
        if not depth and t.lstrip().startswith("#"):
            while i + 1 < len(lines) and lines[i].rstrip().endswith("\\"):
                i += 1
            return i
        if not depth and "{" in t and _FUNC_HEAD.search(head + t.split("{", 1)[0]):
            return i
        head = (head + " " + t)[-400:]
        depth += t.count("{") - t.count("}")
        if depth <= 0 and ";" in t:
            return i
    return min(len(lines), k + 500) - 1


class LineCounter:
    """0-based line of offsets met in increasing order, counting newlines only
    between consecutive ones (a list of every line's offset costs more than
    the search it serves on a 20,000-line file)."""

    def __init__(self, text: str):
        self.text, self.pos, self.line = text, 0, 0

    def __call__(self, pos: int) -> int:
        assert pos >= self.pos
        self.line += self.text.count("\n", self.pos, pos)
        self.pos = pos
        return self.line


def regions(text: str) -> list[tuple[int, int]]:
    """1-based line ranges kernel-doc reads in ``text``: each ``/**`` comment and
    the declaration after it (a superset: indented ``/**`` count too).

    A change outside all of them cannot change kernel-doc's warnings, which
    are compared without line numbers.
    """
    lines = text.split("\n")
    line = LineCounter(text)
    out: list[tuple[int, int]] = []
    after = 0           # offset where the last region's comment closes
    done = -1
    for m in _DOC_OPEN.finditer(text):
        if m.start() < after:
            continue
        i = line(m.start())
        if i <= done:
            continue        # inside the previous declaration
        close = text.find("*/", m.end())
        after = len(text) if close < 0 else close
        j = line(after)
        done = _declaration_end(lines, j + 1) if j + 1 < len(lines) else j
        out.append((i + 1, done + 1))
    return out


def reads_any(text: str, lines: set[int]) -> bool:
    """Does kernel-doc read any of ``lines`` (1-based) of ``text``?"""
    if not lines or "/**" not in text:
        return False
    wanted = sorted(lines)
    for a, b in regions(text):
        k = bisect.bisect_left(wanted, a)
        if k < len(wanted) and wanted[k] <= b:
            return True
    return False


def warnings_alone(cmd: list[str], path: str, comment: list[str], lines: list[str],
                   k: int) -> list[KdocWarning]:
    """``kernel-doc -none -Wall`` on one comment and the declaration starting
    at ``lines[k]``, alone in a file named as ``path``: what kernel-doc says of
    that comment (a fixer's proof), in the time of one small run."""
    end = _declaration_end(lines, k)
    decl = lines[k:end + 1]
    if decl and decl[-1].rstrip().endswith("{"):
        decl = decl + ["}"]
    return run(cmd, {path: "\n".join(comment + decl) + "\n"})
