"""build-w1: new gcc W=1 warnings in the objects a patch can change (NIPA's build_allmodconfig_warn).

What it catches:
    The warnings gcc prints with ``W=1`` (x86_64 allmodconfig, the -Werror
    switches off, as NIPA's build test configures it) that a patch's build
    prints and its parent's build of the same objects did not, compared
    without line numbers so a warning that only moved is not new. The
    objects are those the patch can change: every changed .c, users of what
    a changed header changes plus a sample of its includers, the objects of
    a changed Makefile's directory. A new build error is an error.

Why a reviewer cares:
    NIPA's build_allmodconfig_warn fails a patch whose warning count grows,
    hours after posting, and the maintainers do not apply a series with a
    red build test. The robot's W=1 report comes days later.

Example:
    ``net/core/dev.c:6841: warning: PATCH 2/4 [build-w1] variable 'ret' set
    but not used [-Wunused-but-set-variable]``.

Fix:
    Remove the cause (here the unused variable) in the patch that added it;
    check with ``napipatch test warnings --only build-w1``.
"""

from napipatch.checks import check


@check(id="build-w1", summary="new gcc W=1 warnings in the objects a patch can change "
                              "(x86_64 allmodconfig)",
       scope="patch", needs="build", job="warnings-w1", nipa=("build_allmodconfig_warn",))
def run(result):
    return result.on("compiler")
