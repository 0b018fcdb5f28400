"""Benchmark (run by hand): `napipatch test boot` with the guest config
merging the selftest dirs' fragments (the shipped virtio-net) vs the plain
target (the same with ``config-dirs = []``), cold and warm, side by side.

    .venv/bin/python benchmarks/guest_config.py [--tree ~/.cache/napipatch/linux-6.12]
        [--work DIR] [-j 2]

The series is tests/test_guest_config_boot.py's clean one (a comment in
net/core/dev_addr_lists.c, a KUnit expectation turned round): the chooser
picks bonding's and team's dev_addr_lists.sh. Each side builds in a fresh
build directory of its own (cold: ccache off), then boots the same series
again (warm: nothing to compile); the four runs are interleaved (plain
cold, wide cold, plain warm, wide warm), so both sides share the load.
Prints a markdown table: wall time, objects compiled (the build logs' CC
lines), bzImage and build directory size, what the selftests said.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from conftest import commit_files, edit, format_patch

F = "net/core/dev_addr_lists.c"
KT = "net/core/dev_addr_lists_test.c"
UNSYNC = "void dev_uc_unsync(struct net_device *to, struct net_device *from)\n{\n"


def series(tree: Path, out: Path) -> Path:
    base = subprocess.run(["git", "-C", str(tree), "rev-parse", "v6.12.117-debian^{commit}"],
                          capture_output=True, text=True, check=True).stdout.strip()
    p1 = commit_files(tree, base, {F: edit(tree, base, F, UNSYNC, UNSYNC + "\t/* bench */\n")},
                      "net: core: a comment\n\nBench.\n")
    p2 = commit_files(tree, p1, {KT: edit(tree, p1, KT, "KUNIT_EXPECT_EQ(test, 2, datp->addr_seen);",
                                          "KUNIT_EXPECT_EQ(test, datp->addr_seen, 2);")},
                      "net: core: dev_addr_lists_test: actual value first\n\nBench.\n")
    return format_patch(tree, f"{base}..{p2}", out)


def targets(work: Path, side: str) -> Path:
    d = work / f"targets-{side}"
    shutil.copytree(ROOT / "targets" / "virtio-net", d / "virtio-net")
    if side == "plain":
        toml = d / "virtio-net" / "target.toml"
        text = toml.read_text()
        start = text.index("config-dirs = [")
        end = text.index("]", start) + 1
        toml.write_text(text[:start] + "config-dirs = []" + text[end:])
    return d


def run(side: str, kind: str, patches: Path, tree: Path, work: Path, jobs: int) -> dict:
    bdir = work / f"build-{side}"
    logs = list(bdir.glob("*/virtio-net/logs/*.log"))
    env = dict(os.environ, NAPIPATCH_BUILD_DIR=str(bdir), NAPIPATCH_TARGETS_DIR=str(targets(
        work / kind, side)), CCACHE_DISABLE="1", XDG_CACHE_HOME=str(work / f"cache-{side}"))
    t0 = time.monotonic()
    cp = subprocess.run([sys.executable, "-m", "napipatch", "test", "boot", str(patches),
                         "--tree", str(tree), "--target", "virtio-net", "-j", str(jobs),
                         "--format", "json"], capture_output=True, text=True, env=env,
                        check=False)
    wall = time.monotonic() - t0
    new = [p for p in bdir.glob("*/virtio-net/logs/*.log") if p not in logs]
    cc = sum(1 for p in new for ln in p.read_text(errors="replace").splitlines()
             if ln.startswith("  CC "))
    data = json.loads(cp.stdout) if cp.stdout.startswith("{") else {"findings": []}
    said = [f["message"] for f in data["findings"] if f["check"] == "selftest"
            and " selftest drivers/net/" in f["message"]]
    image = next(bdir.glob("*/virtio-net/obj/arch/x86/boot/bzImage"), None)
    du = subprocess.run(["du", "-sm", str(bdir)], capture_output=True, text=True, check=False).stdout.split()
    return {"side": side, "kind": kind, "rc": cp.returncode, "wall": wall, "cc": cc,
            "image": image.stat().st_size if image else 0, "dir_mb": du[0] if du else "?",
            "selftests": "; ".join(m.split(": selftest ", 1)[-1] for m in said) or "-"}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tree", type=Path, default=Path.home() / ".cache/napipatch/linux-6.12")
    ap.add_argument("--work", type=Path, default=None)
    ap.add_argument("-j", "--jobs", type=int, default=2)
    a = ap.parse_args()
    work = a.work or Path(tempfile.mkdtemp(prefix="napipatch-guestconfig-"))
    patches = series(a.tree, work / "series")
    print(f"load before: {os.getloadavg()[0]:.1f}", file=sys.stderr)
    rows = [run(side, kind, patches, a.tree, work, a.jobs)
            for kind in ("cold", "warm") for side in ("plain", "wide")]
    print(f"load after: {os.getloadavg()[0]:.1f}", file=sys.stderr)
    print("| config | run | `test boot` wall | objects compiled | bzImage | build dir | "
          "bonding, team dev_addr_lists.sh | exit |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['side']} | {r['kind']} | {r['wall']:.0f} s | {r['cc']} | "
              f"{r['image'] / 2**20:.2f} MiB | {r['dir_mb']} MiB | {r['selftests']} | {r['rc']} |")


if __name__ == "__main__":
    main()
