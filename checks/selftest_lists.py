"""A new net selftest is listed in its Makefile (and .gitignore); the lists stay in order.

What it catches:
    For files under ``tools/testing/selftests/`` with ``/net/`` in the
    path (the netdev CI's scope), in each patch:

    - a new ``.sh``, ``.py`` or ``.c`` (not ``.bpf.c``) whose name is not in
      its directory's ``Makefile`` after the patch (for a ``.c``, the name
      without ``.c``): an error; when only a Makefile of a parent directory
      covers it (a ``$(wildcard lib/py/*.py)`` or the relative path), an
      info, as the CI looks only in the file's own directory;
    - a new ``.c`` whose binary is not in its directory's ``.gitignore``:
      an error;
    - a ``Makefile``, ``config`` or ``.gitignore`` the patch touches that
      gains a format problem: a Makefile list (``TEST_PROGS := \\`` ...)
      not one item a line after a tab, not sorted (as plain text, or by
      depth then case-blind), not closed by a ``# end of VAR`` comment, or
      assigned in more than one block; ``config`` lines not sorted by
      option name (underscores ignored): errors. ``.gitignore`` entries
      out of order: a warning.

    Where napipatch differs from the CI: the CI checks the whole file and
    fails on problems the patch did not add; napipatch reports only the
    new ones, and one info line counting the others (on an old base such
    as 6.12 the lists were never kept in this format). The CI's
    ``.gitignore`` format check reads only ``KEY=value`` lines, so in
    effect checks nothing; napipatch's order check there is its own, hence
    a warning. Without ``--tree`` napipatch reads only the diff: the format
    of the lines each hunk shows (a Makefile hunk's items as items of the
    list git names in the hunk header), and a new file counts as listed
    when the series adds its name to the Makefile (a warning otherwise, as
    the Makefile may list it already).

Why a reviewer cares:
    The netdev CI (NIPA's ``check_selftest`` test) posts ``fail`` for each
    of these; it has no warning state. A test missing from ``TEST_PROGS``
    is never installed nor run by ``make run_tests`` or the CI's
    kselftest runner, so it silently tests nothing; unsorted lists are
    where merge conflicts between concurrent series come from.

Example:
    A patch adding ``tools/testing/selftests/net/busy_poll_threaded.sh``
    without touching ``tools/testing/selftests/net/Makefile``:
    "busy_poll_threaded.sh is not in tools/testing/selftests/net/Makefile".

Fix:
    Add the test to ``TEST_PROGS`` (a binary to ``TEST_GEN_PROGS`` and to
    ``.gitignore``) at its sorted place, one item a line after a tab.
    ``napipatch fix`` does it (with the tree, in the patch adding the
    test): in the last block of the list, at the first place where the file
    gains no format problem it did not have (the sorted place, where the
    list is sorted), as ``VAR += name`` or as an item of a ``VAR := \\``
    list, as the file writes it; otherwise it says there is no such place.
"""

from __future__ import annotations

import fnmatch
import posixpath
import re
from collections import Counter

from napipatch.checks import check
from napipatch.kernel.ksftlists import Problem, makefile_blocks, problems
from napipatch.mails.hunks import hunk_lines, parse_diff
from napipatch.report.findings import edit_between, fix, not_fixable

ROOT = "tools/testing/selftests/"
LISTS = ("Makefile", "config", ".gitignore")
_WILDCARD = re.compile(r"\$\(wildcard\s+([^)]+)\)")
_OPEN_LIST = re.compile(r"^[A-Z_][A-Z0-9_]*\s*(:?=|\+=).*\\$")


def in_scope(path: str) -> bool:
    return path.startswith(ROOT) and "/net/" in f"/{path}"


def needle(path: str) -> str | None:
    """What the Makefile must name for a new file (None: not a test file)."""
    base = posixpath.basename(path)
    if base.endswith((".sh", ".py")):
        return base
    if base.endswith(".c") and not base.endswith(".bpf.c"):
        return base.split(".")[0]
    return None


