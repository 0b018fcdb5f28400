"""Booting a built kernel in QEMU (TCG) with a busybox initramfs, and
reading what it printed (``boot.result``).

KVM guests hang on the machines this was written on, so the guest runs
under TCG (``-accel tcg -cpu max``). The serial console is the only
channel: /init prints markers around the plan and the plan prints TAP.
A guest that does not reach the end marker within the target's timeout is
killed and reported with the tail of its console.
"""

from __future__ import annotations

import gzip
import hashlib
import re
import shutil
import tempfile
import time
from pathlib import Path

from napipatch import fileio, procs
from napipatch.errors import NapipatchError
from napipatch.jobs.boot.console import BEGIN, END
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
    files packed into the initramfs: see build)."""
    require_bootable(kernel, target)
    initrd = build(plan or target.boot.plan, workdir / "initramfs", extra)
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


# ----------------------------------------------------------------------
# The guest's initramfs: busybox-static, an /init, and the target's test plan.
#
# /init mounts proc/sys/dev, runs the plan between two markers the host
# looks for on the serial console, and reboots (QEMU runs with -no-reboot,
# so the reboot ends it). Packed as newc cpio + gzip; rebuilt only when the
# plan or busybox changes.


INIT = f"""#!/bin/sh
/bin/busybox mkdir -p /proc /sys /dev /tmp /sbin /usr/bin /usr/sbin
/bin/busybox --install -s
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mount -t tmpfs tmpfs /tmp
echo {BEGIN}
sh /plan.sh
echo "{END} rc=$?"
sync
reboot -f
"""


def find_busybox() -> Path:
    for p in ("/bin/busybox", "/usr/bin/busybox"):
        if Path(p).is_file():
            out = procs.run(["file", "-L", p], timeout=None).stdout \
                if shutil.which("file") else "statically linked"
            if "dynamically" not in out:
                return Path(p)
    raise NapipatchError("busybox", "a static busybox is needed (apt-get install busybox-static)")


def build(plan: Path, dest_dir: Path, extra: dict[str, Path] | None = None) -> Path:
    """initrd.gz for ``plan`` in ``dest_dir`` (cached by content).

    ``extra`` maps paths in the guest (``bin/napi_rr``) to files to pack
    there, executable (the latency experiment's workload program).
    """
    busybox = find_busybox()
    extra = extra or {}
    h = hashlib.sha256(INIT.encode() + plan.read_bytes() + busybox.read_bytes())
    for dest, src in sorted(extra.items()):
        h.update(dest.encode() + b"\0" + src.read_bytes())
    h = h.hexdigest()[:12]
    out = dest_dir / f"initrd-{h}.cpio.gz"
    if out.exists():
        return out
    if not shutil.which("cpio"):
        raise NapipatchError("cpio", "not installed (apt-get install cpio)")
    dest_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="napipatch-initrd-") as td:
        root = Path(td)
        (root / "bin").mkdir()
        shutil.copy2(busybox, root / "bin" / "busybox")
        (root / "bin" / "sh").symlink_to("busybox")
        for d in ("proc", "sys", "dev", "tmp", "sbin", "usr/bin", "usr/sbin"):
            (root / d).mkdir(parents=True, exist_ok=True)
        (root / "init").write_text(INIT)
        (root / "init").chmod(0o755)
        shutil.copy(plan, root / "plan.sh")
        (root / "plan.sh").chmod(0o755)
        for dest, src in extra.items():
            (root / dest).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(src, root / dest)
            (root / dest).chmod(0o755)
        files = sorted(str(p.relative_to(root)) for p in root.rglob("*"))
        cp = procs.run(["cpio", "-o", "-H", "newc", "-R", "0:0", "--quiet"], timeout=None,
                       package="cpio", cwd=root, input=("\n".join(files) + "\n").encode(),
                       text=False)
        if cp.returncode != 0:
            raise NapipatchError("cpio", cp.stderr.decode(errors="replace").strip())
        fileio.atomic_write(out, gzip.compress(cp.stdout, mtime=0))
    return out
