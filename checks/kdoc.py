"""kernel-doc: look-alike comments, new kernel-doc warnings, parameter names.

What it catches:
    A comment added or changed by the patch that is shaped like kernel-doc
    (``name - description``, ``@param:`` lines, ``Return:``) but opens with
    ``/*`` instead of ``/**``, right above a function, struct, enum, union
    or macro: kernel-doc skips it and checkpatch says nothing. With a tree,
    the warnings ``kernel-doc -none -Wall`` gives on the files the patch
    touches that it did not give before (compared without line numbers, as
    the netdev CI does). And functions whose kernel-doc ``@params``, header
    prototype and ``.c`` definition disagree on parameter names.

    NIPA's kdoc test fails a patch with a new kernel-doc warning (the NIPA
    forecast says fail, napipatch says warning); look-alikes and parameter
    names are napipatch's own. NIPA compares its warning counts in a way
    that turns red when lines merely shift in 6.12's output; napipatch
    compares the warning texts, so a moved warning is not new.

Why a reviewer cares:
    A look-alike comment is never rendered nor checked, so it rots: the
    reviewer of the threaded busy poll v4 series wrote "Please make this a
    real kdoc (starting with /**) or delete it" on patch 1. The netdev CI
    fails a patch that adds kernel-doc warnings, hours after posting.

Example:
    ``/*`` then `` * napi_set_threaded - set napi threaded state`` then
    `` * @napi: NAPI context`` above
    ``int napi_set_threaded(struct napi_struct *napi, bool threaded);``

Fix:
    Open the comment with ``/**`` (and give it a ``Return:`` section), or
    drop it; document every parameter under the name the code uses.
    ``napipatch fix`` does the first for a look-alike: ``/*`` becomes
    ``/**``, and a ``Return 0 on success`` line becomes ``Return: 0 on
    success`` when kernel-doc would otherwise say "No description found
    for return value" (the colon is the section kernel-doc reads; the text
    stays the author's). It fixes only when the trusted base's
    ``kernel-doc -none -Wall`` gives no warning on the comment and its
    declaration afterwards; otherwise the finding says why not.

Cost:
    Linear in the diff plus the files it reads: comments and signatures
    are looked at around the added lines only (the whole file is searched
    with regexes, not walked line by line), and kernel-doc runs only on the
    files where a changed line is inside what kernel-doc reads (a ``/**``
    comment and the declaration under it). A 650-file rename inside
    function bodies runs it on none.
"""

from __future__ import annotations

import bisect
import re

from napipatch.checks import check
from napipatch.kernel import kerneldoc
from napipatch.kernel.cparse_calls import FuncDecl, find_functions
from napipatch.mails.hunks import added_lines, post_image, source_files
from napipatch.report.findings import edit, fix, not_fixable


_DEFINE = re.compile(r"^#\s*define\s+(\w+)")
_TYPE = re.compile(r"^(?:typedef\s+)?(struct|union|enum)\s+(\w+)\s*(?:\{.*)?$")


class _FileRows:
    """A whole post-patch file as rows ``(line, text, added)``, made on demand.

    A tree-wide change touches hundreds of files of thousands of lines, and
    the checks below look at a few lines around each change: a list of
    every row, built in Python, would cost more than all of them.
    """

    def __init__(self, text: str, added: set[int]):
        self.text, self.lines, self.added = text, text.split("\n"), added
        self.marks = sorted(a - 1 for a in added if 0 < a <= len(self.lines))

    def __len__(self) -> int:
        return len(self.lines)

    def __getitem__(self, k):
        if isinstance(k, slice):
            return [self[i] for i in range(*k.indices(len(self.lines)))]
        k = k + len(self.lines) if k < 0 else k
        return k + 1, self.lines[k], k + 1 in self.added


def _marks(rows) -> tuple[set[int], list[int]]:
    """(added line numbers, sorted indices of the added rows)."""
    if isinstance(rows, _FileRows):
        return rows.added, rows.marks
    return {ln for ln, _, a in rows if a}, [k for k, (_, _, a) in enumerate(rows) if a]


def _text(rows) -> str:
    return rows.text if isinstance(rows, _FileRows) else "\n".join(t for _, t, _a in rows)


def _windows(ctx, pf, post_text: str | None) -> list:
    if post_text is not None:
        return [_FileRows(post_text, added_lines(pf))]
    return [[(ln.new, ln.text, ln.kind == "+") for ln in post_image(h)] for h in pf]


