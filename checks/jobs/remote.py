"""remote: the series tip boots on the target's real host over SSH and passes its plan.

What it catches:
    For a target with a real machine (``napipatch.idpf.host``: a NIC QEMU
    has no model for), the tip is built, its kernel and modules copied to
    the host over SSH, booted there (kexec or reboot) and the target's test
    plan run on the real interface: a kernel that does not come back, a
    plan test that fails, a plan that hangs past
    ``napipatch.TARGET.plan-timeout``, a kernel splat in the host's kernel
    log during the boot or the plan (even when every test passed). The
    host is put back on its previous kernel afterwards. An unreachable
    host is an infrastructure error, never a pass.

Why a reviewer cares:
    Driver changes (idpf's per-queue NAPI, its threaded mode) are only
    proven on the hardware; the reviewer asks "tested on which NIC?", and
    the cover letter can now answer with a report.

Example:
    ``remote/idpf: error: idpf: test 2 'busy poll on queue 0' failed`` with
    the plan's TAP and the host's kernel log excerpt.

Fix:
    Read the plan's output in the report and the log it names; fix the
    driver patch it points at, then ``napipatch test remote`` again.
"""

from napipatch.checks import check


@check(id="remote", summary="the series tip boots on the target's real host over SSH and "
                            "passes its plan",
       scope="series", needs="boot", job="remote")
def run(result):
    # Everything the remote job saw on the host (its boot, plan, kernel log).
    return result.on("host")
