"""Which KUnit suites a series reaches, and the .kunitconfig that builds them.

A suite is reached through the Makefiles: a directory a patch touches (its
kernel files: not tools/ or Documentation/), or one of its parents up to
``UP`` levels, or its ``tests/`` subdirectory, whose Makefile builds an
object under a KUnit symbol (``obj-$(CONFIG_NET_TEST) += net_test.o``). A
symbol is a KUnit one when its Kconfig entry depends on KUNIT or its name
ends in KUNIT_TEST. The symbols are ordered by how near they are (the
touched directory first, and in it the suite built from a changed file or
named after one: checksum_kunit.o for lib/checksum_kunit.c or lib/checksum.c)
and bounded (``LIMIT``); the rest are named.

The .kunitconfig is CONFIG_KUNIT=y, the symbols, and what they need: the
.kunitconfig the suite's directory ships (net/handshake/.kunitconfig), or
else the symbols of each entry's ``depends on`` and enclosing ``if`` (the
first alternative of an ``||``; never a negated one), followed a few levels
down. kunit.py validates the result (``Missing: ...``); what UML cannot
have is dropped then (``job``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from napipatch.tree import gitutil

LIMIT = 4  # suites (Kconfig symbols) a run builds
UP = 1  # parent directories looked at above a touched one
DEPTH = 3  # levels of dependencies followed
_SKIP_TOP = ("tools/", "Documentation/", "samples/", "LICENSES/", "scripts/")
_KERNEL_FILE = re.compile(r"(\.[ch]|/Makefile|/Kbuild|/Kconfig[^/]*)$")
_OBJ_LINE = re.compile(r"^\s*[\w-]+-\$\(CONFIG_(\w+)\)\s*[:+]?=\s*(.*)$")
_CONFIG = re.compile(r"^\s*(?:menu)?config\s+(\w+)\s*$")
_SYMBOL = re.compile(r"\b([A-Z][A-Z0-9_]*)\b(=[ymn])?")
# Symbols that are never set in a .kunitconfig (architectures, KUnit itself).
_NEVER = {"KUNIT", "UML", "X86", "X86_64", "64BIT", "MMU", "COMPILE_TEST", "m", "y", "n"}


@dataclass
class Suite:
    symbol: str  # NET_TEST
    objects: list[str]  # net/core/net_test.o
    why: str  # what reached it


@dataclass
class Selection:
    suites: list[Suite] = field(default_factory=list)
    dropped: list[Suite] = field(default_factory=list)  # past LIMIT
    dirs: list[str] = field(default_factory=list)  # the touched directories looked from
    options: list[str] = field(default_factory=list)  # the .kunitconfig's lines
    sources: list[str] = field(default_factory=list)  # .kunitconfig files used

    def kunitconfig(self) -> str:
        return "".join(f"{o}\n" for o in self.options)


def kernel_paths(paths: list[str]) -> list[str]:
    """The paths that can change the kernel KUnit builds."""
    return [p for p in paths if not p.startswith(_SKIP_TOP) and _KERNEL_FILE.search("/" + p)]


def touched_dirs(paths: list[str]) -> list[str]:
    return list(dict.fromkeys(str(Path(p).parent) for p in kernel_paths(paths)
                              if str(Path(p).parent) != "."))


class _Tree:
    """Files of one commit, read through git (cached)."""

    def __init__(self, repo: Path, commit: str):
        self.repo, self.commit = repo, commit
        self._files: dict[str, str | None] = {}
        self._entries: dict[str, tuple[str, int] | None] = {}

    def read(self, path: str) -> str | None:
        if path not in self._files:
            cp = gitutil.git(self.repo, "show", f"{self.commit}:{path}", check=False)
            self._files[path] = cp.stdout if cp.returncode == 0 else None
        return self._files[path]

    def entry(self, sym: str, near: str = "") -> tuple[str, int] | None:
        """(Kconfig file, line index) of ``config SYM``: looked for in the
        Kconfig of ``near`` and its parents first, then under its top
        directory, then everywhere (a git grep of a whole tree takes seconds)."""
        if sym in self._entries:
            return self._entries[sym]
        pat = re.compile(rf"^[ \t]*(?:menu)?config[ \t]+{sym}[ \t]*$", re.M)
        parts = near.split("/") if near else []
        for k in range(len(parts), 0, -1):
            path = "/".join(parts[:k]) + "/Kconfig"
            m = pat.search(self.read(path) or "")
            if m:
                self._entries[sym] = (path, self.read(path).count("\n", 0, m.start()))
                return self._entries[sym]
        for spec in ([f":(glob){parts[0]}/**/Kconfig*"] if parts else []) + [":(glob)**/Kconfig*"]:
            cp = gitutil.git(self.repo, "grep", "-n", "-E", rf"^\s*(menu)?config\s+{sym}\s*$",
                             self.commit, "--", spec, check=False)
            for ln in cp.stdout.splitlines():
                _rev, path, num, _text = ln.split(":", 3)
                self._entries[sym] = (path, int(num) - 1)
                return self._entries[sym]
        self._entries[sym] = None
        return None


def _logical_lines(text: str) -> list[str]:
    return text.replace("\\\n", " ").splitlines()


def _entry_body(lines: list[str], i: int) -> list[str]:
    out = []
    for ln in lines[i + 1:]:
        if ln and not ln[0].isspace() and not ln.startswith("#"):
            break
        out.append(ln.strip())
    return out


def _deps_expr(expr: str) -> list[str]:
    """The symbols an AND of terms needs: the first of an ``||``, no ``!``."""
    expr = expr.split("#", 1)[0]
    out = []
    for term in expr.split("&&"):
        term = term.split("||", 1)[0].strip().strip("()").strip()
        if term.startswith("!") or "!=" in term:
            continue
        m = _SYMBOL.search(term)
        if m and m.group(2) != "=n" and m.group(1) not in _NEVER:
            out.append(m.group(1))
    return out


def _enclosing_ifs(lines: list[str], i: int) -> list[str]:
    stack: list[str] = []
    for ln in lines[:i]:
        s = ln.strip()
        if s.startswith("if ") or s.startswith("if\t"):
            stack.append(s[3:])
        elif s == "endif" or s.startswith("endif ") or s.startswith("endif\t") \
                or s.startswith("endif#"):
            if stack:
                stack.pop()
    return [d for expr in stack for d in _deps_expr(expr)]


def kconfig_deps(tree: _Tree, sym: str, near: str = "") -> tuple[bool, list[str]]:
    """(is a KUnit symbol, the symbols its entry and its ``if`` blocks need);
    ``near``: the directory whose Makefile or Kconfig named it."""
    where = tree.entry(sym, near)
    if where is None:
        return False, []
    lines = (tree.read(where[0]) or "").splitlines()
    body = _entry_body(lines, where[1])
    depends = [ln[len("depends on"):] for ln in body if ln.startswith("depends on")]
    kunit = sym.endswith("KUNIT_TEST") or any(re.search(r"\bKUNIT\b", d) for d in depends)
    deps = [d for expr in depends for d in _deps_expr(expr)] + _enclosing_ifs(lines, where[1])
    return kunit, list(dict.fromkeys(deps))


def _makefile_suites(tree: _Tree, d: str) -> list[tuple[str, list[str]]]:
    text = tree.read(f"{d}/Makefile") or tree.read(f"{d}/Kbuild") or ""
    out: dict[str, list[str]] = {}
    for ln in _logical_lines(text):
        m = _OBJ_LINE.match(ln)
        if not m:
            continue
        objs = [f"{d}/{o}" for o in m.group(2).split() if o.endswith(".o")]
        if objs:
            out.setdefault(m.group(1), []).extend(objs)
    return list(out.items())


def _testlike(sym: str, objs: list[str]) -> bool:
    """A symbol worth looking up (a Kconfig lookup costs a git grep): a
    test's name or object (NET_TEST, mptcp_token_test.o, vcap_model_kunit.o)."""
    return bool(re.search(r"TEST|KUNIT", sym) or any(re.search(r"test|kunit", o) for o in objs))


