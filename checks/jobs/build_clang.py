"""build-clang: new clang W=1 warnings in the objects a patch can change (NIPA's build_clang).

What it catches:
    What NIPA's build_clang sees: the ``LLVM=1`` x86_64 allmodconfig build
    with ``W=1`` of the objects a patch can change, its new warnings
    against the parent's build of the same objects, and new build errors.
    clang warns where gcc does not (a variable used uninitialized on one
    path, an implicit fallthrough, a tautological comparison).

Why a reviewer cares:
    NIPA fails the patch when its clang warnings grow, and ClangBuiltLinux
    reports follow within days.

Example:
    ``drivers/net/virtio_net.c:2790: warning: PATCH 4/5 [build-clang]
    variable 'err' is used uninitialized whenever 'if' condition is false
    [-Wsometimes-uninitialized]``.

Fix:
    Initialise the variable or restructure the branch in the patch that
    added it; check with ``napipatch test warnings --only build-clang``.
"""

from napipatch.checks import check


@check(id="build-clang", summary="new clang LLVM=1 W=1 warnings in the objects a patch can change",
       scope="patch", needs="build", job="warnings-clang", nipa=("build_clang",))
def run(result):
    return result.on("compiler")
