"""build-tools: the selftests a patch can change build without new warnings or untracked files (NIPA's build_tools).

What it catches:
    For each patch touching include/ or tools/ (as NIPA's build_tools
    decides): the selftest targets whose files it changes, those including
    a uapi header it changes, and net (which builds tools/net/ynl) for a
    netlink spec or tools/net/ynl change, at most four, built with ``make
    -k -C tools/testing/selftests TARGETS=...`` at the parent and at the
    patch against ``make headers`` of each. Each stderr line matching
    warn|error the parent's build did not print (by text, without line
    numbers) is a finding on the patch; a file the build leaves untracked
    that the parent's build did not is an error. NIPA's SKIP_TARGETS (bpf,
    kvm, mm ...) are not built and are named; targets past the bound make
    NIPA's state unknown.

Why a reviewer cares:
    NIPA fails the patch when the warning/error count of the selftests
    build grows or a new untracked file appears (a built program missing
    from .gitignore), and a selftest that does not build is not run by
    the netdev CI at all.

Example:
    ``tools/testing/selftests/net/busy_poller.c:120: warning: PATCH 5/5
    [build-tools] selftests net: busy_poller.c:120:13: warning: unused
    variable 'ret' [-Wunused-variable]``.

Fix:
    Fix the selftest in the patch that changed it; list a new program in
    the .gitignore of its directory or of the target above it (``napipatch
    fix --only build-tools`` does that in the patch that added it).
    ``make -C tools/testing/selftests TARGETS=net`` after ``make headers``
    shows the same lines.
"""

from napipatch.checks import check


@check(id="build-tools", summary="the selftest targets a patch can change build without new "
                                 "warnings or untracked files (parent against patch)",
       scope="patch", needs="build", job="build-tools", nipa=("build_tools",),
       fixes="lists a leftover of the build in the nearest .gitignore of its directory "
             "(napipatch fix --only build-tools: the build runs)")
def run(result):
    return result.on("output")