def _new_problems(path: str, pre: str | None, post: str) -> tuple[list[Problem], int]:
    """Problems ``post`` has that ``pre`` had not (by message), and how many it kept."""
    old = Counter(p.message for p in problems(path, pre) or []) if pre is not None else Counter()
    new, kept = [], 0
    for p in problems(path, post) or []:
        if old[p.message] > 0:
            old[p.message] -= 1
            kept += 1
        else:
            new.append(p)
    return new, kept


def _severity(path: str) -> str:
    return "warning" if path.endswith(".gitignore") else "error"


def _nipa(path: str, state: str | None = None) -> dict | None:
    """What a finding on ``path`` means to check_selftest: nothing for a
    .gitignore (its order is napipatch's own), else ``state`` (None: as
    its severity says)."""
    if path.endswith(".gitignore"):
        return {}
    return {"check_selftest": state} if state else None


def _format(ctx, pf, full: bool):
    path = pf.path
    if full:
        pre = None if pf.is_added_file else ctx.pre_text(pf.source_file.removeprefix("a/"))
        post = ctx.post_text(path)
        if post is None:
            return
        new, kept = _new_problems(path, pre, post)
        for p in new:
            yield ctx.finding(_severity(path), f"{path}: {p.message}", file=path, line=p.line,
                              nipa=_nipa(path))
        if kept:
            # The CI checks the whole file, in its own tree (net-next keeps
            # these lists in order; an old base may not): not known here.
            yield ctx.finding("info", f"{path}: {kept} format problem{'s' if kept > 1 else ''} "
                              "this patch did not add (the netdev CI checks the whole file)",
                              file=path, nipa=_nipa(path, "unknown"))
        return
    for h in pf:
        rows = hunk_lines(h)
        pre = [(r.old, r.text) for r in rows if r.kind != "+"]
        post = [(r.new, r.text) for r in rows if r.kind != "-"]
        head = _list_head(path, h)
        if head and pre and post:
            # The list the hunk is in starts above it: git names that line
            # in the hunk header, so the hunk's items are read as its items.
            pre, post = [(pre[0][0], head)] + pre, [(post[0][0], head)] + post
        yield from _window(ctx, path, pre, post)


def _list_head(path: str, hunk) -> str | None:
    """The ``VAR := \\`` line a Makefile hunk continues, from its header."""
    head = (getattr(hunk, "section_header", "") or "").strip()
    if path.endswith("/Makefile") and _OPEN_LIST.match(head):
        return head
    return None


def _window(ctx, path: str, pre, post):
    """New format problems within one hunk's lines (adjacent pairs it shows)."""
    def found(rows):
        got = problems(path, "\n".join(t for _, t in rows)) or []
        return [Problem(rows[p.line - 1][0], p.message) for p in got]
    old = Counter(p.message for p in found(pre))
    for p in found(post):
        if old[p.message] > 0:
            old[p.message] -= 1
        else:
            yield ctx.finding(_severity(path), f"{path}: {p.message}", file=path, line=p.line,
                              nipa=_nipa(path))


def _covered_above(ctx, path: str) -> str | None:
    """A parent directory's Makefile naming ``path`` or a wildcard matching it."""
    d = posixpath.dirname(posixpath.dirname(path))
    while d.startswith(ROOT):           # not the top Makefile: it lists TARGETS
        text = ctx.post_text(f"{d}/Makefile")
        rel = posixpath.relpath(path, d)
        if text and (rel in text or any(fnmatch.fnmatch(rel, pat)
                                         for m in _WILDCARD.finditer(text)
                                         for pat in m.group(1).split())):
            return f"{d}/Makefile"
        d = posixpath.dirname(d)
    return None


def _added_by_series(ctx, path: str, name: str) -> bool:
    """Whether a patch up to this one adds a line naming ``name`` to ``path``."""
    for i, mail in enumerate(ctx.series.patches[:ctx.n], 1):
        for pf in parse_diff(mail.diff, mail.origin or f"patch {i}"):
            if pf.path == path and any(ln.is_added and name in ln.value for h in pf for ln in h):
                return True
    return False


