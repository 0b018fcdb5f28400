"""Just enough C to read kernel headers: comments, struct members, and the
tree-sitter C parser the other kernel/c* modules share (prototypes and
call sites are kernel.cparse_calls's, from that parser).

Not a compiler front end: it reads the shapes kernel code is written in
(one member per statement, ``__cacheline_group_begin()`` markers,
``struct_group()`` wrappers, nested anonymous unions, ``#ifdef``-ed members)
and keeps line numbers, so a check can say "line 2371 of
include/linux/netdevice.h".
"""

from __future__ import annotations

import bisect
import re
import threading
from dataclasses import dataclass

import tree_sitter_c
from tree_sitter import Language, Node, Parser

# Every pattern here runs in linear time on any input (a hostile patch may
# bring a 100,000-line hunk): no lazy scan that can restart at every line
# and run to the end of the text.
_QUALS = re.compile(r"\b(?:const|volatile|__rcu|__percpu|__iomem|__user|__force|__data_racy)\b")
_GROUP = re.compile(r"^__cacheline_group_(begin|end)\w*\s*\(\s*(\w+)\s*\)$")
_STRUCT_GROUP = re.compile(r"^struct_group(\w*)\s*\(")
_IDENT = re.compile(r"[A-Za-z_]\w*")
C_TYPE_WORDS = frozenset(
    "void char short int long float double signed unsigned bool _Bool const volatile "
    "struct union enum static inline extern register restrict __always_inline "
    "noinline __init __exit __cold __must_check notrace".split())


def blank_preprocessor(text: str) -> str:
    """``text`` with ``#`` lines (and their ``\\`` continuations) blanked."""
    out, cont = [], False
    for line in text.split("\n"):
        if cont or line.lstrip().startswith("#"):
            cont = line.rstrip().endswith("\\")
            out.append("")
        else:
            out.append(line)
    return "\n".join(out)


def line_of(text: str, offset: int) -> int:
    """1-based line number of ``offset`` in ``text``."""
    return text.count("\n", 0, offset) + 1


class Lines:
    """``line_of`` for many offsets of one text: counting from the start for
    each of a big header's thousand declarations is quadratic."""

    def __init__(self, text: str):
        self.starts = [0] + [m.end() for m in re.finditer("\n", text)]

    def __call__(self, offset: int) -> int:
        return bisect.bisect_right(self.starts, offset)


def matching_brace(text: str, open_at: int) -> int:
    """Offset of the ``}`` closing the ``{`` at ``open_at`` (-1 if none)."""
    depth = 0
    for i in range(open_at, len(text)):
        c = text[i]
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return i
    return -1


@dataclass(frozen=True)
class Field:
    """One member of a struct (or one entry of an enum)."""

    name: str
    type: str            # as written, qualifiers and attributes dropped: "struct list_head", "u8*"
    width: str | None    # bitfield width ("1", "32"), None when not a bitfield
    group: str | None    # the __cacheline_group it sits in
    line: int            # 1-based line in the file
    array: str = ""      # "[IFNAMSIZ]"


def normalise_type(t: str) -> str:
    """Spacing-independent form of a C type: ``struct list_head *`` -> ``struct list_head*``."""
    t = _QUALS.sub(" ", blank_annotations(t))
    t = re.sub(r"\s*\*\s*", "*", t)
    return re.sub(r"\s+", " ", t).strip()


def split_top(s: str, sep: str = ",") -> list[str]:
    """Split ``s`` at ``sep`` outside parentheses and brackets."""
    parts, depth, cur = [], 0, []
    for c in s:
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        if c == sep and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(c)
    parts.append("".join(cur))
    return parts


_DECL = re.compile(r"^(?P<type>.*?[\s*])(?P<name>[A-Za-z_]\w*)\s*(?P<arr>(?:\[[^\]]*\]\s*)*)"
                   r"(?::\s*(?P<w>\w+))?\s*$", re.S)
_FNPTR = re.compile(r"\(\s*\*\s*(?:\w+\s+)*(\w+)\s*(?:\[[^\]]*\])?\s*\)\s*\(")
_MACRO_MEMBER = re.compile(r"^(?:DECLARE_BITMAP|DECLARE_HASHTABLE)\s*\(\s*(\w+)\s*,\s*([^)]*)\)$")


MAX_MEMBER = 4096  # no real member declaration is longer; _DECL is quadratic past it


