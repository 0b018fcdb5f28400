"""selftest: the kernel selftests the series changes or the target lists pass in the guest.

What it catches:
    In the guest ``boot`` starts (virtme-ng, the host's root read-only),
    the kernel's own selftests from tools/testing/selftests that the series
    changes, those that exercise what it changes (the ynl users of a changed
    netlink family, the programs using a changed sysctl, sysfs or ethtool
    name; bounded, each with its reason) and those the target lists, run
    as kselftest runs them (their ``settings`` timeout, KSFT_SKIP as a
    skip). A test that fails at the
    tip is an error; one that also fails at the base is said to be a
    failure the series did not cause. A test the guest never reached is
    said so, not counted as passed.

Why a reviewer cares:
    The netdev CI runs the selftests in its contest after posting, and a
    reviewer asks for a selftest with every new uAPI: a test added by the
    series that fails on its own series is the first thing they see.

Example:
    ``selftest/virtio-net: error: drivers/net/napi_threaded.py:
    napi_set_threaded_one failed (not ok 2)`` on the last patch, with the
    test's output.

Fix:
    Run the test in a guest (``napipatch test boot``; the report names the
    command and the log) and fix the series or the test.
"""

from napipatch.checks import check


@check(id="selftest", summary="the kernel selftests the series changes or the target lists "
                              "pass in the booted guest",
       scope="series", needs="boot", job="boot", nipa=("contest",))
def run(result):
    # A boot without a guest that runs selftests (busybox) has no result here.
    return result.of("selftest") or None
