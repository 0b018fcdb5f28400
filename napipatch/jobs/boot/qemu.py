"""Booting a built kernel in QEMU (TCG) with a busybox initramfs, and
reading what it printed (``boot.result``).

KVM guests hang on the machines this was written on, so the guest runs
under TCG (``-accel tcg -cpu max``). The serial console is the only
channel: /init prints markers around the plan and the plan prints TAP.
A guest that does not reach the end marker within the target's timeout is
killed and reported with the tail of its console.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

from napipatch import procs
from napipatch.jobs.boot.console import END
from napipatch.jobs.boot import initramfs
from napipatch.jobs.boot.result import BootResult, parse_tap, require_bootable
from napipatch.jobs.targets import Target


def qemu_cmd(kernel: Path, initrd: Path, target: Target) -> list[str]:
    assert target.boot is not None
    b = target.boot
    return ["qemu-system-x86_64", "-accel", "tcg", "-cpu", "max", "-m", b.memory,
            "-nographic", "-no-reboot", "-nodefaults", "-serial", "stdio",
            "-kernel", str(kernel), "-initrd", str(initrd), "-append", b.append, *b.nic]


def boot(kernel: Path, target: Target, workdir: Path, timeout: float | None = None,
         progress=None, plan: Path | None = None,
         extra: dict[str, Path] | None = None) -> BootResult:
    """Boot ``kernel`` and run the target's plan (or ``plan``, with ``extra``
    files packed into the initramfs: see initramfs.build)."""
    require_bootable(kernel, target)
    initrd = initramfs.build(plan or target.boot.plan, workdir / "initramfs", extra)
    timeout = timeout or target.boot.timeout
    logf = workdir / "logs" / f"{time.strftime('%Y%m%d-%H%M%S')}-boot.console.log"
    logf.parent.mkdir(parents=True, exist_ok=True)
    cmd = qemu_cmd(kernel, initrd, target)
    t0 = time.monotonic()
    timed_out = False

    def shown(seconds: float) -> None:
        progress(f"booting {kernel.name} under TCG ({seconds:.0f} s)")
    with open(logf, "w", encoding="utf-8", buffering=1) as lf:
        try:
            procs.run(cmd, timeout=timeout, package="qemu-system-x86", stderr="merge", log=lf,
                      newline="\n", tick=shown if progress else None)
        except procs.ProcessTimeout:
            timed_out = True
    # as written: CRs inside a line stay (read_text would make them line ends)
    console = logf.read_bytes().decode("utf-8", "replace")
    m = re.search(END + r" rc=(\d+)", console)
    return BootResult(kernel=kernel, console=console, console_log=logf,
                      seconds=round(time.monotonic() - t0, 1), finished=bool(m),
                      timed_out=timed_out, plan_rc=int(m.group(1)) if m else None,
                      tests=parse_tap(console))
