"""selftest: the kernel selftests the series changes or the target lists pass in the guest.

What it catches:
    In the guest ``boot`` starts (virtme-ng, the host's root read-only),
    the kernel's own selftests from tools/testing/selftests that the series
    changes and those the target lists, run as kselftest runs them (their
    ``settings`` timeout, KSFT_SKIP as a skip). A test that fails at the
    tip is an error; one that also fails at the base is said to be a
    failure the series did not cause. A test the guest never reached is
    said so, not counted as passed. A kernel splat while a test ran
    (WARNING, refcount_t, lockdep, KASAN, UBSAN, BUG/Oops, hung task,
    ref_tracker, kmemleak) is an error on that test even when it printed
    ``ok``, at its first frame's FILE:LINE (decoded by the trusted base's
    decode_stacktrace.sh); one the base shows too is "pre-existing".

Why a reviewer cares:
    The netdev CI runs the selftests in its contest after posting, and a
    reviewer asks for a selftest with every new uAPI: a test added by the
    series that fails on its own series is the first thing they see.

Example:
    ``selftest/virtio-net: error: drivers/net/napi_threaded.py:
    napi_set_threaded_one failed (not ok 2)`` on the last patch, with the
    test's output; ``net/core/netdev-genl.c:118: kernel WARNING splat
    during selftest net:nl_netdev.py ... (first frame
    netdev_nl_dev_get_doit at net/core/netdev-genl.c:118)``.

Fix:
    Run the test in a guest (``napipatch test boot``; the report names the
    command and the log) and fix the series or the test; for a splat,
    the decoded frames in the finding's details point at the code.
"""

from napipatch.checks import check


@check(id="selftest", summary="the kernel selftests the series changes or the target lists "
                              "pass in the booted guest",
       scope="series", needs="boot", job="boot")
def run(result):
    # A boot without a guest that runs selftests (busybox) has no result here.
    return result.of("selftest") or None
