"""A static function without inline added to a header.

What it catches:
    An added line in a ``.h`` file that starts a ``static`` declaration
    with a ``(`` that is not ``static inline`` / ``static __always_inline``
    (``static int foo(void)``, ``static void bar(struct x *p);``), or a
    one-line function definition that is neither (``int foo(void) {``), the
    netdev CI's two patterns. Lines ending in ``\\`` (inside a macro) do
    not count. Each is an error at its file and line.

Why a reviewer cares:
    The netdev CI (NIPA's ``header_inline`` test) posts ``fail`` for any
    such line; it has no warning state. A ``static`` function in a header
    is compiled into every file that includes it, and the compiler warns
    about each unused copy (``-Wunused-function``).

Example:
    ``+static bool napi_is_threaded(const struct napi_struct *n)`` in
    ``include/linux/netdevice.h``.

Fix:
    ``static inline``; or, for a real function, a prototype in the header
    and the body in a ``.c`` file.
"""

from __future__ import annotations

import re

from napipatch.checks import check

# The CI's patterns, on the text of an added line.
_STATIC = re.compile(r"^static (?!(?:__always_)?inline).*\(.*[^\\]$")
_ONE_LINE = re.compile(r"^(?:static )?(?!(?:__always_)?inline )(?:(?:unsigned|long|short) )*"
                       r"(?:char|bool|void|int|u[0-9]*) [0-9A-Za-z_]*\(.*\) *\{.*[^\\]$")


@check(id="header-inline",
       summary="a static function without inline added to a .h file",
       scope="patch",
       needs="diff",
       version=1,
       files=("*.h",),
       nipa=("header_inline",))
def run(ctx):
    for pf in ctx.diff:
        if pf.is_removed_file or not pf.path.endswith(".h"):
            continue
        for h in pf:
            for ln in h:
                text = ln.value.rstrip("\n")
                if ln.is_added and (_STATIC.match(text) or _ONE_LINE.match(text)):
                    yield ctx.finding(
                        "error", f"static function without inline in a header: {text.strip()}",
                        file=pf.path, line=ln.target_line_no,
                        hint="make it static inline, or move the body to a .c file")