def _declaration(rows, k: int):
    """What starts at rows[k]: ("function", FuncDecl) / ("macro"|"struct"|..., name) / None."""
    if k >= len(rows) or not rows[k][1].strip() or rows[k][1][0].isspace():
        return None
    first = rows[k][1]
    m = _DEFINE.match(first)
    if m:
        return "macro", m.group(1), None
    snippet = []
    for _, t, _a in rows[k:k + 8]:
        snippet.append(t)
        if ";" in t or "{" in t:
            break
    funcs = [f for f in find_functions("\n".join(snippet)) if f.first_line == 1]
    if funcs:
        f = funcs[0]
        f = FuncDecl(f.name, f.params, rows[k + f.line - 1][0], rows[k][0],
                     rows[min(k + f.last_line - 1, len(rows) - 1)][0], f.is_definition)
        return "function", f.name, f
    m = _TYPE.match(first)
    if m:
        return m.group(1), m.group(2), None
    return None


def _what(kind: str, name: str) -> str:
    return f"{name}()" if kind == "function" else (f"macro {name}" if kind == "macro" else f"{kind} {name}")


_OPEN = re.compile(r"^[ \t]*/\*", re.M)


def _blocks(rows):
    """(i, j) of each ``/*`` comment over several lines: rows[i] opens it, rows[j] closes it.

    The openings are found by one regex over the joined text, not by
    looking at every line in Python: a whole file is tens of thousands.
    """
    text = _text(rows)
    line = kerneldoc.LineCounter(text)
    after = 0
    for m in _OPEN.finditer(text):
        if m.start() < after:
            continue        # inside the previous comment
        i = line(m.start())
        if "*/" in rows[i][1].lstrip()[2:]:
            continue
        nl = text.find("\n", m.start())
        close = text.find("*/", nl) if nl >= 0 else -1
        if close < 0:
            return
        after = text.find("\n", close) % (len(text) + 1)
        yield i, line(close)


# "Return 0 on success": a return description kernel-doc does not read
# without its colon (-Wall: "No description found for return value").
_RETURN_NO_COLON = re.compile(r"^(\s*\*\s*)Returns?\s+(?![:\s])(.*)$")


def _opened(ctx, path: str, rows, block, k: int) -> dict:
    """The fix of a look-alike: ``/*`` made ``/**`` and, when kernel-doc
    -Wall then asks for the return value and the comment has a
    ``Return(s) <text>`` line, that line made ``Return: <text>``; a fix
    only when the trusted base's kernel-doc gives no warning on the result."""
    cmd = kerneldoc.command(ctx.tree.scripts)
    if cmd is None:
        return not_fixable("no kernel-doc script in the base tree to prove the result")
    first_no, first = block[0][0], block[0][1]
    texts = [t for _, t, _a in block]
    texts[0] = first.replace("/*", "/**", 1)
    edits = [edit(path, first_no, [first], [texts[0]])]
    says = "opened the comment with /**"
    warned = kerneldoc.warnings_alone(cmd, path, texts, rows.lines, k)
    returns = [n for n, t in enumerate(texts) if _RETURN_NO_COLON.match(t)]
    if warned and returns and any("return value" in w.message for w in warned):
        n = returns[0]
        m = _RETURN_NO_COLON.match(texts[n])
        texts[n] = f"{m.group(1)}Return: {m.group(2)}"
        edits.append(edit(path, block[n][0], [block[n][1]], [texts[n]]))
        says += f" and wrote its return line as a Return: section (line {block[n][0]})"
        warned = kerneldoc.warnings_alone(cmd, path, texts, rows.lines, k)
    if warned:
        return not_fixable("kernel-doc -Wall would warn on it as /**: " + warned[0].message)
    return fix(says, *edits)


