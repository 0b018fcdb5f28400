"""The inline keyword added in a .c file.

What it catches:
    Added lines in ``.c`` files with the word ``inline`` outside a comment
    (no ``/`` or ``*`` before it on the line; ``__always_inline`` and
    ``noinline`` are other words), counted against the removed lines that
    have it, over the whole patch, as the netdev CI counts them: when the
    patch adds as many as it removes (a moved or re-indented function) each
    added one is a warning, otherwise each is an error. napipatch also
    counts ``inline`` ending a line (``static inline`` with the name on the
    next line), which the CI's pattern (``inline`` then a non-word
    character) misses.

Why a reviewer cares:
    The netdev CI (NIPA's ``source_inline`` test) posts ``fail`` for a
    patch adding ``inline`` in a ``.c`` file and ``warning`` when the count
    is unchanged. netdev's rule (Documentation/process/maintainer-netdev.rst):
    no ``inline`` in ``.c`` files; the compiler inlines static functions
    where it pays, and ``inline`` hides unused-function warnings.

Example:
    ``+static inline bool napi_busy_poll_threaded(struct napi_struct *n)``
    in ``net/core/dev.c``.

Fix:
    Drop ``inline``; where measurements show it matters, say so in the
    commit message (or use ``__always_inline`` with that reason).
"""

from __future__ import annotations

import re

from napipatch.checks import check

_INLINE = re.compile(r"^(?:[^*/]*\W)?inline(?:\W|$)", re.I)


def _lines(ctx):
    added, removed = [], 0
    for pf in ctx.diff:
        if not pf.path.endswith(".c"):    # a deleted file's lines count as removed
            continue
        for h in pf:
            for ln in h:
                if not _INLINE.match(ln.value.rstrip("\n")):
                    continue
                if ln.is_added:
                    added.append((pf.path, ln.target_line_no, ln.value.strip()))
                elif ln.is_removed:
                    removed += 1
    return added, removed


@check(id="source-inline",
       summary="inline added in a .c file (a warning when as many are removed)",
       scope="patch",
       needs="diff",
       version=1,
       files=("*.c",),
       nipa=("source_inline",))
def run(ctx):
    added, removed = _lines(ctx)
    severity = "warning" if len(added) == removed else "error"
    for file, line, text in added:
        yield ctx.finding(severity, f"inline in a .c file ({len(added)} added, {removed} "
                          f"removed): {text}", file=file, line=line,
                          hint="drop inline and let the compiler decide")
