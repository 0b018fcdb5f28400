"""boot: the series tip boots in QEMU and passes its target's test plan.

What it catches:
    The tip of the series (the last patch that applied) built for each
    bootable target and booted in QEMU (TCG; virtme-ng where the target
    says so): a kernel that does not reach the plan, a test of the plan
    that fails (TAP ``not ok``), a plan that does not finish before the
    target's timeout, and a kernel splat on the console during the boot
    or the plan (WARNING, refcount_t, BUG, Oops, lockdep, KASAN, UBSAN,
    hung task, ref_tracker, kmemleak) even when every test passed, at its
    first frame's FILE:LINE (a splat during a selftest is ``selftest``'s).

Why a reviewer cares:
    A series that compiles can still crash at probe time or warn on the
    first packet; the netdev CI finds it hours later in its contest, and a
    reviewer who boots it finds it by hand. The target's plan exercises
    the series' own feature (for threaded busy poll: the per-NAPI
    ``threaded`` attribute set and read back over netlink).

Example:
    ``boot/virtio-net: error: test 3 'napi threaded attr readback' failed:
    expected 1, got 0`` with the console excerpt and the log's path.

Fix:
    Run ``napipatch test boot`` and read the console log it names; fix the
    patch whose change the failing test or the splat points at.
"""

from napipatch.checks import check


@check(id="boot", summary="the series tip boots in QEMU and passes its target's test plan",
       scope="series", needs="boot", job="boot", nipa=("contest",))
def run(result):
    return result.on("guest")
