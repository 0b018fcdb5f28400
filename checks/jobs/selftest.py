"""selftest: the kernel selftests the series changes or the target lists pass in the guest.

What it catches:
    In the guest ``boot`` starts (virtme-ng, the host's root read-only),
    the kernel's own selftests from tools/testing/selftests that the series
    changes, those that exercise what it changes (the ynl users of a changed
    netlink family, the programs using a changed sysctl, sysfs or ethtool
    name; bounded, each with its reason) and those the target lists, run
    as kselftest runs them (their ``settings`` timeout, KSFT_SKIP as a
    skip). A test that fails runs once more in the same guest, as NIPA
    retries it: failing twice at the tip is an error; failing then passing
    is flaky, an info (a warning for NIPA's contest). A test that fails at
    the base too is said to be a failure the series did not cause. Netdev
    state is snapshotted before and after each run (interfaces, namespaces,
    the NIC's channels, rings and features, page pools): a test that leaves
    an interface, a namespace or a changed setting behind is an error on
    that test naming it, unless the base's copy leaks the same. A test the
    guest never reached is said so, not counted as passed. A kernel splat
    while a test ran (WARNING, refcount_t, lockdep, KASAN, UBSAN, BUG/Oops,
    hung task, ref_tracker, kmemleak) is an error on that test even when it
    printed ``ok``, at its first frame's FILE:LINE (decoded by the trusted
    base's decode_stacktrace.sh); one the base shows too is "pre-existing".

Why a reviewer cares:
    The netdev CI runs the selftests in its contest after posting, and a
    reviewer asks for a selftest with every new uAPI: a test added by the
    series that fails on its own series is the first thing they see.

Example:
    ``selftest/virtio-net: error: drivers/net/napi_threaded.py:
    napi_set_threaded_one failed (not ok 2)`` on the last patch, with the
    test's output; ``selftest/virtio-net: error: net:x.sh left netdev
    state changed at patch 2 (...): interface eth1 left behind``;
    ``net/core/netdev-genl.c:118: kernel WARNING splat during selftest
    net:nl_netdev.py ... (first frame netdev_nl_dev_get_doit at
    net/core/netdev-genl.c:118)``.

Fix:
    Run the test in a guest (``napipatch test boot``; the report names the
    command and the log) and fix the series or the test; a test must
    delete what it creates and restore what it changes (a ``trap`` or
    ``defer``), even when it fails; for a splat, the decoded frames in the
    finding's details point at the code.
"""

from napipatch.checks import check


@check(id="selftest", summary="the kernel selftests the series changes or the target lists "
                              "pass in the booted guest",
       scope="series", needs="boot", job="boot", nipa=("contest",))
def run(result):
    # A boot without a guest that runs selftests (busybox) has no result here.
    return result.on("tests") or None