def parse_member(stmt: str) -> list[tuple[str, str, str | None, str]]:
    """``(name, type, width, array)`` for each declarator of one member statement.

    ``stmt`` is the text between two ``;`` without the ``;``. Returns [] for
    what is not a member declaration (markers, unnamed bitfields, junk).
    """
    if len(stmt) > MAX_MEMBER:
        return []
    s = re.sub(r"\s+", " ", blank_annotations(stmt)).strip()
    if not s or s.startswith(("__cacheline_group", "static_assert", "_Static_assert")):
        return []
    m = _MACRO_MEMBER.match(s)
    if m:
        return [(m.group(1), "unsigned long", None, f"[{m.group(2).strip()}]")]
    m = _FNPTR.search(s)
    if m:
        return [(m.group(1), normalise_type(s[:m.start()]) + " (*)()", None, "")]
    parts = split_top(s)
    first = _DECL.match(parts[0])
    if not first:
        return []
    base = normalise_type(first.group("type"))
    if not base or base in ("struct", "union", "enum") and not first.group("type").strip():
        return []
    out = [(first.group("name"), base, first.group("w"), re.sub(r"\s+", "", first.group("arr") or ""))]
    bare = base.rstrip("*")
    for p in parts[1:]:
        m = re.match(r"^\s*(\**)\s*([A-Za-z_]\w*)\s*((?:\[[^\]]*\]\s*)*)(?::\s*(\w+))?\s*$", p)
        if m:
            out.append((m.group(2), bare + m.group(1), m.group(4), re.sub(r"\s+", "", m.group(3))))
    return out


def find_block(text: str, kind: str, name: str | None, contains: str | None = None) -> tuple[int, int] | None:
    """Offsets of ``{`` and ``}`` of ``kind name { ... }`` at the start of a line.

    ``name=None`` finds an anonymous one (``enum {``), the first whose body
    holds ``contains``. ``text`` should have its comments blanked.
    """
    tag = r"\s+" + re.escape(name) if name else ""
    for m in re.finditer(rf"^{kind}{tag}\s*(?:__\w+\s*)*\{{", text, re.M):
        start = m.end() - 1
        end = matching_brace(text, start)
        if end < 0:
            continue
        if contains and not re.search(rf"\b{re.escape(contains)}\b", text[start:end]):
            continue
        return start, end
    return None


def parse_struct(text: str, name: str, kind: str = "struct") -> list[Field] | None:
    """Members of ``kind name`` in ``text`` in order, nested unions flattened.

    A named nested struct (``struct { ... } icsk_mtup;``) gives its members
    and then itself (type ``struct``). None when the struct is not there.
    """
    clean = blank_preprocessor(blank_comments(text))
    span = find_block(clean, kind, name)
    if span is None:
        return None
    start, end = span
    lines = Lines(clean)
    fields: list[Field] = []
    group: str | None = None
    openers: list[str] = []
    after_close: str | None = None
    buf_start = start + 1
    i = start + 1
    while i <= end:
        c = clean[i] if i < end else ";"
        if c not in ";{}":
            i += 1
            continue
        raw = clean[buf_start:i]
        stmt = raw.strip()
        off = buf_start + (len(raw) - len(raw.lstrip()))
        if c == "{":
            openers.append(stmt)
            after_close = None
        elif c == "}":
            after_close = openers.pop() if openers else None
        else:  # ';'
            m = _STRUCT_GROUP.match(stmt)
            if m:
                commas = 2 if m.group(1) in ("_tagged", "_attr") else 1
                pos = m.end()
                for _ in range(commas):
                    nxt = stmt.find(",", pos)
                    pos = nxt + 1 if nxt >= 0 else pos
                off += len(stmt[:pos]) + (len(stmt[pos:]) - len(stmt[pos:].lstrip()))
                stmt = stmt[pos:].strip()
            while stmt.startswith(")"):
                stmt = stmt[1:].lstrip()
                off = clean.index(stmt, off) if stmt else off
            g = _GROUP.match(stmt)
            if g:
                group = g.group(2) if g.group(1) == "begin" else None
            elif after_close is not None and stmt:
                mm = re.match(r"^(\**)\s*(\w+)\s*((?:\[[^\]]*\])*)", stmt)
                if mm:
                    t = after_close.split()[0] if after_close.split() else "struct"
                    fields.append(Field(mm.group(2), t + mm.group(1), None, group,
                                        lines(off), mm.group(3)))
            elif stmt:
                for nm, typ, w, arr in parse_member(stmt):
                    at = re.search(rf"\b{re.escape(nm)}\b", clean[off:i])
                    ln = lines(off + (at.start() if at else 0))
                    fields.append(Field(nm, typ, w, group, ln, arr))
            after_close = None
        buf_start = i + 1
        i += 1
    return fields


