"""cocci: new coccicheck reports in the C files the series touches.

What it catches:
    The kernel's own semantic patches (``make coccicheck MODE=report``, the
    tree's scripts/coccinelle) on the .c and .h files the series changes,
    at the base and at the tip: a report the tip has and the base had not
    is put on the patch that wrote its line. Misused APIs, a NULL test
    after a dereference, ``kzalloc`` + ``memcpy`` that is ``kmemdup``.

Why a reviewer cares:
    NIPA runs coccicheck in its contest, and reviewers and the kernel test
    robot send its reports as patches of their own after the merge.

Example:
    ``drivers/net/ethernet/intel/idpf/idpf_lib.c:1204: warning: PATCH 3/5
    [cocci] WARNING opportunity for kmemdup``.

Fix:
    Apply what the report suggests in the patch that wrote the line.
"""

from napipatch.checks import check


@check(id="cocci", summary="new coccicheck reports in the C files the series touches",
       scope="series", needs="build", job="cocci")
def run(result):
    return result.on("output")
