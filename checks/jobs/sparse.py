"""sparse: new sparse warnings (C=1) in the objects a patch can change (NIPA's build_allmodconfig_warn).

What it catches:
    The warnings sparse prints in NIPA's ``W=1 C=1`` allmodconfig build
    (address spaces, endianness, lock context, casts) that a patch's
    objects give and its parent's did not, compared without line numbers.
    It reads the same build as ``build-w1``: selecting both runs it once.

Why a reviewer cares:
    sparse's endianness and ``__rcu`` warnings are real bugs more often
    than not; NIPA counts them in build_allmodconfig_warn and fails the
    patch when they grow.

Example:
    ``drivers/net/ethernet/intel/idpf/idpf_txrx.c:812: warning: PATCH 3/5
    [sparse] incorrect type in assignment (different base types)``.

Fix:
    Use the right type (``__le16`` and ``le16_to_cpu()``, ``rcu_dereference()``
    for an ``__rcu`` pointer) in the patch that introduced it.
"""

from napipatch.checks import check


@check(id="sparse", summary="new sparse (C=1) warnings in the objects a patch can change",
       scope="patch", needs="build", job="warnings-w1", nipa=("build_allmodconfig_warn",))
def run(result):
    return result.on("checker")
