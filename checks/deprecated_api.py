"""Deprecated APIs a patch adds: module_param, untracked references, __free().

What it catches:
    Added lines (``+``) of the diff against removed ones (``-``), counted
    per API over the whole patch, case-insensitively, as the netdev CI
    counts them:

    - ``module_param`` (any of ``module_param*``): an error when the patch
      adds more than it removes, a warning when it adds some but removes
      as many (a moved parameter is still one);
    - ``dev_hold(``, ``dev_put(``, ``get_net(``, ``put_net(``,
      ``init_dummy_netdev(`` (not part of a longer name: ``netdev_hold(``
      is the fix, not the problem): a warning when the patch adds more than
      it removes;
    - ``__free(`` in ``drivers/net/``: a warning when the patch adds more
      than it removes there.

    Each finding is at the first added line and lists the others. The CI
    greps ``git show``; napipatch reads the diff alone (the commit message
    is indented in ``git show``, so neither counts it), and also counts a
    call at the very start of a line, which the CI's ``\\W`` before the
    name misses.

Why a reviewer cares:
    The netdev CI (NIPA's ``deprecated_api`` test) posts ``fail`` for a new
    ``module_param`` and ``warning`` for the others. netdev takes no new
    module parameters (devlink params, ethtool or netlink instead); bare
    ``dev_hold()``/``dev_put()`` and ``get_net()``/``put_net()`` leave
    reference leaks untraceable, unlike ``netdev_hold()``/``netdev_put()``
    and ``get_net_track()``/``put_net_track()``; ``init_dummy_netdev()``
    gave way to ``alloc_netdev_dummy()``; and netdev discourages the
    scope-based ``__free()`` cleanup in drivers
    (Documentation/process/maintainer-netdev.rst).

Example:
    ``+	dev_hold(dev);`` in ``net/core/dev.c``: "adds dev_hold( (1 added, 0
    removed)".

Fix:
    The tracked variant (``netdev_hold(dev, &tracker, GFP_KERNEL)``), a
    devlink parameter instead of a module parameter, explicit cleanup
    instead of ``__free()``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from napipatch.checks import check


@dataclass(frozen=True)
class Api:
    name: str
    pattern: re.Pattern
    severity: str            # when the patch adds more than it removes
    moved: str | None        # when it adds some and removes as many (None: quiet)
    under: str = ""          # only in files under this directory
    hint: str = ""


def _call(name: str) -> re.Pattern:
    return re.compile(rf"(?<!\w){re.escape(name)}\(", re.I)


APIS = (
    Api("module_param", re.compile("module_param", re.I), "error", "warning",
        hint="netdev takes no new module parameters: use a devlink parameter, ethtool "
             "or netlink"),
    Api("dev_hold(", _call("dev_hold"), "warning", None,
        hint="netdev_hold(dev, &tracker, gfp) tracks the reference"),
    Api("dev_put(", _call("dev_put"), "warning", None,
        hint="netdev_put(dev, &tracker) tracks the reference"),
    Api("put_net(", _call("put_net"), "warning", None,
        hint="put_net_track(net, &tracker) tracks the reference"),
    Api("get_net(", _call("get_net"), "warning", None,
        hint="get_net_track(net, &tracker, gfp) tracks the reference"),
    Api("init_dummy_netdev(", _call("init_dummy_netdev"), "warning", None,
        hint="alloc_netdev_dummy() replaces it"),
    Api("__free(", _call("__free"), "warning", None, under="drivers/net/",
        hint="netdev discourages scope-based cleanup in drivers: free explicitly"),
)


def _lines(ctx, api: Api):
    """(added [(file, line)], removed count) of ``api`` in the patch."""
    added, removed = [], 0
    for pf in ctx.diff:
        if api.under and not pf.path.startswith(api.under):
            continue
        for h in pf:
            for ln in h:
                if not api.pattern.search(ln.value):
                    continue
                if ln.is_added:
                    added.append((pf.path, ln.target_line_no))
                elif ln.is_removed:
                    removed += 1
    return added, removed


@check(id="deprecated-api",
       summary="new module_param (error), dev_hold/dev_put/get_net/put_net, __free in drivers/net",
       scope="patch",
       needs="diff",
       version=1,
       nipa=("deprecated_api",))
def run(ctx):
    for api in APIS:
        added, removed = _lines(ctx, api)
        if not added:
            continue
        severity = api.severity if len(added) > removed else api.moved
        if severity is None:
            continue
        where = "" if not api.under else f" under {api.under}"
        more = "" if len(added) > removed else ", as many as it removes"
        file, line = added[0]
        yield ctx.finding(
            severity, f"adds {api.name}{where} ({len(added)} added, {removed} removed{more})",
            file=file, line=line, hint=api.hint,
            details="\n".join(f"{f}:{n}" for f, n in added) if len(added) > 1 else "")
