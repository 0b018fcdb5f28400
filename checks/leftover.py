"""leftover: a refactor that moves a block into a helper but misses a copy.

What it catches:
    A patch that adds a new function and puts calls to it in place of two
    or more copies of its body, while another copy of those statements is
    still there after the patch. All of these must hold:

    - the function is new: the patch adds its definition, and the file had
      no function of that name before;
    - the patch removes at least two copies of its body, each in a hunk
      that adds a call to it (a copy replaced by a call, not code that
      moved or went away);
    - the body is a real block, not a line: at least 3 statements
      (counting those inside an ``if`` or a loop) and 15 tokens;
    - the copy left behind is where a reviewer would look: in a file the
      patch touches, or in a .c/.h file of the directory of the helper or
      of a copy it replaced.

    Copies are compared as tree-sitter-c parse trees, up to whitespace,
    comments, braces around a single statement and the names the code uses
    for the helper's parameters and locals: the helper's parameters match
    whatever expression a copy has in their place (``napi_gro_flush(n,
    !!timeout)`` is a copy of ``napi_gro_flush(napi, flush_old)``).

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

Cost:
    Linear in the diff plus the files it reads. One pass over the added
    lines finds new function heads and calls; a file is parsed only when
    it gains a new function (after the patch) or a hunk of it calls one
    (before). Only helpers that pass every condition above search for
    copies, and a file is parsed for that only if it contains every
    function the body calls. Copies are found through the body's anchor
    (its longest fixed name, see napipatch/kernel/cblocks.py), never by
    comparing every block with every helper.
"""

from __future__ import annotations

import posixpath
import re

from napipatch.kernel.cblocks import Copy, Func, Template, find, functions, template
from napipatch.mails.hunks import added_lines, source_files
from napipatch.tree import gitutil

ID = "leftover"
SUMMARY = "a new helper replaced 2+ copies of a block but another copy remains"
SCOPE = "patch"
NEEDS = "tree"
VERSION = 2

# A body smaller than this is a line, not a block worth a helper: the
# statements count those nested in if/for/while, tokens leave out comments.
MIN_STATEMENTS = 3
MIN_TOKENS = 15
# Copies the patch must replace with calls before it counts as a refactor.
MIN_REPLACED = 2

# A line that may open a function definition (not a declaration).
_HEAD = re.compile(r"^[A-Za-z_][\w\s\*]*?\b(\w+)\s*\([^;]*$")
_CALL = re.compile(r"\b(\w+)\s*\(")
# What may stand before a called name on its line without making it a
# declaration: nothing, an operator or bracket, or a keyword.
_NOT_A_TYPE = re.compile(r"(^|[^\w\s*]|\b(return|else|do|case|sizeof))\s*$")


def _defined(text: str) -> set[str]:
    """Names opening a function definition in ``text``, by the same regex as added lines."""
    return {m.group(1) for ln in text.splitlines() if (m := _HEAD.match(ln))}


def _new_functions(ctx, pf) -> list[Func]:
    """Functions this file gains in the patch (new name, defined on added lines)."""
    heads = {m.group(1) for h in pf for ln in h
             if ln.is_added and (m := _HEAD.match(ln.value.rstrip("\n")))}
    if not heads:
        return []
    pre = None if pf.is_added_file else ctx.pre_text(pf.path)
    if pre:
        # A name already opening a definition before the patch is no new
        # helper; dropping it here spares parsing files whose heads only changed.
        heads -= _defined(pre)
        if not heads:
            return []
    post = ctx.post_text(pf.path)
    if post is None:
        return []
    known = {f.name for f in functions(pre)} if pre else set()
    added = added_lines(pf)
    return [f for f in functions(post) if f.name in heads and f.name not in known
            and any(f.line <= n <= f.end for n in added)]


def _calls(line: str, names) -> set[str]:
    """Names of ``names`` that ``line`` calls (not declares)."""
    return {m.group(1) for m in _CALL.finditer(line)
            if m.group(1) in names and _NOT_A_TYPE.search(line[:m.start()])}


def _replaced(ctx, helpers: dict[str, tuple[str, Func, Template]]) -> dict[str, list]:
    """{helper: [(file, copy)]}: pre-patch copies a hunk removes while it adds a call."""
    out: dict[str, list[tuple[str, Copy]]] = {}
    for pf in source_files(ctx.diff):
        if pf.is_added_file:
            continue
        gone: dict[int, set[str]] = {}     # removed pre-line -> helpers its hunk calls
        for h in pf:
            called = set()
            for ln in h:
                if ln.is_added and (names := _calls(ln.value, helpers)):
                    called |= {n for n in names if not _inside(helpers[n], pf.path,
                                                               ln.target_line_no)}
            if called:
                gone.update({ln.source_line_no: called for ln in h if ln.is_removed})
        wanted = set().union(*gone.values()) if gone else set()
        pre = ctx.pre_text(pf.source_file.removeprefix("a/")) if wanted else None
        for name in sorted(wanted) if pre else []:
            for c in find(helpers[name][2], pre):
                if any(name in gone.get(n, ()) for n in range(c.line, c.end + 1)):
                    out.setdefault(name, []).append((pf.path, c))
    return out


def _inside(helper: tuple[str, Func, Template], path: str, line: int) -> bool:
    """Is post-patch ``path:line`` in the helper's own definition?"""
    where, f, _ = helper
    return where == path and f.line <= line <= f.end


def _candidates(ctx, touched: list[str], near: list[str]) -> list[str]:
    """The files the patch touches, then the other C files of the directories ``near``."""
    files = dict.fromkeys(touched)
    for d in sorted({posixpath.dirname(p) for p in near}):
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


def _helpers(ctx) -> dict[str, tuple[str, Func, Template]]:
    """New functions whose body is big enough to be worth finding: {name: (file, f, tpl)}."""
    out = {}
    for pf in source_files(ctx.diff):
        for f in _new_functions(ctx, pf):
            tpl = template(f)
            if tpl.size >= MIN_STATEMENTS and tpl.tokens >= MIN_TOKENS and tpl.anchor:
                out.setdefault(f.name, (pf.path, f, tpl))
    return out


def run(ctx):
    helpers = _helpers(ctx)
    replaced = {n: r for n, r in _replaced(ctx, helpers).items() if len(r) >= MIN_REPLACED}
    touched = [pf.path for pf in source_files(ctx.diff)]
    seen: set[tuple[str, int, int]] = set()
    for name, copies in replaced.items():
        helper_file, f, tpl = helpers[name]
        near = [helper_file] + [p for p, _ in copies]
        for path in _candidates(ctx, touched, near):
            text = ctx.post_text(path)
            for c in find(tpl, text) if text else []:
                if _inside(helpers[name], path, c.line) or (path, c.line, c.end) in seen:
                    continue    # the helper's own body, or a copy another helper named
                seen.add((path, c.line, c.end))
                yield _report(ctx, helper_file, f, tpl, copies, path, c)
