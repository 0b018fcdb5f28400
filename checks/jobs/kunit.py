"""kunit: the KUnit suites in or beside the touched directories pass under UML (NIPA's contest kunit).

What it catches:
    A KUnit case that fails at the series: the trusted base's
    tools/testing/kunit/kunit.py builds a UML kernel (ARCH=um) with the
    KUnit suites whose objects the Makefiles of the touched directories
    (or their parent, or their tests/) build under a KUnit Kconfig symbol
    (``obj-$(CONFIG_NET_TEST) += net_test.o``; at most 4), and runs them,
    at the last patch changing kernel code. Each failing case, named as
    KTAP names it (``suite.case``, with its parameter), is an error at the
    test's FILE:LINE from its ``EXPECTATION FAILED at`` line. When a case
    fails, the base runs too: a case failing there as well is an info
    (pre-existing). A suite the kernel crashed in is an error too.

Why a reviewer cares:
    NIPA's contest runs KUnit on every branch it tests and fails it on any
    failing case, hours after posting and mixed with other series; a
    change to net/core that breaks ``dev-addr-list-test`` or ``net_core``
    is found there, by someone else, first.

Example:
    ``net/core/dev_addr_lists_test.c:95: error: PATCH 1/1 [kunit] KUnit
    dev-addr-list-test.dev_addr_test_sync_one fails: dev_addr_test_sync_one:
    EXPECTATION FAILED at net/core/dev_addr_lists_test.c:95``.

Fix:
    Run the case with ``tools/testing/kunit/kunit.py run --arch=um
    --kunitconfig=... dev-addr-list-test.dev_addr_test_sync_one`` (the
    check's info gives the .kunitconfig) and fix the code it tests, or
    the test when the behaviour change is intended.
"""

from napipatch.checks import check


@check(id="kunit", summary="the KUnit suites in or beside the touched directories pass under "
                           "UML (at the series; the base for comparison)",
       scope="series", needs="build", job="kunit", nipa=("contest",))
def run(result):
    return result.on("output")
