"""Booting a built kernel in QEMU (TCG) with a busybox initramfs, and
reading the test plan's TAP (also for the vng backend, napipatch.jobs.vng).

KVM guests hang on the machines this was written on, so the guest runs
under TCG (``-accel tcg -cpu max``). The serial console is the only
channel: /init prints markers around the plan and the plan prints TAP.
A guest that does not reach the end marker within the target's timeout is
killed and reported with the tail of its console.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from napipatch.errors import NapipatchError
from napipatch.jobs import initramfs, tap
from napipatch.jobs.selftests import ProgramRun
from napipatch.jobs.tap import Result
from napipatch.jobs.targets import Target

_SPLAT = re.compile(r"(WARNING: CPU|------------\[ cut here \]|BUG: |Oops|general protection fault|"
                    r"Kernel panic|possible circular locking|KASAN|UBSAN|"
                    r"inconsistent lock state)")


@dataclass
class BootResult:
    kernel: Path
    console: str
    console_log: Path
    seconds: float
    finished: bool  # the plan reached its end marker
    timed_out: bool
    plan_rc: int | None
    tests: list[Result] = field(default_factory=list)  # the plan's TAP
    backend: str = "busybox"
    accel: str = "tcg"
    runs: list[ProgramRun] = field(default_factory=list)  # the kernel selftests (vng backend)
    not_run: list[str] = field(default_factory=list)  # selftests the guest never reached
    selftest_seconds: float | None = None  # first selftest's start to the last one's end

    @property
    def failed(self) -> list[Result]:
        return [t for t in self.tests if t.status == "not ok"]

    def excerpt(self, around: str | None = None, lines: int = 40) -> str:
        text = self.console.splitlines()
        if around:
            for i, ln in enumerate(text):
                if around in ln:
                    return "\n".join(text[max(0, i - 5):i + lines])
        return "\n".join(text[-lines:])


def parse_tap(console: str) -> list[Result]:
    """The plan's results: the TAP between the initramfs markers (what
    follows, the selftests' KTAP, is not the plan's)."""
    lines = console.splitlines()
    begin = next((i for i, ln in enumerate(lines) if initramfs.BEGIN in ln), None)
    if begin is None:
        return []
    end = next((i for i, ln in enumerate(lines) if initramfs.END in ln and i > begin), len(lines))
    return tap.parse(lines[begin + 1:end], console=True).results


def qemu_cmd(kernel: Path, initrd: Path, target: Target) -> list[str]:
    assert target.boot is not None
    b = target.boot
    return ["qemu-system-x86_64", "-accel", "tcg", "-cpu", "max", "-m", b.memory,
            "-nographic", "-no-reboot", "-nodefaults", "-serial", "stdio",
            "-kernel", str(kernel), "-initrd", str(initrd), "-append", b.append, *b.nic]


def require_bootable(kernel: Path, target: Target) -> None:
    """A one-line error unless ``target`` boots, QEMU is there and ``kernel`` was built."""
    if target.boot is None:
        raise NapipatchError(f"target {target.name}", "is build-only (no QEMU model); nothing to boot")
    if not shutil.which("qemu-system-x86_64"):
        raise NapipatchError("qemu-system-x86_64", "not installed (apt-get install qemu-system-x86)")
    if not kernel.is_file():
        raise NapipatchError(kernel, "no kernel image: build the target first")


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
    with open(logf, "wb") as lf:
        p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=lf, stderr=subprocess.STDOUT)
        try:
            while p.poll() is None:
                if time.monotonic() - t0 > timeout:
                    timed_out = True
                    p.kill()
                    p.wait()
                    break
                if progress:
                    progress(f"booting {kernel.name} under TCG ({time.monotonic() - t0:.0f} s)")
                time.sleep(0.5)
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()
    console = logf.read_bytes().decode(errors="replace").replace("\r\n", "\n")
    m = re.search(initramfs.END + r" rc=(\d+)", console)
    return BootResult(kernel=kernel, console=console, console_log=logf,
                      seconds=round(time.monotonic() - t0, 1), finished=bool(m),
                      timed_out=timed_out, plan_rc=int(m.group(1)) if m else None,
                      tests=parse_tap(console))


def splat(console: str) -> str | None:
    """The first kernel splat line on the console, if any."""
    for line in console.splitlines():
        if _SPLAT.search(line):
            return line.strip()
    return None
