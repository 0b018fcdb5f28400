"""leftover: a refactor that moves a block into a helper but misses a copy.

What it catches:
    A patch that adds a new function and puts calls to it in place of two
    or more copies of its body, while another copy of those statements is
    still there after the patch, in a file the patch touches or in the
    same directory. Copies are compared as tree-sitter-c parse trees, up to
    whitespace, comments, braces around a single statement and the names
    the code uses for the helper's parameters and locals: the helper's
    parameters match whatever expression a copy has in their place
    (``napi_gro_flush(n, !!timeout)`` is a copy of ``napi_gro_flush(napi,
    flush_old)``). Quiet when the new function replaced fewer than two
    blocks (new code, not a refactor) or its body is a single call.

Why a reviewer cares:
    A refactor that leaves one copy behind is a bug magnet: the next fix
    goes into the helper and the copy silently keeps the old behaviour. On
    v4 of the threaded busy poll series a reviewer pointed out that patch
    2's new gro_flush helper replaced the open-coded block in
    ``__busy_poll_stop()`` and ``__napi_poll()`` but missed the identical
    one in ``napi_complete_done()``.

Example:
    ``napi_gro_flush_normal(napi, flush_old)`` (``if (napi->gro_bitmask)
    napi_gro_flush(napi, flush_old); gro_normal_list(napi);``) replaces the
    blocks of ``__busy_poll_stop()`` and ``__napi_poll()`` while
    ``napi_complete_done()`` keeps ``if (n->gro_bitmask) { ...
    napi_gro_flush(n, !!timeout); } gro_normal_list(n);``.

Fix:
    Replace the copy with a call to the helper, as the finding's hint
    spells it (``napi_gro_flush_normal(n, !!timeout)``), or say in the
    commit message why that copy must stay open-coded.
"""

from __future__ import annotations

import posixpath
import re

from napipatch.checks import check
from napipatch.kernel.cblocks import Copy, Func, Template, find, functions, template
from napipatch.mails.hunks import added_lines, source_files
from napipatch.tree import gitutil


# An added line that may open a function definition (not a declaration).
_HEAD = re.compile(r"^[A-Za-z_][\w\s\*]*?\b(\w+)\s*\([^;]*$")


def _removed(pf) -> set[int]:
    return {ln.source_line_no for h in pf for ln in h if ln.is_removed}


def _helpers(ctx, pf) -> list[Func]:
    """Functions this file gains in the patch (new name, defined on added lines)."""
    heads = {m.group(1) for h in pf for ln in h
             if ln.is_added and (m := _HEAD.match(ln.value.rstrip("\n")))}
    if not heads:
        return []
    pre = None if pf.is_added_file else ctx.pre_text(pf.path)
    if pre:
        # A name already opening a definition before the patch is no new helper;
        # skipping it here spares parsing big files for every touched function.
        heads = {h for h in heads
                 if not re.search(rf"(?m)^[A-Za-z_][^;\n]*\b{h}\s*\([^;]*$", pre)}
        if not heads:
            return []
    post = ctx.post_text(pf.path)
    if post is None:
        return []
    known = {f.name for f in functions(pre)} if pre else set()
    added = added_lines(pf)
    return [f for f in functions(post) if f.name in heads and f.name not in known
            and any(f.line <= n <= f.end for n in added)]


def _replaced(ctx, tpl: Template) -> list[tuple[str, Copy]]:
    """Copies of the helper's body in the pre-patch files that the patch removes."""
    out = []
    for pf in source_files(ctx.diff):
        gone = _removed(pf)
        if not gone or pf.is_added_file:
            continue
        pre = ctx.pre_text(pf.source_file.removeprefix("a/"))
        for c in find(tpl, pre) if pre else []:
            if any(c.line <= n <= c.end for n in gone):
                out.append((pf.path, c))
    return out


def _candidates(ctx) -> list[str]:
    """Post-patch C files the patch touches, and the C files next to them."""
    touched = [pf.path for pf in source_files(ctx.diff)]
    files = dict.fromkeys(touched)
    for d in sorted({posixpath.dirname(p) for p in touched}):
        listing = gitutil.out(ctx.tree.repo, "ls-tree", "--name-only", ctx.post,
                              f"{d}/" if d else ".", check=False)
        files.update(dict.fromkeys(p for p in listing.splitlines() if p.endswith((".c", ".h"))))
    return list(files)


def _report(ctx, helper_file: str, f: Func, tpl: Template, replaced, path: str, c: Copy):
    where = f"{c.function}()" if c.function else "file scope"
    was = "\n".join(f"  {p}: {r.function or 'file scope'}() (pre-patch lines {r.line}-{r.end}), "
                    f"i.e. {r.call(tpl)}" for p, r in replaced)
    return ctx.finding(
        "warning",
        f"this block in {where} is a copy of the body of {f.name}(), which this patch "
        f"put in place of {len(replaced)} other copies; this one was left behind",
        file=path, line=c.line,
        hint=f"replace lines {c.line}-{c.end} with {c.call(tpl)}",
        details=f"{f.name}() is defined at {helper_file}:{f.line}; copies it replaced:\n{was}")


@check(id="leftover",
       summary="a new helper replaced 2+ copies of a block but another copy remains",
       scope="patch",
       needs="tree",
       version=1)
def run(ctx):
    helpers = [(pf.path, f) for pf in source_files(ctx.diff) for f in _helpers(ctx, pf)]
    files: list[str] | None = None
    for helper_file, f in helpers:
        tpl = template(f)
        if not tpl.stmts or tpl.single_call():
            continue
        replaced = _replaced(ctx, tpl)
        if len(replaced) < 2:
            continue
        files = _candidates(ctx) if files is None else files
        for path in files:
            text = ctx.post_text(path)
            for c in find(tpl, text) if text else []:
                if path == helper_file and f.line <= c.line <= f.end:
                    continue    # the helper's own body
                yield _report(ctx, helper_file, f, tpl, replaced, path, c)
