"""Patches that mix uAPI or a netlink spec, core code and several drivers.

What it catches:
    One patch that changes a uAPI header or netlink spec, core networking
    code (net/core, include/linux, include/net) and files of two or more
    drivers at once. Reported as info: it is a judgement call.

Why a reviewer cares:
    Such a patch is hard to review and to bisect: a regression in one
    driver points at a commit that also changed the ABI. On threaded busy
    poll v4 patch 3 (enum, driver call sites and the new busy-poll mode in
    one patch) the reviewers asked for a split "to ease review and
    bisection".

Example:
    A patch touching Documentation/netlink/specs/netdev.yaml,
    net/core/dev.c and four drivers/net/... files.

Fix:
    First the interface change with every caller updated, then the new
    behaviour, then the uAPI that exposes it.
"""

from __future__ import annotations

from napipatch.checks import check


CORE = ("net/core/", "include/linux/", "include/net/", "net/ipv4/", "net/ipv6/")


def _driver(path: str) -> str | None:
    """The driver a drivers/ path belongs to (its directory, at most 5 deep)."""
    parts = path.split("/")
    if parts[0] != "drivers" or len(parts) < 3:
        return None
    dirs = parts[:-1][:5]
    if len(dirs) <= 2:  # drivers/net/virtio_net.c: the file is the driver
        return path.rsplit(".", 1)[0]
    return "/".join(dirs)


@check(id="split",
       summary="one patch mixing uAPI/spec, core code and several drivers",
       scope="patch",
       needs="diff",
       version=1)
def run(ctx):
    paths = [f.path for f in ctx.diff]
    uapi = [p for p in paths if p.startswith(("include/uapi/", "Documentation/netlink/specs/"))]
    core = [p for p in paths if p.startswith(CORE)]
    drivers = sorted({d for p in paths if (d := _driver(p))})
    if uapi and core and len(drivers) >= 2:
        yield ctx.finding(
            "info",
            f"mixes uAPI/spec ({len(uapi)} files), core code ({len(core)}) and "
            f"{len(drivers)} drivers in one patch",
            hint="split: the interface change with its callers first, the new behaviour "
                 "next, the uAPI last; it eases review and bisection",
            details="\n".join(["uAPI/spec: " + ", ".join(uapi), "core: " + ", ".join(core),
                               "drivers: " + ", ".join(drivers)]))