def _comments(ctx, path: str, rows, full: bool):
    """Look-alikes and @param mismatches in one window of post-patch lines."""
    added, marks = _marks(rows)
    for i, j in _blocks(rows):
        # Nothing to report on a comment the patch leaves alone with the
        # declaration under it (_declaration reads at most 8 lines).
        k = bisect.bisect_left(marks, i)
        if k == len(marks) or marks[k] > j + 8:
            continue
        block = rows[i:j + 1]
        decl = _declaration(rows, j + 1)
        if decl is None:
            continue
        kind, name, func = decl
        texts = [t for _, t, _a in block]
        shp = kerneldoc.shape(texts)
        block_touched = any(a for _, _, a in block)
        decl_touched = func is not None and any(
            ln in added for ln in range(func.first_line, func.last_line + 1))
        if not shp.opens_kdoc and texts[0].lstrip().startswith("/*") and shp.looks_like_kdoc(name) \
                and block_touched:
            old = [t for (_, t, a) in block if not a]
            was = kerneldoc.shape(old) if old else None
            pre_existing = not block[0][2] and was is not None and was.looks_like_kdoc(name)
            if pre_existing:
                yield ctx.finding(
                    "info", f"comment above {_what(kind, name)} is shaped like kernel-doc but "
                    "opens with /* (it did before this patch too)", file=path, line=block[0][0],
                    hint="while changing it, make it a real kernel-doc comment (/**) or drop it",
                    nipa={})  # NIPA does not look at look-alikes
            else:
                yield ctx.finding(
                    "warning", f"comment above {_what(kind, name)} is shaped like kernel-doc but "
                    "opens with /*, so kernel-doc never reads it", file=path, line=block[0][0],
                    hint="make it a real kernel-doc comment (open it with /**, add a Return: "
                         "section) or drop it", nipa={},
                    fix=_opened(ctx, path, rows, block, j + 1) if full else
                    not_fixable("needs the tree: the base's kernel-doc must accept the result"))
        if func is None or not shp.params or not (block_touched or decl_touched):
            continue
        if full and shp.opens_kdoc:
            continue  # kernel-doc itself reports these; see _new_warnings
        code = [p for p in func.params if p]
        excess = [p for p in shp.params if p != "..." and p not in code]
        missing = [p for p in code if p not in shp.params] if None not in func.params else []
        if not excess and not missing:
            continue
        parts = []
        if missing:
            parts.append("parameter " + ", ".join(f"'{p}'" for p in missing) + " not described")
        if excess:
            parts.append("comment describes " + ", ".join(f"@{p}" for p in excess)
                         + (" which is not a parameter" if len(excess) == 1 else " which are not parameters"))
        if decl_touched:
            line = func.line
        else:
            at = next((ln for ln, t, _a in block if excess and re.search(rf"@{excess[0]}\s*:", t)), None)
            line = at or block[0][0]
        yield ctx.finding("warning", f"{func.name}(): {'; '.join(parts)}", file=path, line=line,
                          hint="name each parameter in the comment as the code names it",
                          nipa={})


def _functions(path: str, rows, added: set[int] | None = None) -> list[tuple[str, FuncDecl, bool]]:
    text = "\n".join(t for _, t, _a in rows)
    added = {ln for ln, _, a in rows if a} if added is None else added
    out = []
    for f in find_functions(text):
        first, last, line = (rows[f.first_line - 1][0], rows[f.last_line - 1][0], rows[f.line - 1][0])
        g = FuncDecl(f.name, f.params, line, first, last, f.is_definition)
        out.append((path, g, any(first <= n <= last for n in added)))
    return out


_COL0_CALL = re.compile(r"^[A-Za-z_][^;{}]*\(")


def _head_of(rows, k: int) -> int | None:
    """Index of the column-0 line opening the signature that holds rows[k], if any.

    A signature has no ``;``, ``{`` or ``}`` before its last line, so a line
    inside a function body is refused at the first statement above it.
    """
    for i in range(k, max(-1, k - 40), -1):
        t = rows[i][1]
        if i != k and (not t.strip() or any(c in t for c in ";{}") or t.startswith("#")):
            break
        if _COL0_CALL.match(t):
            return i
    # A return type on a line of its own ("static int\nfoo(...)").
    for i in range(k + 1, min(len(rows), k + 4)):
        if _COL0_CALL.match(rows[i][1]):
            return i
        if not rows[i][1][:1].isalpha():
            break
    return None


def _decls_at(path: str, rows, h: int, added: set[int]) -> list[tuple[str, FuncDecl, bool]]:
    """The declarations find_functions reads in the signature opening at rows[h]."""
    start = h
    while start > 0 and h - start < 3 and rows[start - 1][1][:1].isalpha() \
            and not any(c in rows[start - 1][1] for c in ";{}"):
        start -= 1
    end = next((i for i in range(h, min(len(rows), h + 40)) if any(c in rows[i][1] for c in ";{")),
               None)
    return [] if end is None else _functions(path, rows[start:end + 1], added)


def _signatures(path: str, rows, names: set[str] | None = None) -> list[tuple[str, FuncDecl, bool]]:
    """Declarations whose signature holds an added line (``names`` None), or
    those of ``names``: a look around each such line, not a parse of the file."""
    added, marks = _marks(rows)
    if names is None:
        heads = {h for k in marks if (h := _head_of(rows, k)) is not None}
    else:
        text = _text(rows)
        line = kerneldoc.LineCounter(text)
        word = re.compile(r"(?m)^[A-Za-z_][^\n]*?\b(?:" + "|".join(map(re.escape, sorted(names)))
                          + r")\s*\(")
        heads = {line(m.start()) for m in word.finditer(text)}
    out, seen = [], set()
    for h in sorted(heads):
        for p, f, touched in _decls_at(path, rows, h, added):
            if (f.name, f.line) not in seen and (names is None and touched or names and f.name in names):
                seen.add((f.name, f.line))
                out.append((p, f, touched))
    return out


