"""The ``.c`` files that see a header, and which of them a change to it
concerns most.

A header like ``include/linux/netdevice.h`` is included by some 1,500
files directly and most of the tree through others; compiling them all per
patch is what makes the netdev CI take hours. So the includers are found
with ``git grep`` (directly, then through the headers that include it, a
few levels deep), and ranked, deterministically (``rank``): files that use
the identifiers the patch changed in the header first (rarer identifiers
weigh more), then files nearest to the patch's other files, then by path.

Which files can see what a header declares, as the callsites check asks
it of a changed prototype (``is_global``, ``reach``, ``Sight``): every file
for a header under an ``include/`` directory; for a driver's own header,
the files of its directory and below and those that include it by a
relative path. Drivers each have their own ``rd32()``: renaming idpf's
breaks nothing in igb, which calls its own.
"""

from __future__ import annotations

import os
import posixpath
import re
from collections import defaultdict
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from napipatch.tree import gitutil

_PARSE = re.compile(r'#\s*include\s*([<"])([^>"]+)[>"]')
_QUOTED = re.compile(r'^[ \t]*#[ \t]*include[ \t]*"([^"]+)"', re.M)
_IDENT = re.compile(r"\b[A-Za-z_][A-Za-z0-9_]*\b")
_KEYWORDS = set("""
auto break case char const continue default do double else enum extern float for goto if
inline int long register restrict return short signed sizeof static struct switch typedef
union unsigned void volatile while bool true false NULL define ifdef ifndef endif include
undef elif defined u8 u16 u32 u64 s8 s16 s32 s64 __u8 __u16 __u32 __u64 __be16 __be32 __le16
__le32 size_t ssize_t this that with from when than then they them will should must into
none also only some each which what have been does used uses """.split())
_MAX_LEVELS = 3


@dataclass
class Includers:
    header: str
    direct: list[str] = field(default_factory=list)  # .c files including it
    indirect: list[str] = field(default_factory=list)  # through other headers
    through: int = 0  # how many other headers

    @property
    def total(self) -> int:
        return len(self.direct) + len(self.indirect)


def include_forms(header: str, exists) -> tuple[list[str], bool]:
    """How ``#include`` names ``header``: (<...> forms, whether quoted
    relative includes name it too). ``exists(path)`` says what the tree has."""
    for prefix in ("include/", "arch/x86/include/"):
        if header.startswith(prefix + "uapi/"):
            rest = header[len(prefix) + 5:]
            forms = ["uapi/" + rest]
            if not exists(prefix + rest):  # else the non-uapi header shadows it
                forms.append(rest)
            return forms, False
        if header.startswith(prefix):
            return [header[len(prefix):]], False
    return [], True


def _needles(headers: list[str], exists) -> tuple[list[str], dict[str, str], dict[str, list[str]]]:
    """Fixed strings that find every header's #include lines (git grep -F is
    two orders of magnitude faster here than an anchored regex), and how each
    included name maps back to a header."""
    angle: dict[str, str] = {}
    local: dict[str, list[str]] = defaultdict(list)
    for h in headers:
        forms, is_local = include_forms(h, exists)
        for f in forms:
            angle[f] = h
        if is_local:
            local[os.path.basename(h)].append(h)
    needles = [f"<{f}>" for f in sorted(angle)] + [f'"{f}"' for f in sorted(angle)]
    needles += [f'"{b}"' for b in sorted(local)] + [f'/{b}"' for b in sorted(local)]
    return needles, angle, local


def _resolve(includer: str, quote: str, name: str, angle: dict, local: dict) -> str | None:
    if name in angle:
        return angle[name]
    if quote != '"':
        return None
    cands = local.get(os.path.basename(name), [])
    want = os.path.normpath(os.path.join(os.path.dirname(includer), name))
    if want in cands:
        return want
    # found through a -I of the directory's Makefile: the same driver
    for h in cands:
        top = os.path.dirname(os.path.dirname(h))
        if includer.startswith(top + "/") and name.endswith(os.path.basename(h)):
            return h
    return None


def kernel_file(path: str) -> bool:
    if path.startswith(("tools/", "scripts/", "Documentation/", "samples/bpf/", "usr/")):
        return False
    return not path.startswith("arch/") or path.startswith("arch/x86/")


def find(src: Path, header: str, overrides: dict[str, str | None], enough: int) -> Includers:
    """Includers of ``header`` in the checked-out ``src``; ``overrides``
    holds files whose content at the commit of interest differs from the
    checkout (None: deleted there). Stops widening once ``enough`` .c files
    are known."""
    src = Path(src)
    res = Includers(header)
    seen = {header}
    level = [header]
    for depth in range(_MAX_LEVELS):
        found = _grep_level(src, level, overrides)
        new_c = sorted(f for f in found if f.endswith(".c") and f not in seen)
        new_h = sorted(f for f in found if f.endswith(".h") and f not in seen)
        seen.update(new_c, new_h)
        (res.direct if depth == 0 else res.indirect).extend(new_c)
        if depth > 0:
            res.through += len(level)
        if res.total >= enough or not new_h:
            break
        level = new_h[:400]
    return res


