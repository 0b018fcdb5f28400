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
"""

from __future__ import annotations

import re

from napipatch.checks import check
from napipatch.kernel import kerneldoc
from napipatch.kernel.cparse import FuncDecl, find_functions
from napipatch.mails.hunks import added_lines, post_image, source_files


_DEFINE = re.compile(r"^#\s*define\s+(\w+)")
_TYPE = re.compile(r"^(?:typedef\s+)?(struct|union|enum)\s+(\w+)\s*(?:\{.*)?$")


def _windows(ctx, pf, post_text: str | None) -> list[list[tuple[int, str, bool]]]:
    added = added_lines(pf)
    if post_text is not None:
        return [[(i, t, i in added) for i, t in enumerate(post_text.split("\n"), 1)]]
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


def _comments(ctx, path: str, rows, full: bool):
    """Look-alikes and @param mismatches in one window of post-patch lines."""
    i, n = 0, len(rows)
    added = {ln for ln, _, a in rows if a}
    while i < n:
        s = rows[i][1].lstrip()
        if not s.startswith("/*") or "*/" in s[2:]:
            i += 1
            continue
        j = i + 1
        while j < n and "*/" not in rows[j][1]:
            j += 1
        if j >= n:
            break
        block = rows[i:j + 1]
        decl = _declaration(rows, j + 1)
        i = j + 1
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
                    hint="while changing it, make it a real kernel-doc comment (/**) or drop it")
            else:
                yield ctx.finding(
                    "warning", f"comment above {_what(kind, name)} is shaped like kernel-doc but "
                    "opens with /*, so kernel-doc never reads it", file=path, line=block[0][0],
                    hint="make it a real kernel-doc comment (open it with /**, add a Return: "
                         "section) or drop it")
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
                          hint="name each parameter in the comment as the code names it")


def _functions(path: str, rows) -> list[tuple[str, FuncDecl, bool]]:
    text = "\n".join(t for _, t, _a in rows)
    added = {ln for ln, _, a in rows if a}
    out = []
    for f in find_functions(text):
        first, last, line = (rows[f.first_line - 1][0], rows[f.last_line - 1][0], rows[f.line - 1][0])
        g = FuncDecl(f.name, f.params, line, first, last, f.is_definition)
        out.append((path, g, any(first <= n <= last for n in added)))
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
            hint=f"use the definition's names in the prototype ({hp}:{proto.line})")


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
        yield ctx.finding("info", "no kernel-doc script in the base tree: kernel-doc warnings not checked")
        return
    before, after, added = {}, {}, {}
    for pf in files:
        post = posts.get(pf.path)
        if post is None:
            continue
        after[pf.path] = post
        added[pf.path] = added_lines(pf)
        if not pf.is_added_file:
            pre = ctx.pre_text(pf.source_file[2:] if pf.source_file.startswith("a/") else pf.path)
            if pre is not None:
                before[pf.path] = pre
    new = kerneldoc.new_warnings(kerneldoc.run(cmd, before), kerneldoc.run(cmd, after), added)
    funcs = {}
    for w in new:
        if w.file not in funcs:
            funcs[w.file] = find_functions(after.get(w.file, ""))
        yield ctx.finding("warning", f"new kernel-doc warning: {w.message}", file=w.file,
                          line=_decl_line(w, funcs[w.file]),
                          hint=f"kernel-doc -none -Wall {w.file} gives it after this patch, not before")


@check(id="kdoc",
       summary="kernel-doc look-alikes (/* not /**), new kernel-doc warnings, parameter names",
       scope="patch",
       needs="diff",
       version=1)
def run(ctx):
    files = source_files(ctx.diff)
    if not files:
        return
    full = ctx.tree is not None and ctx.applied
    posts = {pf.path: ctx.post_text(pf.path) for pf in files} if full else {}
    decls = []
    for pf in files:
        post = posts.get(pf.path)
        for rows in _windows(ctx, pf, post):
            yield from _comments(ctx, pf.path, rows, full and post is not None)
            decls += _functions(pf.path, rows)
    yield from _proto_vs_definition(ctx, decls)
    if full:
        yield from _new_warnings(ctx, files, posts)
