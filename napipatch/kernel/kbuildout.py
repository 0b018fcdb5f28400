"""What a kbuild run of some objects printed, object by object.

``make --output-sync=target W=1 C=1 a.o b.o`` prints, for each object, its
kbuild line (``  CC [M]  a.o``), the compiler's diagnostics, then
``  CHECK   a.c`` and sparse's. Reading that back per object is what lets
napipatch compare the same objects built at two commits, and say which tool
said what: gcc or clang (``cc``), sparse, objtool, or kernel-doc (W=1 runs
it on every compiled file).

A diagnostic's ``key`` leaves out the line and column, so a warning that a
patch only moved compares equal to the old one; sparse's ``expected ...`` /
``got ...`` lines are part of its key, as they are what tells two
"incorrect type" warnings apart.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from dataclasses import dataclass, field

_QUIET = re.compile(r"^  ([A-Z][A-Z0-9_-]*)(?: \[M\])?\s+(\S+)\s*$")
_DIAG = re.compile(r"^(?P<file>[^\s:]+):(?P<line>\d+):(?:(?P<col>\d+):)?(?:\d+-\d+:)? "
                   r"(?P<kind>warning|error|fatal error): (?P<msg>.*)$")
# sparse's second and third lines: FILE:LINE:COL:    expected / got ...
_CONT = re.compile(r"^(?P<file>[^\s:]+):(?P<line>\d+):(?P<col>\d+):\s{2,}(?P<msg>\S.*)$")
_OBJTOOL = re.compile(r"^(?P<file>[^\s:]+\.o): (?P<kind>warning|error): objtool: (?P<msg>.*)$")
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_NO_RULE = re.compile(r"No rule to make target '([^']+)'")


@dataclass
class Diag:
    tool: str  # cc | sparse | objtool | kdoc
    kind: str  # warning | error
    file: str | None  # tree-relative
    line: int | None
    message: str  # without FILE:LINE:COL:
    more: list[str] = field(default_factory=list)  # sparse's expected/got lines
    context: list[str] = field(default_factory=list)  # "In function", source, caret

    @property
    def key(self) -> tuple:
        return (self.tool, self.file, self.message, tuple(m.strip() for m in self.more))

    @property
    def text(self) -> str:
        """As the tool printed it (tree-relative path)."""
        loc = f"{self.file}:{self.line}: " if self.file and self.line else \
            f"{self.file}: " if self.file else ""
        return f"{loc}{self.kind}: {self.message}" + "".join(f"\n    {m}" for m in self.more)

    def to_json(self) -> dict:
        return {"tool": self.tool, "kind": self.kind, "file": self.file, "line": self.line,
                "message": self.message, "more": self.more, "context": self.context}

    @classmethod
    def from_json(cls, d: dict) -> "Diag":
        return cls(**d)


@dataclass
class ObjectOutput:
    """What building one object printed (``ok``: the object file was made)."""

    obj: str
    ok: bool = True
    diags: list[Diag] = field(default_factory=list)
    compiled: bool = False  # a compiler ran for it in this make

    @property
    def warnings(self) -> list[Diag]:
        return [d for d in self.diags if d.kind == "warning"]

    @property
    def errors(self) -> list[Diag]:
        return [d for d in self.diags if d.kind == "error"]


class Paths:
    """Makes the paths tools print (absolute, or relative to O=) tree-relative."""

    def __init__(self, src: str, obj: str):
        self.src, self.obj = os.path.normpath(src), os.path.normpath(obj)

    def rel(self, path: str) -> str:
        p = os.path.normpath(os.path.join(self.obj, path))
        for base in (self.src, self.obj):
            if p.startswith(base + "/"):
                return p[len(base) + 1:]
        return path


def object_of_source(path: str) -> str | None:
    """``net/core/dev.c`` -> ``net/core/dev.o`` (None for what is not compiled to one)."""
    stem, ext = os.path.splitext(path)
    if ext not in (".c", ".S") or stem.endswith(".lds"):
        return None
    return stem + ".o"


def parse(lines: list[str], paths: Paths, wanted: list[str]) -> dict[str, ObjectOutput]:
    """Per wanted object, the diagnostics ``lines`` (one make run) hold."""
    out = {o: ObjectOutput(o) for o in wanted}
    st = _State()
    for raw in lines:
        line = _ANSI.sub("", raw.rstrip("\n"))
        m = _QUIET.match(line)
        if m:
            st.quiet(m.group(1), paths.rel(m.group(2)), out)
        else:
            st.line(line, paths, out)
    return out


_IN_FUNCTION = re.compile(r"^[^\s:]+: (In (?:function|member function|static function) .*:)$")


class _State:
    """Where the parse is: the object and tool the next lines belong to."""

    def __init__(self):
        self.cur: ObjectOutput | None = None
        self.tool = "cc"
        self.last: Diag | None = None
        self.function = ""  # gcc's "In function 'f':", said before the warnings in f

    def quiet(self, verb: str, path: str, out: dict) -> None:
        """A kbuild ``  VERB  path`` line: which object and tool follow."""
        self.last, self.function = None, ""
        if verb == "CHECK":
            obj = object_of_source(path)
            self.cur, self.tool = (out.get(obj, self.cur) if obj else self.cur), "sparse"
        elif verb in ("CC", "AS") and path in out:
            out[path].compiled = True
            self.cur, self.tool = out[path], "cc"
        elif path.endswith(".o"):
            self.cur = out.get(path, self.cur)

    def line(self, line: str, paths: Paths, out: dict) -> None:
        m = _NO_RULE.search(line)
        if m and paths.rel(m.group(1)) in out:
            o = out[paths.rel(m.group(1))]
            o.ok = False
            o.diags.append(Diag("cc", "error", None, None, line.split("*** ", 1)[-1].strip()))
            return
        if self.cur is None:
            return
        d = self._diag(line, paths)
        if d is not None:
            if self.function and d.tool == "cc":
                d.context.append(self.function)
            self.cur.diags.append(d)
            self.last = d
            return
        m = _CONT.match(line)
        if m and self.last is not None and self.last.tool == "sparse":
            self.last.more.append(m.group("msg").strip())
            return
        m = _IN_FUNCTION.match(line)
        if m:
            self.function = m.group(1)
        elif self.last is not None and line[:1] in (" ", "\t") and len(self.last.context) < 8:
            self.last.context.append(line)  # the source line and caret under it

    def _diag(self, line: str, paths: Paths) -> Diag | None:
        m = _OBJTOOL.match(line)
        if m:
            return Diag("objtool", m.group("kind"), paths.rel(m.group("file")), None,
                        "objtool: " + m.group("msg"))
        m = _DIAG.match(line)
        if not m:
            return None
        kind = "error" if "error" in m.group("kind") else "warning"
        # kernel-doc prints no column; compilers and sparse always do
        who = self.tool if m.group("col") else "kdoc"
        return Diag(who, kind, paths.rel(m.group("file")), int(m.group("line")), m.group("msg"))


def new_against(base: list[Diag], patch: list[Diag],
                moved: "LineMap | None" = None) -> list[Diag]:
    """The diagnostics of ``patch`` that ``base`` does not have.

    Compared as (tool, file, message) multisets: a key seen more often at the
    patch is new that many times. Which occurrences are the new ones: those
    whose line no base occurrence maps to through the patch's diff."""
    have = Counter(d.key for d in base)
    by_key: dict[tuple, list[Diag]] = {}
    for d in patch:
        by_key.setdefault(d.key, []).append(d)
    new: list[Diag] = []
    for key, ds in by_key.items():
        extra = len(ds) - have.get(key, 0)
        if extra <= 0:
            continue
        old_lines = {moved.new_line(d.file, d.line) if moved else d.line
                     for d in base if d.key == key}
        fresh = [d for d in ds if d.line not in old_lines] or ds
        new += (fresh + [d for d in ds if d not in fresh])[:extra]
    return new


class LineMap:
    """Maps a line of a file at the base to the same line at the patch,
    through the patch's ``git diff -U0`` hunks (None: the line was changed)."""

    _HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")

    def __init__(self, diff_text: str):
        self.hunks: dict[str, list[tuple[int, int, int, int]]] = {}
        cur = None
        for line in diff_text.splitlines():
            if line.startswith("+++ "):
                cur = line[6:] if line.startswith("+++ b/") else None
                if cur is not None:
                    self.hunks.setdefault(cur, [])
            elif line.startswith("@@") and cur is not None:
                m = self._HUNK.match(line)
                if m:
                    self.hunks[cur].append((int(m.group(1)), int(m.group(2) or 1),
                                            int(m.group(3)), int(m.group(4) or 1)))

    def new_line(self, path: str | None, line: int | None) -> int | None:
        if path is None or line is None or path not in self.hunks:
            return line
        shift = 0
        for old, olen, _new, nlen in self.hunks[path]:
            if olen and old <= line < old + olen:
                return None
            if (old + olen <= line) if olen else (old < line):
                shift += nlen - olen
        return line + shift
