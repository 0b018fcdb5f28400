"""What a boot gave, whatever booted it (QEMU with busybox, vng, an SSH
host): the ``BootResult`` model, the plan's TAP read from the console, and
the first kernel splat on it.
"""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from napipatch.errors import NapipatchError
from napipatch.jobs.boot.console import BEGIN, END
from napipatch.jobs.results import tap
from napipatch.jobs.results.selftests import ProgramRun
from napipatch.jobs.results.tap import Result
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
    begin = next((i for i, ln in enumerate(lines) if BEGIN in ln), None)
    if begin is None:
        return []
    end = next((i for i, ln in enumerate(lines) if END in ln and i > begin), len(lines))
    return tap.parse(lines[begin + 1:end], console=True).results


def require_bootable(kernel: Path, target: Target) -> None:
    """A one-line error unless ``target`` boots, QEMU is there and ``kernel`` was built."""
    if target.boot is None:
        raise NapipatchError(f"target {target.name}", "is build-only (no QEMU model); nothing to boot")
    if not shutil.which("qemu-system-x86_64"):
        raise NapipatchError("qemu-system-x86_64", "not installed (apt-get install qemu-system-x86)")
    if not kernel.is_file():
        raise NapipatchError(kernel, "no kernel image: build the target first")


def splat(console: str) -> str | None:
    """The first kernel splat line on the console, if any."""
    for line in console.splitlines():
        if _SPLAT.search(line):
            return line.strip()
    return None