def _grep_level(src: Path, headers: list[str], overrides: dict[str, str | None]) -> set[str]:
    def exists(p: str) -> bool:
        return overrides[p] is not None if p in overrides else (src / p).exists()

    needles, angle, local = _needles(headers, exists)
    args = [a for n in needles for a in ("-e", n)]
    cp = gitutil.git(src, "grep", "-I", "-n", "--null", "-F", *args, "--", "*.c", "*.h",
                     check=False)
    hits = []
    for line in cp.stdout.splitlines():
        parts = line.split("\0", 2)
        if len(parts) == 3 and parts[0] not in overrides:
            hits.append((parts[0], parts[2]))
    for path, text in overrides.items():
        if text is not None and path.endswith((".c", ".h")):
            hits += [(path, ln) for ln in text.splitlines() if "include" in ln]
    out: set[str] = set()
    for path, text in hits:
        m = _PARSE.match(text.strip())
        if m and kernel_file(path) and \
                _resolve(path, m.group(1), m.group(2), angle, local) is not None:
            out.add(path)
    return out


def changed_identifiers(diff_text: str) -> list[str]:
    """Identifiers on the lines a diff adds or removes, comments left out."""
    ids: set[str] = set()
    for line in diff_text.splitlines():
        if not line.startswith(("+", "-")) or line.startswith(("+++", "---")):
            continue
        code = re.sub(r"/\*.*?(\*/|$)|//.*$", "", line[1:])
        if code.lstrip().startswith("*"):
            continue  # inside a block comment
        ids.update(i for i in _IDENT.findall(code)
                   if len(i) >= 4 and i not in _KEYWORDS and not i.isdigit())
    return sorted(ids)


def uses(src: Path, idents: list[str]) -> dict[str, set[str]]:
    """Per identifier, the kernel .c files that use it (one git grep)."""
    out: dict[str, set[str]] = defaultdict(set)
    if not idents:
        return out
    args = [a for i in idents[:60] for a in ("-e", i)]
    cp = gitutil.git(src, "grep", "-I", "-o", "-w", "-F", *args, "--", "*.c", check=False)
    for line in cp.stdout.splitlines():
        path, _, ident = line.partition(":")
        if kernel_file(path):
            out[ident].add(path)
    return out


def rank(candidates, used: dict[str, set[str]], near: list[str]) -> list[str]:
    """``candidates`` most concerned first: the identifiers of ``used`` they
    use (a rarer one weighs more), then nearness to the ``near`` paths, then
    path."""
    score: dict[str, float] = defaultdict(float)
    for users in used.values():
        for path in users:
            score[path] += 1.0 / len(users)

    def nearness(path: str) -> int:
        parts = path.split("/")
        best = 0
        for other in near:
            o = other.split("/")
            n = 0
            while n < min(len(parts), len(o)) - 1 and parts[n] == o[n]:
                n += 1
            best = max(best, n)
        return best

    return sorted(candidates, key=lambda p: (-round(score[p], 9), -nearness(p), p))


# ------------------------------------------- who sees a header's declarations
def is_global(header: str) -> bool:
    """A header any file of the tree may include (under an ``include/`` directory)."""
    return header.startswith("include/") or "/include/" in header


def reach(header: str) -> str:
    """The directory whose files can see what ``header`` declares ("": the
    whole tree): for a driver's own header the directory above its own, as
    sibling drivers include each other's headers (``../wlcore/x.h``)."""
    return "" if is_global(header) else posixpath.dirname(posixpath.dirname(header))


def own_copy(path: str, header: str) -> bool:
    """``path`` is in tools/ (outside tools/testing), which has its own copies
    of kernel helpers: a kernel ``header`` does not declare what it calls."""
    return (path.startswith("tools/") and not path.startswith("tools/testing/")
            and not header.startswith("tools/"))


class Sight:
    """What the file ``path`` (its text ``text``) sees of the headers; its
    quoted includes are read once, and only when a driver's header asks."""

    def __init__(self, path: str, text: str):
        self.path, self.text = path, text

    @cached_property
    def _included(self) -> set[str]:
        here = posixpath.dirname(self.path)
        return {posixpath.normpath(posixpath.join(here, m)) for m in _QUOTED.findall(self.text)}

    def sees(self, header: str) -> bool:
        """Can the file see what ``header`` declares (see the module docstring)?"""
        if is_global(header):
            return True
        if self.path == header or self.path.startswith(posixpath.dirname(header) + "/"):
            return True
        return header in self._included
