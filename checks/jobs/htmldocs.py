"""htmldocs: new Sphinx warnings in the documents the series touches.

What it catches:
    The kernel's Sphinx build (``make htmldocs`` restricted to the
    Documentation/ directories the series changes, with the tree's own
    conf.py and extensions) at the base and at the tip: a warning the tip
    has and the base had not (a malformed table, a duplicate label, a
    kernel-doc directive that finds nothing) is put on the patch that wrote
    its line.

Why a reviewer cares:
    The docs maintainers and NIPA's contest report new htmldocs warnings;
    netdev's documents (the netlink specs' rst, net_cachelines) are
    rendered on docs.kernel.org and a broken table is visible there.

Example:
    ``Documentation/networking/net_cachelines/net_device.rst:180: warning:
    PATCH 3/4 [htmldocs] Malformed table. Text in column margin``.

Fix:
    Fix the rst in the patch that changed it; ``make htmldocs
    SPHINXDIRS=networking`` shows the same warning.
"""

from napipatch.checks import check


@check(id="htmldocs", summary="new Sphinx warnings in the documents the series touches",
       scope="series", needs="build", job="htmldocs")
def run(result):
    return result.on("output")