def _proto_vs_definition(ctx, decls):
    protos = [(p, f, t) for p, f, t in decls if p.endswith(".h") and not f.is_definition]
    defs = {}
    for p, f, t in decls:
        if p.endswith(".c") and f.is_definition:
            defs.setdefault(f.name, (p, f, t))
    for hp, proto, ptouched in protos:
        if proto.name not in defs:
            continue
        cp, dfn, dtouched = defs[proto.name]
        if not (ptouched or dtouched) or len(proto.params) != len(dfn.params):
            continue
        diffs = [(a, b) for a, b in zip(proto.params, dfn.params) if a and b and a != b]
        if not diffs:
            continue
        where, line = (hp, proto.line) if ptouched else (cp, dfn.line)
        names = ", ".join(f"'{a}' (prototype) vs '{b}' (definition)" for a, b in diffs)
        yield ctx.finding(
            "warning", f"{proto.name}(): the prototype in {hp} and the definition in {cp} name "
            f"parameters differently: {names}", file=where, line=line,
            hint=f"use the definition's names in the prototype ({hp}:{proto.line})",
            nipa={})


def _decl_line(w: kerneldoc.KdocWarning, funcs: list[FuncDecl]) -> int:
    """The line of the declaration a warning is about.

    Perl kernel-doc gives the line after a prototype (a definition's ``{``);
    a reviewer comments on the declaration itself.
    """
    m = re.search(r"(?:in|of) '(\w+)'", w.message)
    if not m:
        return w.line
    near = [f for f in funcs if f.name == m.group(1) and f.first_line <= w.line <= f.last_line + 1]
    return near[-1].line if near else w.line


def _new_warnings(ctx, files, posts):
    cmd = kerneldoc.command(ctx.tree.scripts)
    if cmd is None:
        yield ctx.finding("info", "no kernel-doc script in the base tree: kernel-doc warnings "
                          "not checked", nipa={"kdoc": "unknown"})
        return
    before, after, added = {}, {}, {}
    for pf in files:
        post = posts.get(pf.path)
        if post is None:
            continue
        pre = None if pf.is_added_file else ctx.pre_text(
            pf.source_file[2:] if pf.source_file.startswith("a/") else pf.path)
        # A file whose changes are all outside what kernel-doc reads (comments
        # opening with /** and the declarations under them) cannot change its
        # warnings: a tree-wide rename in function bodies runs it on no file.
        removed = {ln.source_line_no for h in pf for ln in h if ln.is_removed}
        if not (kerneldoc.reads_any(post, added_lines(pf))
                or pre is not None and kerneldoc.reads_any(pre, removed)):
            continue
        after[pf.path] = post
        added[pf.path] = added_lines(pf)
        if pre is not None:
            before[pf.path] = pre
    new = kerneldoc.new_warnings(kerneldoc.run(cmd, before), kerneldoc.run(cmd, after), added)
    funcs = {}
    for w in new:
        if w.file not in funcs:
            funcs[w.file] = find_functions(after.get(w.file, ""))
        yield ctx.finding("warning", f"new kernel-doc warning: {w.message}", file=w.file,
                          line=_decl_line(w, funcs[w.file]),
                          hint=f"kernel-doc -none -Wall {w.file} gives it after this patch, "
                               "not before",
                          nipa={"kdoc": "fail"})  # NIPA fails a new warning


@check(id="kdoc",
       summary="kernel-doc look-alikes (/* not /**), new kernel-doc warnings, parameter names",
       scope="patch",
       needs="diff",
       version=3,
       nipa=("kdoc",),
       nipa_needs_tree=True,
       fixes="opens a look-alike with /** (and its 'Return x' line as 'Return: x') when "
             "the base's kernel-doc -Wall then gives no warning on it")
def run(ctx):
    files = source_files(ctx.diff)
    if not files:
        return
    full = ctx.tree is not None and ctx.applied
    posts = {pf.path: ctx.post_text(pf.path) for pf in files} if full else {}
    decls, whole = [], {}
    for pf in files:
        post = posts.get(pf.path)
        for rows in _windows(ctx, pf, post):
            yield from _comments(ctx, pf.path, rows, full and post is not None)
            if post is None:
                decls += _functions(pf.path, rows)
            else:
                whole[pf.path] = rows
                decls += _signatures(pf.path, rows)
    # Whole files: the other side of each touched prototype or definition.
    names = {f.name for _, f, _t in decls}
    for path, rows in whole.items() if names else ():
        decls += [d for d in _signatures(path, rows, names)
                  if not any(d[0] == p and d[1].line == f.line for p, f, _t in decls)]
    yield from _proto_vs_definition(ctx, decls)
    if full:
        yield from _new_warnings(ctx, files, posts)