def parse_enum_entries(text: str, contains: str, name: str | None = None) -> list[Field] | None:
    """Entries of the enum holding ``contains`` (``LINUX_MIB_NUM``)."""
    clean = blank_preprocessor(blank_comments(text))
    span = find_block(clean, "enum", name, contains)
    if span is None:
        return None
    start, end = span
    out = []
    pos = start + 1
    for part in split_top(clean[start + 1:end]):
        m = re.search(r"[A-Za-z_]\w*", part)
        if m:
            out.append(Field(m.group(0), "", None, None, line_of(clean, pos + m.start())))
        pos += len(part) + 1
    return out


# ----------------------------------------------------------------------
# Kernel C before it is parsed: comments and annotations blanked, one tree-sitter parser per thread.
#
# Every C reader in napipatch starts here, so they agree on what an
# annotation is. Blanking (spaces, newlines kept) rather than deleting keeps
# byte offsets and line numbers those of the file. Every pattern is bounded:
# a hostile patch may bring a 100,000-line hunk full of ``__attribute__((``
# that never closes, and each match attempt must stay short.


LANG = Language(tree_sitter_c.language())
_local = threading.local()

_COMMENT = re.compile(r"/\*.*?(?:\*/|\Z)|//[^\n]*", re.S)
# Annotations tree-sitter cannot know: attributes (two levels of nested
# parentheses), annotation macros with arguments, and bare annotation words.
_ANNOTATIONS = re.compile(
    r"__attribute__\s*\(\((?:[^()]|\((?:[^()]|\([^()]{0,200}\)){0,200}\)){0,400}\)\)"
    r"|\b(?:__printf|__scanf|__acquires|__releases|__must_hold|__cond_acquires|__cond_releases"
    r"|__alloc_size|__realloc_size|__counted_by\w*|__guarded_by|__section|__aligned|__diag_ignore"
    r"|__no_sanitize_or_inline|__assume_aligned)\s*\([^()]{0,400}\)"
    r"|\b_{2,4}cacheline_aligned\w*"
    r"|\b(?:__must_check|__cold|__hot|__init|__exit|__always_inline|noinline|__noinline"
    r"|__maybe_unused|__always_unused|__pure|__malloc|__weak|asmlinkage|notrace|__sched"
    r"|__net_init|__net_exit|__rcu|__user|__iomem|__percpu|__force|__bitwise|__deprecated"
    r"|__noreturn|__latent_entropy|__visible|__ref|__read_mostly|__ro_after_init|__initdata"
    r"|__initconst|__flatten|__no_kcsan|noinstr|__nocfi|__ksym|__packed|__nonstring"
    r"|__randomize_layout|__private|__bpf_kfunc|__kprobes|__meminit"
    r"|__devinit|__devexit|__exit_call|__must_be_array)\b"
)


def _blank(m: re.Match) -> str:
    return re.sub(r"[^\n]", " ", m.group(0))


def blank_comments(text: str) -> str:
    """``text`` with every comment replaced by spaces; newlines are kept."""
    return _COMMENT.sub(_blank, text)


def blank_bodies(text: str) -> str:
    """``text`` with the inside of each kernel-style function body blanked
    (from a line that is only ``{`` to the next line opening with ``}``,
    both at column 0; same lines): all a file-scope reader needs. One body
    tree-sitter misreads cannot then take the rest of the file with it:
    7.2's netdev_cmd_to_name() builds a switch's cases with a macro, and
    the parse ran to the end of dev.c inside it (86 of 532 functions left).
    A ``{`` with no closing line after it (a hunk's window) is kept."""
    lines = text.split("\n")
    n = len(lines)
    close = [n] * (n + 1)  # the next line opening with "}", from each line: one pass
    for k in range(n - 1, -1, -1):
        close[k] = k if lines[k].startswith("}") else close[k + 1]
    k = 0
    while k < n:
        if lines[k].rstrip() == "{" and (end := close[k + 1]) < n:
            lines[k + 1:end] = [" " * len(ln) for ln in lines[k + 1:end]]
            k = end
        k += 1
    return "\n".join(lines)


def blank_annotations(text: str) -> str:
    """``text`` with kernel annotations blanked (same length, same lines)."""
    return _ANNOTATIONS.sub(_blank, text)


def parser() -> Parser:
    """This thread's tree-sitter-c parser (a Parser is not thread-safe)."""
    p = getattr(_local, "parser", None)
    if p is None:
        p = _local.parser = Parser(LANG)
    return p


def parse(text: str) -> tuple[Node, bytes]:
    """The parse tree of ``text`` with its annotations blanked, and those bytes."""
    src = blank_annotations(text).encode()
    return parser().parse(src).root_node, src
