"""The MAINTAINERS file as ``scripts/get_maintainer.pl`` reads it.

Its sections (``sections``), the F:/X: patterns as the script matches them
(``Pattern``), and what it reads from a patch: the file names
(``patch_paths``), the lines K: keywords are matched against
(``keyword_lines``), the ``Fixes:`` lines it looks commits up for
(``FIXES``). The maintainers check sizes sections with it
(``MaintainersFile.sections_of``, ``size``); the runner
(``kernel.getmaintainer``) gives the script a trimmed copy.

get_maintainer.pl matches every file of a patch against every pattern of
the 3000 MAINTAINERS sections, about 0.1 s of CPU per file. So the copy it
reads holds only the sections that can name one of the patch's files
(``trimmed``): the sections whose F: patterns match one, and every section
with an N: or K: line (regexes on names and contents, kept as they are).
The answer is the same: a section that names none of the files plays no
part in it. Where get_maintainer.pl, run in a tree, turns a pattern naming
a directory without its trailing ``/`` into one (``-d``), the copy writes
the ``/`` for the directories the patch's files are in.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from functools import cached_property

_TYPE = re.compile(r"^([A-Z]):\s*(.*)")
# What get_maintainer.pl reads as a file name of a patch.
_PATCH_PATHS = re.compile(r"^(?:diff --git a/(\S+) b/(\S+)|(?:\+\+\+|---)\s+(\S+)"
                          r"|rename (?:from|to) (\S+)| mode change [0-7]+ => [0-7]+ (\S+))\s*$",
                          re.M)
# The lines get_maintainer.pl looks up a commit for (its --fixes).
FIXES = re.compile(r"^Fixes:\s+([0-9a-fA-F]{6,40})", re.M)
_LITERAL = re.compile(r"[A-Za-z0-9_/,~=@%#:!<>'\" -]*")


@dataclass(frozen=True)
class Pattern:
    """An F: or X: pattern as get_maintainer.pl matches it (``file_match_pattern``).

    ``is_dir`` says whether a path names a directory of the tree: a pattern
    naming one without a trailing ``/`` covers the files under it.
    """

    value: str          # as written in MAINTAINERS

    def regex_text(self, is_dir=lambda _v: False) -> str:
        v = self.value.replace(".", "\\.").replace("*", ".*").replace("?", ".")
        if not v.endswith("/") and is_dir(v):
            v += "/"
        return v

    @cached_property
    def prefix(self) -> str:
        """The literal start every path it matches begins with ("" for a
        pattern with regex syntax that could make its start optional)."""
        if re.search(r"[|{}()\[\]^$\\]", self.value):
            return ""
        return _LITERAL.match(self.value).group(0)

    def matcher(self, is_dir=lambda _v: False):
        """path -> bool, or None when Python cannot read the pattern."""
        v = self.regex_text(is_dir)
        try:
            rx = re.compile("^" + v)
        except re.error:
            return None
        slashes, tree = v.count("/"), v.endswith("/")
        return lambda path: bool(rx.match(path)) and (tree or path.count("/") == slashes)


@dataclass
class Section:
    name: str
    lines: list[str]          # "T:\tvalue" lines as written


def sections(text: str) -> tuple[list[str], list[Section]]:
    """(the lines that are no section, the sections) of a MAINTAINERS file,
    read as get_maintainer.pl reads it: blank and ``#`` lines skipped, a
    line that is not ``T: value`` starts the next section."""
    other: list[str] = []
    out: list[Section] = []
    cur: Section | None = None
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if _TYPE.match(line):
            if cur is None:
                cur = Section("", [])
                out.append(cur)
            cur.lines.append(line)
            continue
        if cur is not None and not cur.lines:
            other.append(cur.name)   # a line of prose followed by another
            out.pop()
        cur = Section(line, [])
        out.append(cur)
    other += [s.name for s in out if not s.lines]
    return other, [s for s in out if s.lines]


def patch_paths(patch: str) -> set[str]:
    """The file names get_maintainer.pl reads from a patch (it reads
    ``--- /dev/null`` as ``dev/null``: so does this)."""
    out = set()
    for m in _PATCH_PATHS.finditer(patch):
        for g in m.groups():
            if g:
                out.add(re.sub(r"^[^/]*/", "", g) if m.group(3) else g)
    return out


def keyword_lines(patch: str) -> list[str]:
    """The lines of a patch get_maintainer.pl matches K: keywords against,
    as the regex it matches: before the first ``---``/``+++`` file line any
    line, after it only added and removed lines (``^[+-].*`` + keyword)."""
    out, in_diff = [], False
    for line in patch.splitlines():
        if _PATCH_PATHS.match(line + "\n") or FIXES.match(line) \
                or re.match(r"^@@ -\d+,\d+", line):
            in_diff = in_diff or line.startswith(("---", "+++"))
            continue
        if not in_diff or line[:1] in "+-":
            out.append(line if not in_diff else line[1:])
    return out


def _regex(value: str, flags=re.X):
    try:
        return re.compile(value, flags)
    except re.error:
        return None


def _under(paths: set[str]):
    """is_dir for a scratch copy: a plain pattern is a directory when a
    path of the patch lies under it (get_maintainer.pl's ``-d`` in a tree)."""
    return lambda v: bool(re.fullmatch(r"[A-Za-z0-9_/,~=@%#:!+-]+", v)) and \
        any(p.startswith(v + "/") for p in paths)


class MaintainersFile:
    """A MAINTAINERS file, read once, trimmed for each patch."""

    def __init__(self, text: str):
        self.other, self.sections = sections(text)
        self._typed = [[(m.group(1), m.group(2)) for ln in s.lines if (m := _TYPE.match(ln))]
                       for s in self.sections]
        # F: patterns by the first directory of their literal start, so a
        # patch's few paths meet only the patterns that can match them.
        self._by_top: dict[str | None, list[tuple[int, Pattern]]] = {}
        self._regexes: list[tuple[int, str, re.Pattern | None]] = []
        for i, typed in enumerate(self._typed):
            for kind, value in typed:
                if kind == "F":
                    pat = Pattern(value)
                    top = pat.prefix.split("/")[0] if "/" in pat.prefix else None
                    self._by_top.setdefault(top, []).append((i, pat))
                elif kind in "NK":
                    self._regexes.append((i, kind, _regex(value)))

    def _taking_part(self, paths: set[str], lines: list[str]) -> set[int]:
        """The sections that can take part for a patch with ``paths`` and
        keyword ``lines``: an F: pattern matches a path, an N: regex a path,
        a K: regex a line; a regex Python cannot read counts, to be safe."""
        is_dir = _under(paths)
        keep: set[int] = set()
        for p in paths:
            for i, pat in self._by_top.get(p.split("/")[0], []) + self._by_top.get(None, []):
                if i in keep or not p.startswith(pat.prefix):
                    continue
                match = pat.matcher(is_dir)
                if match is None or match(p):
                    keep.add(i)
        for i, kind, rx in self._regexes:
            if i not in keep and (rx is None or any(
                    rx.search(x) for x in (paths if kind == "N" else lines))):
                keep.add(i)
        return keep

    def sections_of(self, path: str, is_dir) -> list[int]:
        """The sections naming ``path`` (``get_maintainer.pl --sections``
        without keywords): an F: pattern or N: regex matches it and no X:
        pattern of the section excludes it."""
        hits = {i for i, pat in self._by_top.get(path.split("/")[0], []) +
                self._by_top.get(None, [])
                if path.startswith(pat.prefix) and (m := pat.matcher(is_dir)) and m(path)}
        hits |= {i for i, kind, rx in self._regexes if kind == "N" and rx and rx.search(path)}
        return sorted(i for i in hits if not self._excluded(i, path, is_dir))

    def _excluded(self, i: int, path: str, is_dir) -> bool:
        return any(k == "X" and (m := Pattern(v).matcher(is_dir)) and m(path)
                   for k, v in self._typed[i])

    def size(self, i: int, files: list[str], is_dir, limit: int) -> int:
        """How many of ``files`` (sorted) section ``i``'s F: patterns cover,
        X: ones left out; counting stops at ``limit``."""
        seen: set[str] = set()
        for kind, value in self._typed[i]:
            if kind != "F":
                continue
            pat = Pattern(value)
            match = pat.matcher(is_dir)
            if match is None:
                continue
            for p in files[bisect.bisect_left(files, pat.prefix):]:
                if not p.startswith(pat.prefix):
                    break
                if p not in seen and match(p) and not self._excluded(i, p, is_dir):
                    seen.add(p)
                    if len(seen) >= limit:
                        return len(seen)
        return len(seen)

    def trimmed(self, patch: str) -> str:
        """The file with only the sections that can take part for ``patch``
        (see the module docstring), directories given their trailing ``/``."""
        paths = patch_paths(patch)
        is_dir = _under(paths)
        out = list(self.other)
        for i in sorted(self._taking_part(paths, keyword_lines(patch))):
            s, typed = self.sections[i], self._typed[i]
            kept = [f"{k}:\t{v}/" if k in "FX" and not v.endswith("/") and is_dir(v) else ln
                    for ln, (k, v) in zip(s.lines, typed)]
            out += ["", s.name, *kept]
        return "\n".join(out) + "\n"
