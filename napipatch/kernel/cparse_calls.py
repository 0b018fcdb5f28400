"""Prototypes and call sites in kernel C, parsed with tree-sitter-c.

Three questions, each answered from a real parse rather than line regexes:

- ``prototypes(text)``: every function prototype, static inline
  definition and function-like macro a file declares, with its return
  type, parameter types (names dropped) and line range;
- ``find_functions(text)``: the same parse read as kernel-doc reads it,
  the column-0 prototypes and definitions with their parameters' names;
- ``occurrences(text, names)``: every call of those names (with the
  argument list split by the parser, so ``f(a, (b, c))`` has two
  arguments), every other use of the name as an identifier (``.op =
  f``, ``EXPORT_SYMBOL(f)``) and every declaration or definition of it.
  Bodies of macros are parsed too, as a statement block at their line.

Kernel annotations that tree-sitter cannot know (``__must_check``,
``__printf(1, 2)``, ``__attribute__((...))`` ...) are blanked out with
spaces first (kernel.cparse), so byte offsets and lines stay the file's.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field

from tree_sitter import Node

from napipatch.kernel.cparse import (
    blank_annotations,
    blank_bodies,
    blank_comments,
    parse,
    parser,
)

_STORAGE = re.compile(r"\b(?:static|inline|extern|__inline__|__inline)\b")


def _norm(s: str) -> str:
    s = re.sub(r"\s+", " ", s).strip()
    return re.sub(r"\s*([*,()\[\]])\s*", r"\1", s).replace("*", " *").replace("  ", " ").strip()


@dataclass(frozen=True)
class Param:
    type: str          # "struct net_device *", "bool"; "" for a macro parameter
    name: str          # may be "" for an unnamed parameter

    def __str__(self) -> str:
        return f"{self.type} {self.name}".strip()


@dataclass(frozen=True)
class Proto:
    name: str
    kind: str          # "function" | "macro"
    ret: str           # normalised return type ("" for macros)
    params: tuple[Param, ...]
    variadic: bool
    line: int          # 1-based first line of the prototype
    end_line: int      # last line of the prototype (not the body)
    static: bool = False

    @property
    def key(self) -> tuple:
        return (self.kind, self.ret, tuple(p.type for p in self.params), self.variadic)

    def accepts(self, nargs: int) -> bool:
        return nargs >= len(self.params) if self.variadic else nargs == len(self.params)

    def signature(self) -> str:
        inner = ", ".join(str(p) for p in self.params)
        if self.variadic:
            inner = f"{inner}, ..." if inner else "..."
        if self.kind == "macro":
            return f"#define {self.name}({inner})"
        return f"{self.ret} {self.name}({inner or 'void'})".replace("* ", "*")


def _declared_identifier(node: Node | None) -> Node | None:
    """The identifier a (possibly pointer/array/parenthesised) declarator declares."""
    while node is not None:
        if node.type in ("identifier", "field_identifier", "type_identifier"):
            return node
        nxt = node.child_by_field_name("declarator")
        if nxt is None:
            # parenthesized_declarator has no field name
            named = [c for c in node.named_children if c.type != "comment"]
            nxt = named[0] if named else None
        node = nxt
    return None


def _function_declarator(node: Node | None) -> Node | None:
    """The function_declarator naming a function (not a function pointer)."""
    while node is not None:
        if node.type == "function_declarator":
            inner = node.child_by_field_name("declarator")
            return node if inner is not None and inner.type == "identifier" else None
        if node.type in ("pointer_declarator", "attributed_declarator"):
            node = node.child_by_field_name("declarator")
        else:
            return None
    return None


def _params(src: bytes, plist: Node) -> tuple[tuple[Param, ...], bool]:
    params: list[Param] = []
    variadic = False
    for c in plist.named_children:
        if c.type == "variadic_parameter":
            variadic = True
        elif c.type in ("parameter_declaration", "optional_parameter_declaration"):
            ident = _declared_identifier(c.child_by_field_name("declarator"))
            if ident is not None:
                t = src[c.start_byte:ident.start_byte] + src[ident.end_byte:c.end_byte]
                name = ident.text.decode()
            else:
                t, name = src[c.start_byte:c.end_byte], ""
            params.append(Param(_norm(t.decode(errors="replace")), name))
    if len(params) == 1 and params[0].type == "void" and not params[0].name:
        params = []
    return tuple(params), variadic


def _proto_of(src: bytes, node: Node) -> Proto | None:
    if node.type == "preproc_function_def":
        name = node.child_by_field_name("name")
        pp = node.child_by_field_name("parameters")
        if name is None or pp is None:
            return None
        params, variadic = [], False
        for c in pp.children:
            if c.type == "identifier":
                params.append(Param("", c.text.decode()))
            elif c.type == "...":
                variadic = True
        return Proto(name.text.decode(), "macro", "", tuple(params), variadic,
                     node.start_point[0] + 1, name.end_point[0] + 1)
    fdecl = _function_declarator(node.child_by_field_name("declarator"))
    if fdecl is None:
        return None
    ident = fdecl.child_by_field_name("declarator")
    plist = fdecl.child_by_field_name("parameters")
    if ident is None or plist is None:
        return None
    if ident.text.decode() in _NOT_FUNCTIONS:
        return None
    head = src[node.start_byte:ident.start_byte].decode(errors="replace")
    static = bool(re.search(r"\bstatic\b", head))
    ret = _norm(_STORAGE.sub(" ", head))
    params, variadic = _params(src, plist)
    return Proto(ident.text.decode(), "function", ret, params, variadic,
                 node.start_point[0] + 1, plist.end_point[0] + 1, static)


_NOT_FUNCTIONS = {"sizeof", "typeof", "__typeof__", "_Static_assert", "static_assert",
                  "alignof", "_Alignof", "__alignof__", "offsetof"}
_CONTAINERS = {"translation_unit", "preproc_if", "preproc_ifdef", "preproc_else",
               "preproc_elif", "preproc_elifdef", "linkage_specification", "declaration_list"}


def _file_scope(text: str):
    """(source bytes, node) for each declaration, definition and function-like
    macro at file scope (inside #if blocks and what the parser could not
    place, too). Comments are blanked first, by the linear scan that ends
    an unterminated one at the end of the text: tree-sitter's own recovery
    from one is quadratic (100,000 lines of ``/* x`` never finished); then
    function bodies (blank_bodies), which file scope does not need."""
    src = blank_annotations(blank_bodies(blank_comments(text))).encode()
    starts = _LineStarts(text, src)
    stack = [(parser().parse(src).root_node, True)]
    while stack:
        node, top = stack.pop()
        for c in node.children:
            if c.type in ("declaration", "function_definition", "preproc_function_def"):
                if top or starts.at_column_0(c):
                    yield src, c
            elif c.type in _CONTAINERS or c.type == "ERROR":
                stack.append((c, top))
            elif c.type == "compound_statement":
                # A block at file scope is a misread (7.2's rds/tcp.c: a #define
                # inside an array's initializer): what starts a line in it is
                # still the file's, what is indented is not.
                stack.append((c, False))


class _LineStarts:
    """Whether a node starts its line at column 0 in the text as written:
    a blanked annotation (``__bpf_kfunc static void bbr_init(...)``) leaves
    spaces before the node in the parsed bytes, not in the line."""

    def __init__(self, text: str, src: bytes):
        self.lines, self.parsed = text.split("\n"), src.split(b"\n")

    def at_column_0(self, node: Node) -> bool:
        row, col = node.start_point
        return row < len(self.lines) and self.lines[row][:1] not in ("", " ", "\t") \
            and not self.parsed[row][:col].strip()


def prototypes(text: str) -> list[Proto]:
    """Every function declaration/definition and function-like macro at file scope."""
    out = [p for src, c in _file_scope(text) if (p := _proto_of(src, c)) is not None]
    out.sort(key=lambda p: p.line)
    return out


@dataclass(frozen=True)
class FuncDecl:
    """A function prototype or definition starting in column 0 (kernel
    style), as kernel-doc's comments name it: the parameters' names."""

    name: str
    params: list[str | None]  # names; None for an unnamed parameter
    line: int                 # line of the name
    first_line: int           # line the declaration starts on
    last_line: int            # line of its ';' or '{'
    is_definition: bool


def find_functions(text: str) -> list[FuncDecl]:
    """Prototypes and definitions that start in column 0, in line order.

    Also read from a few lines of a hunk (the kdoc check's windows): a
    definition cut after its ``{`` is still one, and a statement of a body
    is indented, so never taken for a declaration.
    """
    out = []
    starts = None
    for src, node in _file_scope(text):
        starts = starts or _LineStarts(text, src)
        if node.type == "preproc_function_def" or not starts.at_column_0(node):
            continue
        fdecl = _function_declarator(node.child_by_field_name("declarator"))
        if fdecl is None or fdecl.has_error:
            continue
        ident, plist = fdecl.child_by_field_name("declarator"), fdecl.child_by_field_name("parameters")
        if ident is None or plist is None or ident.text.decode() in _NOT_FUNCTIONS:
            continue
        params, variadic = _params(src, plist)
        body = node.child_by_field_name("body")
        if node.type == "function_definition" and body is not None:
            last = body.start_point[0] + 1
        else:
            semi = [c for c in node.children if c.type == ";" and not c.is_missing]
            if not semi:
                continue  # a declaration the text cuts before its ';'
            last = semi[-1].start_point[0] + 1
        names = [p.name or None for p in params] + ([None] if variadic else [])  # "..." unnamed
        out.append(FuncDecl(ident.text.decode(), names,
                            ident.start_point[0] + 1, node.start_point[0] + 1, last,
                            node.type == "function_definition"))
    out.sort(key=lambda f: f.first_line)
    return out


@dataclass
class Occurrence:
    name: str
    kind: str            # "call" | "ref" | "decl" | "def"
    line: int            # 1-based, in the file
    end_line: int
    args: list[str] = field(default_factory=list)   # call arguments, as written
    static: bool = False                             # for decl/def: declared static
    proto: Proto | None = None                       # for decl/def of a function

    @property
    def nargs(self) -> int:
        return len(self.args)


def _walk(src: bytes, root: Node, names: set[str], row0: int, out: list[Occurrence],
          macro_bodies: bool = True):
    # Every occurrence is a node whose text holds one of the names, so a
    # subtree without any of them is skipped: most of a 12,000-line dev.c.
    alt = b"|".join(re.escape(n.encode()) for n in sorted(names, key=len, reverse=True))
    hits = [m.start() for m in re.finditer(rb"(?<![A-Za-z0-9_])(?:" + alt + rb")(?![A-Za-z0-9_])",
                                           src)] if names else []
    stack = [root]
    while stack:
        node = stack.pop()
        i = bisect.bisect_left(hits, node.start_byte)
        if i == len(hits) or hits[i] >= node.end_byte:
            continue
        t = node.type
        if t in ("comment", "string_literal", "char_literal", "system_lib_string"):
            continue
        if t == "call_expression":
            fn = node.child_by_field_name("function")
            if fn is not None and fn.type == "identifier" and fn.text.decode() in names:
                al = node.child_by_field_name("arguments")
                args = _split_args(src, al) if al is not None else []
                out.append(Occurrence(fn.text.decode(), "call", node.start_point[0] + 1 + row0,
                                      node.end_point[0] + 1 + row0, args))
                # arguments can hold further calls or references
                if al is not None:
                    stack.append(al)
                continue
        if t in ("declaration", "function_definition", "field_declaration"):
            fdecl = _function_declarator(node.child_by_field_name("declarator"))
            if fdecl is not None:
                ident = fdecl.child_by_field_name("declarator")
                if ident is not None and ident.text.decode() in names:
                    head = src[node.start_byte:ident.start_byte].decode(errors="replace")
                    out.append(Occurrence(ident.text.decode(),
                                          "def" if t == "function_definition" else "decl",
                                          node.start_point[0] + 1 + row0,
                                          node.end_point[0] + 1 + row0,
                                          static=bool(re.search(r"\bstatic\b", head)),
                                          proto=_proto_of(src, node)))
                    body = node.child_by_field_name("body")
                    if body is not None:
                        stack.append(body)
                    continue
        if t in ("preproc_function_def", "preproc_def"):
            name = node.child_by_field_name("name")
            if name is not None and name.text.decode() in names:
                out.append(Occurrence(name.text.decode(), "def", node.start_point[0] + 1 + row0,
                                      node.end_point[0] + 1 + row0))
            val = node.child_by_field_name("value")
            if macro_bodies and val is not None:
                body = val.text.decode(errors="replace")
                if any(re.search(rf"\b{re.escape(n)}\b", body) for n in names):
                    _macro_body(body, names, row0 + val.start_point[0], out)
            continue
        if t == "identifier" and node.text.decode() in names:
            out.append(Occurrence(node.text.decode(), "ref", node.start_point[0] + 1 + row0,
                                  node.end_point[0] + 1 + row0))
            continue
        stack.extend(reversed(node.children))


def _separators(node: Node) -> list[int]:
    """Byte offsets of the top-level commas of an argument list.

    Macro arguments that are types (``container_of(p, struct foo, m)``)
    come back as ERROR nodes; their commas still separate arguments.
    """
    out: list[int] = []

    def scan(n: Node, depth: int) -> int:
        for c in n.children:
            if c.type in ("(", "[", "{") and n is not node:
                depth += 1
            elif c.type in (")", "]", "}") and n is not node:
                depth -= 1
            elif c.type == "," and depth == 0:
                out.append(c.start_byte)
            elif c.type == "ERROR":
                depth = scan(c, depth)
        return depth

    scan(node, 0)
    return out


def _split_args(src: bytes, al: Node) -> list[str]:
    """The arguments of a call as written, split at its top-level commas."""
    if al.child_count < 2:
        return []
    start, end = al.start_byte + 1, al.end_byte - (1 if src[al.end_byte - 1:al.end_byte] == b")" else 0)
    cuts = [start] + [b + 1 for b in sorted(_separators(al))] + [end + 1]
    args = [src[a:b - 1].decode(errors="replace") for a, b in zip(cuts, cuts[1:])]
    args = [re.sub(r"/\*.*?\*/|//[^\n]*", " ", a, flags=re.S).strip() for a in args]
    return [] if args == [""] else args


def _macro_body(body: str, names: set[str], row0: int, out: list[Occurrence]):
    """Parse a macro's replacement text as statements at its own line."""
    body = body.replace("\\\n", "  \n") if "\\\n" in body else body.replace("\\\r\n", "   \n")
    body = re.sub(r"##", "  ", re.sub(r"(?<![\w#])#(?=\w)", " ", body))
    prefix = "void __napipatch_macro(void) { "
    src = blank_annotations(prefix + body + "\n;}").encode()
    tree = parser().parse(src)
    _walk(src, tree.root_node, names, row0, out, macro_bodies=False)


def occurrences(text: str, names: set[str]) -> list[Occurrence]:
    """Calls, other references, declarations and definitions of ``names``."""
    src = blank_annotations(text).encode()
    tree = parser().parse(src)
    out: list[Occurrence] = []
    _walk(src, tree.root_node, names, 0, out)
    out.sort(key=lambda o: (o.line, o.kind))
    return out


def literal(arg: str) -> str | None:
    """``true``/``false``/``0``/``1`` when ``arg`` is one of them (parens ignored)."""
    a = arg.strip()
    while a.startswith("(") and a.endswith(")"):
        a = a[1:-1].strip()
    if a in ("true", "false"):
        return a
    if re.fullmatch(r"[01][uUlL]*|0x0*[01]", a):
        return a
    return None


# ------------------------------------------------------------ a caller's locals
@dataclass(frozen=True)
class Local:
    """A parameter or local variable of the function around a call site."""
    name: str
    type: str       # normalised as prototypes are ("u64", "unsigned long", "struct x *")
    bounded: bool   # compared with a number or an UPPER_CASE constant before the call

    @property
    def integer(self) -> bool:
        """Declared as a plain integer type (not bool, an enum, a pointer, a struct)."""
        t = re.sub(r"\b(?:const|volatile)\b", " ", self.type).strip()
        return bool(_INTEGER.fullmatch(re.sub(r"\s+", " ", t)))


_INTEGER = re.compile(r"(?:(?:unsigned|signed|short|long|int|char) ?)+|(?:__)?[us](?:8|16|32|64)"
                      r"|u?int(?:8|16|32|64)_t|s?size_t|uintptr_t|loff_t")
_CONSTANT = re.compile(r"-?\s*(?:\d\w*|[A-Z][A-Z0-9_]*)")
_COMPARE = {"==", "!=", "<", ">", "<=", ">="}


def _nodes(root: Node):
    stack = [root]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(node.children)


def _declares(src: bytes, decl: Node, name: str) -> str | None:
    """The type ``decl`` (a declaration or parameter) gives ``name``, if it declares it."""
    declarators = decl.children_by_field_name("declarator")
    for d in declarators:
        inner = d.child_by_field_name("declarator") if d.type == "init_declarator" else d
        ident = _declared_identifier(inner)
        if ident is not None and ident.text.decode() == name:
            # the type before the first declarator, then this one's * or []
            t = src[decl.start_byte:declarators[0].start_byte] \
                + src[inner.start_byte:ident.start_byte] + src[ident.end_byte:inner.end_byte]
            return _norm(_STORAGE.sub(" ", t.decode(errors="replace")))
    return None


def local_at(text: str, line: int, name: str) -> Local | None:
    """``name`` as the function around ``line`` declares it: a parameter, or a
    local declared before ``line``; None outside a function or for any other
    name (a global, a macro, a field). ``bounded``: the function compares it
    with a number or an UPPER_CASE constant before ``line`` (a range check,
    ``val > MODE_MAX``), which a comparison with another variable is not."""
    root, src = parse(text)
    row = line - 1
    func = root.descendant_for_point_range((row, 0), (row, 0))
    while func is not None and func.type != "function_definition":
        func = func.parent
    fdecl = _function_declarator(func.child_by_field_name("declarator")) if func else None
    if func is None or fdecl is None:
        return None
    plist = fdecl.child_by_field_name("parameters")
    found = next((t for p in (plist.named_children if plist is not None else [])
                  if p.type == "parameter_declaration" and (t := _declares(src, p, name))), None)
    body = func.child_by_field_name("body")
    bounded = False
    for node in _nodes(body) if body is not None else []:
        if node.start_point[0] >= row:
            continue
        if found is None and node.type == "declaration":
            found = _declares(src, node, name)
        elif node.type == "binary_expression" and _compares(node, name):
            bounded = True
    return Local(name, found, bounded) if found is not None else None


def _compares(node: Node, name: str) -> bool:
    op = node.child_by_field_name("operator")
    left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
    if op is None or op.type not in _COMPARE or left is None or right is None:
        return False
    sides = (left.text.decode(errors="replace"), right.text.decode(errors="replace"))
    return any(a == name and _CONSTANT.fullmatch(b) for a, b in (sides, sides[::-1]))