def _named_after(objs: list[str], stems: set[str]) -> int:
    """2 when a suite's object is built from a changed file
    (lib/checksum_kunit.o), 1 when it is named after one (lib/checksum.c),
    else 0: ranked before the other suites of the directory."""
    built = {o[:-2] for o in objs}
    if built & stems:
        return 2
    return int(any(b.startswith((f"{t}_", f"{t}-")) for b in built for t in stems))


def select(repo: Path, commit: str, paths: list[str], limit: int = LIMIT) -> Selection:
    """The KUnit suites ``paths`` (the series' changed files) reach at ``commit``."""
    tree = _Tree(repo, commit)
    sel = Selection(dirs=touched_dirs(paths))
    stems = {str(Path(p).with_suffix("")) for p in kernel_paths(paths) if p.endswith((".c", ".h"))}
    seen: dict[str, Suite] = {}
    ranked: list[tuple[int, Suite]] = []
    for d in sel.dirs:
        parts = d.split("/")
        looks = [(0, d, "in"), (0, f"{d}/tests", "beside")] + [
            (k, "/".join(parts[:-k]), f"{k} level{'s' * (k > 1)} above")
            for k in range(1, UP + 1) if len(parts) > k]
        for level, where, how in looks:
            for sym, objs in _makefile_suites(tree, where):
                if sym in seen or not _testlike(sym, objs):
                    continue
                kunit, _deps = kconfig_deps(tree, sym, where)
                if not kunit:
                    continue
                s = Suite(sym, objs, f"{where}/Makefile builds {', '.join(objs)} "
                                     f"({how} {d}/, which the series changes)")
                seen[sym] = s
                ranked.append((level - _named_after(objs, stems), s))
    ranked.sort(key=lambda r: r[0])
    sel.suites = [s for _l, s in ranked[:limit]]
    sel.dropped = [s for _l, s in ranked[limit:]]
    sel.options, sel.sources = _options(tree, sel.suites)
    return sel


def _options(tree: _Tree, suites: list[Suite]) -> tuple[list[str], list[str]]:
    opts = ["CONFIG_KUNIT=y"]
    sources: list[str] = []
    for s in suites:
        shipped = _shipped_kunitconfig(tree, s)
        if shipped is not None:
            path, text = shipped
            if path not in sources:
                sources.append(path)
                opts += [ln.strip() for ln in text.splitlines()
                         if ln.strip().startswith("CONFIG_")]
            continue
        near = str(Path(s.objects[0]).parent)
        todo, done = [s.symbol], set()
        for _ in range(DEPTH + 1):
            nxt = []
            for sym in todo:
                if sym in done:
                    continue
                done.add(sym)
                opts.append(f"CONFIG_{sym}=y")
                nxt += kconfig_deps(tree, sym, near)[1]
            todo = nxt
    for s in suites:  # a shipped file may leave one of ours out
        if f"CONFIG_{s.symbol}=y" not in opts:
            opts.append(f"CONFIG_{s.symbol}=y")
    return list(dict.fromkeys(opts)), sources


def _shipped_kunitconfig(tree: _Tree, s: Suite) -> tuple[str, str] | None:
    """The .kunitconfig of the suite's directory, when it enables the suite."""
    d = str(Path(s.objects[0]).parent)
    path = f"{d}/.kunitconfig"
    text = tree.read(path)
    if text and re.search(rf"^CONFIG_{s.symbol}=y", text, re.M):
        return path, text
    return None
