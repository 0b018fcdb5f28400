"""build: every patch builds, for each target.

What it catches:
    A patch that does not compile, or breaks the link, for a target's
    kernel configuration (virtio-net for QEMU, idpf for the real NIC): the
    base is built, then each applied patch in order, incrementally, in the
    target's kept build directory. A build error is an error on the patch
    that caused it, at the compiler's FILE:LINE; a warning the patch's
    build printed and its parent's did not is a warning; an object the
    configuration should build and did not is an error.

Why a reviewer cares:
    A series must build at every patch (bisectability): the netdev
    maintainers drop a series whose middle patch breaks the build, and the
    kernel test robot reports it days later, on a configuration of its own.
    napipatch builds the configurations the series is meant for before the
    mail leaves.

Example:
    Patch 2 calls ``napi_set_threaded(napi)`` after patch 1 gave it a second
    parameter: ``net/core/dev.c:6830: error: too few arguments to function
    'napi_set_threaded'`` on patch 2, for virtio-net and idpf.

Fix:
    Build each patch with ``git rebase -x 'make -j$(nproc)'`` before sending,
    and fold the fix into the patch that broke it, not into a later one.
"""

from napipatch.checks import check


@check(id="build", summary="the base and every patch build for each target (virtio-net, idpf)",
       scope="patch", needs="build", job="build")
def run(result):
    return result.on("steps")
