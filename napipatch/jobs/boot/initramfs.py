"""The guest's initramfs: busybox-static, an /init, and the target's test plan.

/init mounts proc/sys/dev, runs the plan between two markers the host
looks for on the serial console, and reboots (QEMU runs with -no-reboot,
so the reboot ends it). Packed as newc cpio + gzip; rebuilt only when the
plan or busybox changes.
"""

from __future__ import annotations

import gzip
import hashlib
import shutil
import tempfile
from pathlib import Path

from napipatch import fileio, procs
from napipatch.errors import NapipatchError
from napipatch.jobs.boot.console import BEGIN, END

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
