"""Benchmark (run by hand): ccache's preprocessor mode vs its depend mode, cold and on a step back.

    .venv/bin/python benchmarks/ccache_modes.py [--tree ~/.cache/napipatch/linux-6.12]
        [--base REV] [--target idpf] [--targets-dir tests/fixtures/targets]
        [--modes preprocessor,depend,off] [--jobs 2]

Each mode gets a new build directory and a new, empty CCACHE_DIR, and
napipatch's own Builder (the one ``napipatch test build`` uses) builds the
base twice in its one worktree: cold (every object a miss: what a new user
or a cold CI pays), then with every object file removed (every compile a
ccache hit: what a step back to a commit built before pays). Per step: wall, the CPU of make and all it
started (user + system, RUSAGE_CHILDREN), objects compiled, ccache's hits
and misses. Modes: ``preprocessor`` (ccache's default: a miss runs the
preprocessor to hash its output, then the compiler), ``depend``
(CCACHE_DEPEND=1: the included files come from the compiler's -MMD file),
``off`` (CCACHE_DISABLE=1). The default target is the tests' lean idpf
(773 objects), which the suite builds cold on every CI run.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from napipatch.jobs.build import guestconfig  # noqa: E402
from napipatch.jobs.build.builder import Builder  # noqa: E402
from napipatch.tree import gitutil  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
MODES = {"preprocessor": {"CCACHE_NODEPEND": "1"}, "depend": {"CCACHE_DEPEND": "1"},
         "off": {"CCACHE_DISABLE": "1"}}
_CCACHE_VARS = ("CCACHE_DEPEND", "CCACHE_NODEPEND", "CCACHE_DISABLE", "CCACHE_DIR")


def cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def stats() -> tuple[int, int]:
    """(hits, misses) of the CCACHE_DIR in the environment."""
    out = subprocess.run(["ccache", "--print-stats"], capture_output=True, text=True,
                         check=False).stdout
    got = dict(re.findall(r"^(\w+)\t(\d+)$", out, re.MULTILINE))
    hits = int(got.get("direct_cache_hit", 0)) + int(got.get("preprocessed_cache_hit", 0))
    return hits, int(got.get("cache_miss", 0))


def one_mode(mode: str, a, base: str, target) -> list[tuple]:
    bdir = Path(tempfile.mkdtemp(prefix=f"napipatch-ccache-{mode}-"))
    for v in _CCACHE_VARS:
        os.environ.pop(v, None)
    os.environ.update(MODES[mode], CCACHE_DIR=str(bdir / "ccache"), NAPIPATCH_BUILD_DIR=str(bdir))
    rows = []
    try:
        with Builder(a.tree, target, bdir, jobs=a.jobs) as b:
            b.checkout(base)
            for name in ("cold", "object files removed"):
                for o in b.dirs.obj.rglob("*.o"):
                    o.unlink()
                h0, m0 = stats() if mode != "off" else (0, 0)
                c0, t0 = cpu(), time.monotonic()
                s = b.step(0, base, f"{mode}-{len(rows)}")
                wall, used = time.monotonic() - t0, cpu() - c0
                if not s.ok:
                    raise SystemExit(f"{mode}: build failed: {s.log}\n{s.error_excerpt}")
                h1, m1 = stats() if mode != "off" else (0, 0)
                rows.append((mode, name, wall, used, s.rebuilt, h1 - h0, m1 - m0))
                print(f"{mode} {name}: {wall:.1f} s wall, {used:.1f} CPU-s, {s.rebuilt} objects, "
                      f"ccache {h1 - h0} hits / {m1 - m0} misses", file=sys.stderr, flush=True)
    finally:
        shutil.rmtree(bdir, ignore_errors=True)
        gitutil.git(a.tree, "worktree", "prune", check=False)
    return rows


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tree", type=Path, default=Path.home() / ".cache/napipatch/linux-6.12")
    ap.add_argument("--base", default="HEAD", help="the commit built (the prepared tree's 6.12)")
    ap.add_argument("--target", default="idpf")
    ap.add_argument("--targets-dir", type=Path, default=ROOT / "tests/fixtures/targets",
                    help="where the target is read from (the shipped ones: targets/)")
    ap.add_argument("--modes", default="preprocessor,depend")
    ap.add_argument("--jobs", type=int, default=2)
    a = ap.parse_args()
    modes = a.modes.split(",")
    if not shutil.which("ccache") or any(m not in MODES for m in modes):
        raise SystemExit(f"needs ccache and --modes from {', '.join(MODES)}")
    os.environ["NAPIPATCH_TARGETS_DIR"] = str(a.targets_dir.resolve())
    base = gitutil.out(a.tree, "rev-parse", "--verify", f"{a.base}^{{commit}}").strip()
    target = guestconfig.load(a.target, a.tree, base)
    load0 = os.getloadavg()[0]
    rows = [r for m in modes for r in one_mode(m, a, base, target)]
    version = subprocess.run(["ccache", "--version"], capture_output=True, text=True,
                             check=False).stdout.splitlines()[0]
    print(f"\ntree: {a.tree}  target: {a.target} ({a.targets_dir})  "
          f"base: {base[:12]}  make -j{a.jobs}  {version}")
    print(f"load average at start {load0:.2f}, at end {os.getloadavg()[0]:.2f}\n")
    print("| mode | step | wall | CPU | objects compiled | ccache hits / misses |")
    print("|---|---|---|---|---|---|")
    for mode, name, wall, used, n, hits, misses in rows:
        cc = "" if mode == "off" else f"{hits} / {misses}"
        print(f"| {mode} | {name} | {wall:.1f} s | {used:.1f} s | {n} | {cc} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
