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
    Linear in the diff plus the files it reads. A first pass over the
    diff counts the names called on added lines of hunks that also remove
    code; a new function called there fewer than twice is never parsed,
    and one that is gets cut out of its file at its closing brace and
    parsed alone. A file before the patch is parsed only where a hunk
    calls such a helper (to find the copies it replaced), and candidate
    files only for a helper that passed every condition above, and only
    if they contain every function its body calls. Copies are found
    through the body's anchor (its longest fixed name, see
    napipatch/kernel/cblocks.py), never by comparing every block with
    every helper. Six patches of upstream changes (82,000 lines, 365
    files) take 3.7 s of CPU, most of it starting up and applying them.
"""

from __future__ import annotations

import posixpath
import re
from collections import Counter
from dataclasses import replace

from napipatch.checks import check
from napipatch.kernel.cblocks import Copy, Func, Template, find, functions, template
from napipatch.mails.hunks import source_files


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


def _new_functions(ctx, pf, wanted: set[str]) -> list[Func]:
    """Functions of ``wanted`` this file gains in the patch (defined on added lines)."""
    heads = {}
    for h in pf:
        for ln in h:
            if ln.is_added and (m := _HEAD.match(ln.value.rstrip("\n"))) and m.group(1) in wanted:
                heads.setdefault(m.group(1), ln.target_line_no)
    pre = None if pf.is_added_file or not heads else ctx.pre_text(pf.path)
    if pre:
        # A name already opening a definition before the patch is no new helper.
        for name in _defined(pre) & heads.keys():
            del heads[name]
    post = ctx.post_text(pf.path) if heads else None
    if post is None:
        return []
    lines = post.split("\n")
    return [f for name, at in heads.items() if (f := _definition(lines, name, at))]


def _definition(lines: list[str], name: str, at: int) -> Func | None:
    """The definition of ``name`` whose head is line ``at``, parsed alone.

    Kernel style closes a function with ``}`` in column 0, so the helper is
    cut out of its file and parsed by itself, not the whole file with it.
    """
    start = at - 1
    while start > 0 and at - start < 3 and lines[start - 1][:1].isalpha() \
            and not any(c in lines[start - 1] for c in ";{}"):
        start -= 1          # a return type on a line of its own
    end = next((i for i in range(at - 1, len(lines)) if lines[i].startswith("}")), None)
    if end is None:
        return None
    found = [f for f in functions("\n".join(lines[start:end + 1]) + "\n") if f.name == name]
    if not found:
        return None
    # A copy: functions() is cached, its Func objects are shared.
    return replace(found[0], line=found[0].line + start, end=found[0].end + start)


def _replacing_calls(ctx) -> Counter:
    """How often each name is called on an added line of a hunk that also removes lines.

    One pass over the diff, before anything is parsed: a function called
    fewer than MIN_REPLACED times where code goes cannot have replaced
    enough copies, so most new functions (a new driver's) are never parsed.
    """
    out: Counter = Counter()
    for pf in source_files(ctx.diff):
        for h in [] if pf.is_added_file else pf:
            if any(ln.is_removed for ln in h):
                for ln in h:
                    if ln.is_added:
                        out.update(m.group(1) for m in _CALL.finditer(ln.value)
                                   if _NOT_A_TYPE.search(ln.value[:m.start()]))
    return out


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
        files.update(dict.fromkeys(p for p in ctx.tree.ls(ctx.post, d)
                                   if p.endswith((".c", ".h"))))
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
    wanted = {n for n, k in _replacing_calls(ctx).items() if k >= MIN_REPLACED}
    out: dict[str, tuple[str, Func, Template]] = {}
    for pf in source_files(ctx.diff) if wanted else ():
        for f in _new_functions(ctx, pf, wanted):
            tpl = template(f)
            if tpl.size >= MIN_STATEMENTS and tpl.tokens >= MIN_TOKENS and tpl.anchor:
                out.setdefault(f.name, (pf.path, f, tpl))
    return out


@check(id="leftover",
       summary="a new helper replaced 2+ copies of a block but another copy remains",
       scope="patch",
       needs="tree",
       version=2)
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
