"""ynl-build: tools/net/ynl builds without a warning or error line (NIPA's ynl).

What it catches:
    ``make -C tools/net/ynl`` (the YNL C library, the code generated from
    every genetlink spec, and the samples), from a clean copy as NIPA's ynl
    test builds it after a distclean, at the patch that last changes a
    netlink spec, a uapi header or tools/net/ynl, and at the base. Each
    stderr line matching warn|error that the base's build did not print
    (compared by text, without line numbers) is put on that patch; the
    summary gives the base's count. A build that fails is an error.

Why a reviewer cares:
    NIPA's ynl test fails the series on any warning or error line of this
    build, and the spec change that caused it (a new attribute type the
    user-space generator renders with a shadowed variable, a renamed enum)
    is found only hours after posting.

Example:
    ``tools/net/ynl/generated/netdev-user.c:12: warning: PATCH 2/5
    [ynl-build] make -C tools/net/ynl: netdev-user.c:12:5: warning: unused
    variable 'x' [-Wunused-variable]``.

Fix:
    Fix the spec (or the generator) in the patch that changed it;
    ``make -C tools/net/ynl`` shows the same lines. The base's own lines
    fail NIPA's test too: say so in the cover letter.
"""

from napipatch.checks import check


@check(id="ynl-build", summary="tools/net/ynl builds without new warning or error lines "
                               "(at the last patch changing a spec, base for comparison)",
       scope="series", needs="build", job="ynl-tools", nipa=("ynl",))
def run(result):
    return result.on("output")
