"""Benchmark (run by hand): ynl-build and build-tools (NIPA's ynl and
build_tools) on stored series, cold and warm, against NIPA's build_tools.

    .venv/bin/python benchmarks/tools_builds.py [--tree ~/.cache/napipatch/linux-6.12]
        [--series threaded-busy-poll@v5 --series threaded-busy-poll@v4] [--anchor] [--dir DIR]

1. cold: a new build directory (``NAPIPATCH_BUILD_DIR``: the tools
   worktree, ``make headers``, the ynl exports) and an empty ccache
   (``CCACHE_DIR``), ``napipatch check SERIES --tree T --only
   ynl,ynl-build,build-tools``;
2. warm: the same command again (kept results per commit and target);
3. ``--anchor``: what NIPA's build_tools builds for one patch, once: every
   selftest target less its SKIP_TARGETS, ``make -k -j2`` from a clean
   checkout of the base in the cold run's worktree, ccache off (NIPA builds
   this twice a patch, at HEAD~ and HEAD).

Reported: wall time, the largest process and the summed RSS of the process
tree (``measure``), the disk the build directory and ccache take, the
forecast of ynl and build_tools per patch, and the load average.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks import measure
from napipatch.jobs.tools.selftest_targets import SKIP_TARGETS

ROOT = Path(__file__).resolve().parent.parent
NAPIPATCH = ROOT / ".venv" / "bin" / "napipatch"


def _du(path: Path) -> str:
    cp = subprocess.run(["du", "-sh", str(path)], capture_output=True, text=True, check=False)
    return cp.stdout.split()[0] if cp.returncode == 0 and cp.stdout else "-"


def _load() -> str:
    return Path("/proc/loadavg").read_text().split(" ", 3)[0]


def run_check(series: str, tree: Path, d: Path) -> dict:
    env = dict(os.environ, NAPIPATCH_BUILD_DIR=str(d / "build"), CCACHE_DIR=str(d / "ccache"))
    cmd = [str(NAPIPATCH), "check", series, "--tree", str(tree), "--only",
           "ynl,ynl-build,build-tools", "--format", "json"]
    load0 = _load()
    r = measure.run(cmd, env=env)
    report = json.loads(r.stdout) if r.stdout.strip().startswith("{") else {}
    states = {ctx: "".join(p["nipa"].get(ctx, {}).get("state", "-")[0]
                           for p in report.get("series", {}).get("patches", []))
              for ctx in ("ynl", "build_tools")}
    return {"rc": r.rc, "wall": round(r.wall, 1), "max_rss": measure.mib(r.max_rss),
            "peak_tree": measure.mib(r.peak_tree), "load": f"{load0} -> {_load()}",
            "build": _du(d / "build"), "ccache": _du(d / "ccache"), "forecast": states,
            "stderr": r.stderr[-300:] if r.rc not in (0, 1) else ""}


def anchor(d: Path, base: str) -> dict:
    """NIPA's whole selftests build of one commit, in the cold run's worktree."""
    tools = next((d / "build").glob("*/tools"))
    src = tools / "src"
    subprocess.run(["git", "-C", str(src), "checkout", "-q", "--detach", base], check=True)
    subprocess.run(["git", "-C", str(src), "clean", "-fdxq", "--", "tools"], check=True)
    env = dict(os.environ, CCACHE_DISABLE="1", LC_ALL="C")
    cmd = ["make", "-k", "-j2", "-C", str(src / "tools/testing/selftests"),
           f"SKIP_TARGETS={' '.join(SKIP_TARGETS)}",
           f"KHDR_INCLUDES=-isystem {tools / 'obj-headers'}/usr/include"]
    load0 = _load()
    r = measure.run(cmd, env=env)
    counted = sum(1 for ln in r.stderr.splitlines() if "warn" in ln.lower() or
                  "error" in ln.lower())
    return {"wall": round(r.wall, 1), "max_rss": measure.mib(r.max_rss),
            "peak_tree": measure.mib(r.peak_tree), "load": f"{load0} -> {_load()}",
            "warn_error_lines": counted}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tree", type=Path, default=Path.home() / ".cache/napipatch/linux-6.12")
    ap.add_argument("--series", action="append")
    ap.add_argument("--anchor", action="store_true")
    ap.add_argument("--dir", type=Path)
    args = ap.parse_args()
    out = {}
    for series in args.series or ["threaded-busy-poll@v5", "threaded-busy-poll@v4"]:
        d = Path(tempfile.mkdtemp(prefix="tools-bench-", dir=args.dir))
        cold = run_check(series, args.tree, d)
        warm = run_check(series, args.tree, d)
        out[series] = {"cold": cold, "warm": warm, "dir": str(d)}
        print(json.dumps({series: out[series]}, indent=1), flush=True)
    if args.anchor:
        base = subprocess.run(["git", "-C", str(args.tree), "rev-parse", "HEAD"],
                              capture_output=True, text=True, check=True).stdout.strip()
        out["anchor"] = anchor(Path(next(iter(out.values()))["dir"]), base)
        print(json.dumps({"anchor": out["anchor"]}, indent=1))


if __name__ == "__main__":
    main()
