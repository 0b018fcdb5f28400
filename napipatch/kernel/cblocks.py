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
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from functools import lru_cache

import tree_sitter_c
from tree_sitter import Language, Node, Parser, Query, QueryCursor

from napipatch.kernel.cparse_calls import clean

_LANG = Language(tree_sitter_c.language())
_FUNCS = Query(_LANG, "(function_definition) @f")
_BLOCKS = Query(_LANG, "(compound_statement) @b (case_statement) @b")
_local = threading.local()


@lru_cache(maxsize=16)
def _parse(text: str) -> tuple[Node, bytes]:
    # Cached: one patch asks about the same pre/post file for every helper.
    p = getattr(_local, "parser", None)
    if p is None:
        p = _local.parser = Parser(_LANG)
    src = clean(text).encode()
    return p.parse(src).root_node, src


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

    def single_call(self) -> bool:
        """Is the body one call (``return f(x);`` or ``f(x);``)? Nothing to leave behind."""
        if len(self.stmts) != 1:
            return False
        s = self.stmts[0]
        if s.type not in ("expression_statement", "return_statement"):
            return False
        exprs = [k for k in s.kids if k.type not in (";", "return")]
        return len(exprs) == 1 and exprs[0].type == "call_expression"


def _walk(n: N):
    yield n
    for k in n.kids:
        yield from _walk(k)


def template(f: Func) -> Template:
    stmts = tuple(s for c in _statements(f.body) if (s := norm(c, f.src)) is not None)
    decls: set[str] = set()
    calls: set[str] = set()
    for s in stmts:
        for n in _walk(s):
            if n.type in ("init_declarator", "declaration"):
                decls |= {k.text for k in n.kids if k.type == "identifier"}
            if n.type == "call_expression" and n.kids and n.kids[0].type == "identifier":
                calls.add(n.kids[0].text)
    holes = frozenset(f.params)
    return Template(f.name, f.params, stmts, holes, frozenset(decls - holes),
                    frozenset(calls - holes - decls))


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


def find(tpl: Template, text: str) -> list[Copy]:
    """Every run of statements in ``text`` that is a copy of ``tpl``'s body."""
    k = len(tpl.stmts)
    if not k or any(w not in text for w in tpl.words):
        return []
    root, src = _parse(text)
    funcs: tuple[Func, ...] | None = None
    out: list[Copy] = []
    first = tpl.stmts[0].type
    for block in QueryCursor(_BLOCKS).captures(root).get("b", []):
        stmts = _statements(block)
        for i in range(len(stmts) - k + 1):
            if stmts[i].type != first and stmts[i].type != "compound_statement":
                continue
            raw = src[stmts[i].start_byte:stmts[i + k - 1].end_byte]
            if any(w.encode() not in raw for w in tpl.words):
                continue
            env: dict[str, str] = {}
            # Lazily: most windows fail on their first statement.
            if all((w := norm(s, src)) is not None and _match(t, w, env, tpl)
                   for t, s in zip(tpl.stmts, stmts[i:i + k])):
                if funcs is None:
                    funcs = functions(text)
                line = stmts[i].start_point[0] + 1
                out.append(Copy(line, stmts[i + k - 1].end_point[0] + 1,
                                _enclosing(funcs, line),
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
