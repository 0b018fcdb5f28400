"""build-32bit: new ARCH=i386 W=1 warnings in the objects a patch can change (NIPA's build_32bit).

What it catches:
    What NIPA's build_32bit sees: the i386 allmodconfig build with ``W=1``
    of the objects a patch can change, its new warnings against the
    parent's build of the same objects, and new build errors. 32-bit
    catches what 64-bit hides: ``%lu`` for a ``u64``, a 64-bit division
    without ``div_u64()``, a pointer cast to a too-small integer.

Why a reviewer cares:
    NIPA fails the patch when its 32-bit warnings grow; the kernel test
    robot's i386 reports are the most common build report on netdev.

Example:
    ``net/core/dev.c:7012: warning: PATCH 2/4 [build-32bit] format '%lu'
    expects argument of type 'long unsigned int', but argument 3 has type
    'u64'``.

Fix:
    Use the type's own format (``%llu`` for u64) or helper (``div_u64()``)
    in the patch that added it.
"""

from napipatch.checks import check


@check(id="build-32bit", summary="new ARCH=i386 W=1 warnings in the objects a patch can change",
       scope="patch", needs="build", job="warnings-32bit", nipa=("build_32bit",))
def run(result):
    return result.on("compiler")
