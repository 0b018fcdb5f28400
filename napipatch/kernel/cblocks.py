"""Blocks of C statements compared up to whitespace, comments and local names.

A helper's body is a template: its parameters are holes that match any
expression (the caller's ``n``, ``!!timeout``), names it declares itself
match any name used consistently, everything else (called functions,
fields, types, constants, operators) must be the same token. Statements
are compared as tree-sitter-c parse trees with comments dropped and a
``{ }`` holding a single statement replaced by that statement, so
``if (x) f();`` and ``if (x) { /* why */ f(); }`` are the same block.

``functions(text)`` lists a file's function definitions, ``template()``
turns one into a pattern, ``find()`` gives every run of consecutive
statements in a file matching it, with what each hole bound to.

``find()`` does not try every run of statements: a template has an anchor,
the longest name in it that a copy must contain as it is (a called
function, a field, a type; never a hole or a local). The file's bytes are
searched for that name, and only the runs of statements around each hit
are compared, so a search costs one pass over the file plus the hits.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

from tree_sitter import Node, Query, QueryCursor

from napipatch.kernel.cparse import LANG as _LANG
from napipatch.kernel.cparse import parse

_FUNCS = Query(_LANG, "(function_definition) @f")
_BLOCKS = Query(_LANG, "(compound_statement) @b (case_statement) @b")


@lru_cache(maxsize=16)
def _parse(text: str) -> tuple[Node, bytes]:
    # Cached: one patch asks about the same pre/post file for every helper.
    return parse(text)


@dataclass(frozen=True)
class N:
    """A statement or expression with comments dropped and lone blocks unwrapped."""
    type: str
    text: str                  # leaves only
    kids: tuple[N, ...] = ()
    code: str = field(default="", compare=False)   # the source, for messages

    def flat(self) -> str:
        return self.text if not self.kids else " ".join(k.flat() for k in self.kids)


def norm(node: Node, src: bytes) -> N | None:
    if node.type == "comment":
        return None
    if node.child_count == 0:
        return N(node.type, src[node.start_byte:node.end_byte].decode(errors="replace"))
    kids = tuple(k for c in node.children if (k := norm(c, src)) is not None)
    if node.type == "compound_statement":
        inner = [k for k in kids if k.type not in ("{", "}")]
        if len(inner) == 1:
            return inner[0]
    return N(node.type, "", kids, " ".join(src[node.start_byte:node.end_byte].decode(
        errors="replace").split()))


def _statements(block: Node) -> list[Node]:
    kids = [c for c in block.named_children if c.type != "comment"]
    if block.type == "case_statement" and kids and block.child_by_field_name("value") is not None:
        kids = kids[1:]     # the case label's value
    return kids


def _ident(node: Node | None) -> Node | None:
    """The identifier a (possibly pointer/array/function) declarator declares."""
    while node is not None and node.type != "identifier":
        node = node.child_by_field_name("declarator")
    return node


@dataclass
class Func:
    name: str
    line: int
    end: int
    params: tuple[str, ...]
    body: Node
    src: bytes = field(repr=False)


@lru_cache(maxsize=16)
def functions(text: str) -> tuple[Func, ...]:
    root, src = _parse(text)
    out: list[Func] = []
    for node in QueryCursor(_FUNCS).captures(root).get("f", []):
        decl = node.child_by_field_name("declarator")
        while decl is not None and decl.type != "function_declarator":
            decl = decl.child_by_field_name("declarator")
        body = node.child_by_field_name("body")
        name = _ident(decl.child_by_field_name("declarator")) if decl is not None else None
        if name is None or body is None:
            continue
        params = []
        plist = decl.child_by_field_name("parameters")
        for p in plist.named_children if plist is not None else []:
            ident = _ident(p.child_by_field_name("declarator"))
            if ident is not None:
                params.append(src[ident.start_byte:ident.end_byte].decode())
        out.append(Func(src[name.start_byte:name.end_byte].decode(),
                        node.start_point[0] + 1, node.end_point[0] + 1, tuple(params),
                        body, src))
    return tuple(out)


@dataclass(frozen=True)
class Template:
    helper: str
    params: tuple[str, ...]
    stmts: tuple[N, ...]
    holes: frozenset[str]
    locals: frozenset[str]
    words: frozenset[str]      # names a copy must contain (called functions)
    size: int = 0              # statements, counting those inside if/for/while
    tokens: int = 0            # leaves, comments dropped
    anchor: tuple[int, str] | None = None   # (statement, name) every copy holds


def _walk(n: N):
    yield n
    for k in n.kids:
        yield from _walk(k)


# Leaves a copy must repeat as they are unless they are holes or locals.
_NAMES = ("identifier", "field_identifier", "type_identifier")


def _is_statement(n: N) -> bool:
    return n.type == "declaration" or (n.type.endswith("_statement")
                                       and n.type != "compound_statement")


def _anchor(stmts: tuple[N, ...], free: frozenset[str]) -> tuple[int, str] | None:
    """The longest fixed name of the body (longer names are rarer in a file)."""
    best: tuple[int, str] | None = None
    for i, s in enumerate(stmts):
        for n in _walk(s):
            if (n.type in _NAMES and not n.kids and n.text not in free
                    and (best is None or len(n.text) > len(best[1]))):
                best = (i, n.text)
    return best


def template(f: Func) -> Template:
    stmts = tuple(s for c in _statements(f.body) if (s := norm(c, f.src)) is not None)
    decls: set[str] = set()
    calls: set[str] = set()
    size = tokens = 0
    for s in stmts:
        for n in _walk(s):
            size += _is_statement(n)
            tokens += not n.kids
            if n.type in ("init_declarator", "declaration"):
                decls |= {k.text for k in n.kids if k.type == "identifier"}
            if n.type == "call_expression" and n.kids and n.kids[0].type == "identifier":
                calls.add(n.kids[0].text)
    holes = frozenset(f.params)
    local = frozenset(decls - holes)
    return Template(f.name, f.params, stmts, holes, local, frozenset(calls - holes - decls),
                    size, tokens, _anchor(stmts, holes | local))


def _match(t: N, c: N, env: dict[str, str], tpl: Template) -> bool:
    if t.type == "identifier" and t.text in tpl.holes:
        if env.setdefault(t.text, c.flat()) != c.flat():
            return False
        env.setdefault("=" + t.text, c.code or c.text)
        return True
    if t.type == "identifier" and t.text in tpl.locals:
        return c.type == "identifier" and env.setdefault("." + t.text, c.text) == c.text
    if t.type != c.type or t.text != c.text or len(t.kids) != len(c.kids):
        return False
    return all(_match(a, b, env, tpl) for a, b in zip(t.kids, c.kids))


@dataclass(frozen=True)
class Copy:
    line: int
    end: int
    function: str              # the function holding the copy ("" at file scope)
    args: dict[str, str]       # helper parameter -> the expression it stands for

    def call(self, tpl: Template) -> str:
        return f"{tpl.helper}({', '.join(self.args.get(p, '?') for p in tpl.params)})"


def _enclosing(funcs: tuple[Func, ...], line: int) -> str:
    return next((f.name for f in funcs if f.line <= line <= f.end), "")


def _windows(tpl: Template, root: Node, src: bytes):
    """(block's statements, start) of each run of statements that may be a copy.

    Each place the anchor name occurs in ``src`` is climbed up to every
    statement holding it; such a statement at index i of its block puts a
    copy's start at i minus the anchor's statement index in the template.
    """
    assert tpl.anchor is not None
    j, name = tpl.anchor
    k = len(tpl.stmts)
    blocks: dict[int, tuple[list[Node], dict[int, int]]] = {}
    seen: set[tuple[int, int]] = set()
    for m in re.finditer(rb"\b" + re.escape(name.encode()) + rb"\b", src):
        node = root.descendant_for_byte_range(m.start(), m.end())
        while node is not None and (parent := node.parent) is not None:
            if parent.type in ("compound_statement", "case_statement"):
                if parent.id not in blocks:
                    stmts = _statements(parent)
                    blocks[parent.id] = stmts, {s.id: i for i, s in enumerate(stmts)}
                stmts, where = blocks[parent.id]
                start = where.get(node.id, -1) - j
                if node.id in where and 0 <= start <= len(stmts) - k \
                        and (parent.id, start) not in seen:
                    seen.add((parent.id, start))
                    yield stmts, start
            node = parent


def find(tpl: Template, text: str) -> list[Copy]:
    """Every run of statements in ``text`` that is a copy of ``tpl``'s body.

    A template without an anchor (a body made only of its parameters,
    locals, keywords and operators) matches nothing.
    """
    k = len(tpl.stmts)
    if not k or tpl.anchor is None or any(w not in text for w in tpl.words):
        return []
    root, src = _parse(text)
    funcs: tuple[Func, ...] | None = None
    out: list[Copy] = []
    for stmts, i in _windows(tpl, root, src):
        window = stmts[i:i + k]
        # Cheap refusals before normalising: statement kinds, then called names.
        if any(s.type != t.type and s.type != "compound_statement"
               for t, s in zip(tpl.stmts, window)):
            continue
        raw = src[window[0].start_byte:window[-1].end_byte]
        if any(w.encode() not in raw for w in tpl.words):
            continue
        env: dict[str, str] = {}
        # Lazily: most windows fail on their first statement.
        if all((w := norm(s, src)) is not None and _match(t, w, env, tpl)
               for t, s in zip(tpl.stmts, window)):
            if funcs is None:
                funcs = functions(text)
            line = stmts[i].start_point[0] + 1
            out.append(Copy(line, window[-1].end_point[0] + 1, _enclosing(funcs, line),
                            {p[1:]: v for p, v in env.items() if p.startswith("=")}))
    return sorted(_unique(out), key=lambda c: c.line)


def _unique(copies: list[Copy]) -> list[Copy]:
    seen: set[tuple[int, int]] = set()
    out = []
    for c in copies:
        if (c.line, c.end) not in seen:
            seen.add((c.line, c.end))
            out.append(c)
    return out
