"""A series for ``net`` carries a ``Fixes:`` tag (NIPA's fixes_present).

What it catches:
    A series whose subject tag names a tree without "next" in it (``net``,
    the fixes tree) where no patch has a ``Fixes:`` line, unless every
    patch changes only Documentation/ or MAINTAINERS.

    NIPA's rule (tests/series/fixes_present): fail in exactly that case;
    a tree with "next" in its name (``net-next``) needs no tag. napipatch
    reports it as an error on the series, as NIPA fails it. A series
    without a tree tag is not judged here (series-format says the tag is
    missing; NIPA would pick a tree itself).

Why a reviewer cares:
    ``net`` takes fixes only: a patch for it names the commit it fixes, so
    the stable trees get it too. A feature sent to ``net`` by mistake
    belongs in ``net-next``.

Example:
    ``[PATCH net 1/2] net: core: add a counter``, no ``Fixes:`` in either
    patch.

Fix:
    Add ``Fixes: <12+ digit sha> ("subject")`` naming the commit that
    introduced the bug, or send the series to ``net-next``.
"""

from __future__ import annotations

import re

from napipatch.checks import check
from napipatch.mails.hunks import parse_diff

_FIXES = re.compile(r"^Fixes: ", re.M)


def _docs_only(mail) -> bool:
    paths = [pf.path for pf in parse_diff(mail.diff)]
    return bool(paths) and all(p.startswith(("Documentation/", "MAINTAINERS")) for p in paths)


@check(id="fixes-present",
       summary="a series for net (not net-next) has a Fixes: tag unless it only changes docs",
       scope="series",
       needs="diff",
       version=1,
       nipa=("fixes_present",))
def run(ctx):
    tree = ctx.series.tree
    patches = ctx.series.patches
    if tree is None or "next" in tree or not patches:
        return
    if any(_FIXES.search(m.body) for m in patches):
        return
    if all(_docs_only(m) for m in patches):
        return
    yield ctx.finding("error", f"a series for {tree} without a Fixes: tag: {tree} takes "
                      "fixes, each naming the commit it fixes",
                      hint='add Fixes: <sha> ("subject") to the fixing patch, or send the '
                           "series to net-next")