def _candidates(where: str, text: str, item: str, path: str) -> list[tuple[int, str]]:
    """(line, text) places to list ``item``, in order of preference: in a
    .gitignore any line; in a Makefile, in the last block of the list the
    file's kind goes to (scripts TEST_PROGS, programs TEST_GEN_PROGS), as an
    item of a ``VAR := \\`` list or as one more ``VAR += item`` line."""
    lines = text.split("\n")
    if where.endswith(".gitignore"):
        return [(n, item) for n in range(1, len(lines) + 1) if n == 1 or lines[n - 2].strip()]
    blocks = makefile_blocks(text)
    var = "TEST_PROGS" if path.endswith((".sh", ".py")) else \
        next((v for v in ("TEST_GEN_PROGS", "TEST_GEN_FILES") if v in blocks), "")
    if var not in blocks:
        return []
    block = blocks[var][-1]
    listing = lines[block[0][0] - 2].rstrip().endswith("\\") and "+=" not in \
        lines[block[0][0] - 2]
    row = f"\t{item} \\" if listing else f"{var} += {item}"
    return [(n, row) for n, _t in block] + [(block[-1][0] + 1, row)]


def _listing(where: str, text: str | None, item: str, path: str) -> dict:
    """The fix listing ``item`` in ``where``: the first place the check
    accepts (no format problem the file did not have: the sorted place where
    the list is sorted)."""
    if text is None:
        return not_fixable(f"there is no {where} to list it in")
    for n, row in _candidates(where, text, item, path):
        lines = text.split("\n")
        fixed = "\n".join(lines[:n - 1] + [row] + lines[n - 1:])
        if not _new_problems(where, text, fixed)[0]:
            return fix(f"listed {item} in {where} (line {n})",
                       edit_between(where, text, fixed))
    return not_fixable(f"no place in {where} where the list keeps its format")


def _listed(ctx, path: str, full: bool):
    name, d = needle(path), posixpath.dirname(path)
    if name is None:
        return
    wants = [("Makefile", name)] + ([(".gitignore", name)] if not name.endswith((".sh", ".py"))
                                    else [])
    for list_name, item in wants:
        where = f"{d}/{list_name}"
        if full:
            text = ctx.post_text(where)
            if text is not None and item in text:
                continue
            above = _covered_above(ctx, path) if list_name == "Makefile" else None
            if above:
                yield ctx.finding("info", f"{item} is not in {where}, but {above} covers it "
                                  "(the netdev CI looks only in the file's own directory and "
                                  "would fail)", file=path, line=1,
                                  nipa={"check_selftest": "fail"})
                continue
            yield ctx.finding("error", f"{item} is not in {where}", file=path, line=1,
                              hint=f"add it to {where} at its sorted place",
                              fix=_listing(where, text, item, path))
        elif not _added_by_series(ctx, where, item):
            yield ctx.finding("warning", f"{item} is not added to {where} by this series "
                              "(without --tree the file itself is not read)", file=path,
                              line=1, hint=f"add it to {where} at its sorted place",
                              nipa={"check_selftest": "unknown"})


@check(id="selftest-lists",
       summary="a new net selftest is in its Makefile (and .gitignore); those lists stay sorted",
       scope="patch",
       needs="diff",
       version=2,
       files=(ROOT + "*",),
       nipa=("check_selftest",),
       fixes="lists a new test in its directory's Makefile (and a program in .gitignore) "
             "where the list keeps its format")
def run(ctx):
    full = ctx.tree is not None and ctx.applied
    for pf in ctx.diff:
        if pf.is_removed_file or not in_scope(pf.path):
            continue
        if posixpath.basename(pf.path) in LISTS:
            yield from _format(ctx, pf, full)
        if pf.is_added_file:
            yield from _listed(ctx, pf.path, full)
