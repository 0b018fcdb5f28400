"""Benchmark (run by hand): a clean build per patch (the CI's way) vs napipatch's incremental step.

    .venv/bin/python benchmarks/build_compare.py [--tree ~/.cache/napipatch/linux-6.12]
        [--series threaded-busy-poll@v5] [--patch 1 | --all] [--target virtio-net] [--jobs 2]

In a new temporary build directory (fresh ``O=``, ccache disabled with
``CCACHE_DISABLE=1`` for every step, so neither side is helped by a warm
ccache), with napipatch's own Builder (the one ``napipatch test run`` uses):

1. the worktree for the build is created (timed apart: it is not a build);
2. a clean build of patch K's commit: what a CI that builds every patch
   from scratch pays per patch;
3. the build directory is moved back to patch K-1 (the base for K=1), an
   incremental step itself (reported, not compared);
4. the incremental step to patch K: what napipatch pays for that patch.

With ``--all`` (K=1), steps 2..N follow incrementally too, so the
incremental cost of the whole series is measured. The clean build is done
once; its cost for an N-patch series is extrapolated as N times it. The
series is applied with a temporary index (napipatch.tree.apply.apply_in_index):
the tree's checkout and branches are untouched. Peak memory per step: the
summed RSS of this process's tree (sampled) and the largest single process.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import measure  # noqa: E402

from napipatch.jobs.build import guestconfig  # noqa: E402
from napipatch.jobs.build.builder import Builder  # noqa: E402
from napipatch.store.store import Store  # noqa: E402
from napipatch.tree.apply import apply_in_index  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tree", type=Path, default=Path.home() / ".cache/napipatch/linux-6.12")
    ap.add_argument("--series", default="threaded-busy-poll@v5")
    ap.add_argument("--patch", type=int, default=1, help="the patch whose clean and incremental builds are compared")
    ap.add_argument("--all", action="store_true", help="then build every later patch incrementally too")
    ap.add_argument("--target", default="virtio-net")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--keep", action="store_true", help="keep the build directory")
    a = ap.parse_args()
    os.environ["CCACHE_DISABLE"] = "1"
    series = Store(ROOT / "series").load(a.series)
    applied = apply_in_index(a.tree, series)
    if applied.failure:
        raise SystemExit(str(applied.failure))
    n = len(applied.commits)
    k = 1 if a.all else a.patch
    if not 1 <= k <= n:
        raise SystemExit(f"--patch must be 1..{n}")
    bdir = Path(tempfile.mkdtemp(prefix="napipatch-build-compare-"))
    os.environ["NAPIPATCH_BUILD_DIR"] = str(bdir)
    # configured as `napipatch test` configures it (the selftest dirs' fragments)
    target = guestconfig.load(a.target, a.tree, applied.base)
    load0 = os.getloadavg()[0]
    rows = []

    def timed(name, fn, note=lambda r: ""):
        with measure.TreeSampler(interval=0.5) as s:
            t0 = time.monotonic()
            r = fn()
            secs = time.monotonic() - t0
        rows.append((name, secs, note(r), s.peak))
        print(f"{name}: {secs:.1f} s {note(r)}", file=sys.stderr, flush=True)
        return secs, r

    def built(s):
        if not s.ok:
            raise SystemExit(f"build failed: {s.log}\n{s.error_excerpt}")
        return f"{s.rebuilt} objects compiled"

    with Builder(a.tree, target, bdir, jobs=a.jobs) as b:
        timed("worktree for the build (git worktree add)", lambda: b.checkout(applied.before(k)))
        clean, _ = timed(f"CLEAN build of patch {k} (empty O=, no ccache)",
                         lambda: b.step(k, applied.after(k), f"clean-{k}"), built)
        timed(f"back to {'the base' if k == 1 else f'patch {k - 1}'} (incremental, not compared)",
              lambda: b.step(k - 1, applied.before(k), "back"), built)
        incs = []
        for i in range(k, n + 1 if a.all else k + 1):
            secs, _ = timed(f"INCREMENTAL step to patch {i}", lambda i=i: b.step(i, applied.after(i), f"patch-{i}"),
                            built)
            incs.append(secs)
    print(f"\ntree: {a.tree}  series: {a.series} ({n} patches)  target: {a.target}  make -j{a.jobs}  "
          f"ccache: off (CCACHE_DISABLE=1)  build dir: {bdir}")
    print(f"load average at start {load0:.2f}, at end {os.getloadavg()[0]:.2f}; "
          f"largest single process over the run: {measure.mib(measure.children_max_rss())}\n")
    print(f"| {'step':56} | {'wall':>9} | {'peak tree RSS':>13} | result")
    print(f"|{'-' * 58}|{'-' * 11}|{'-' * 15}|{'-' * 30}")
    for name, secs, note, peak in rows:
        print(f"| {name:56} | {secs:7.1f} s | {measure.mib(peak):>13} | {note}")
    print()
    inc = incs[0]
    print(f"patch {k}: clean build {clean:.1f} s vs incremental step {inc:.1f} s: "
          f"{clean / max(inc, 0.1):.1f}x")
    if a.all:
        print(f"{n}-patch series: clean build per patch {n} x {clean:.1f} s = {n * clean:.0f} s "
              f"(EXTRAPOLATED from the one clean build) vs incremental steps {sum(incs):.0f} s "
              f"(measured: {', '.join(f'{x:.0f}' for x in incs)} s) -> {n * clean / max(sum(incs), 0.1):.1f}x")
    else:
        print(f"{n}-patch series, EXTRAPOLATED from patch {k} alone: clean {n} x {clean:.1f} s = "
              f"{n * clean:.0f} s vs incremental {n} x {inc:.1f} s = {n * inc:.0f} s "
              "(incremental steps differ a lot by what a patch touches; use --all to measure them)")
    if a.keep:
        print(f"kept: {bdir}")
    else:
        shutil.rmtree(bdir, ignore_errors=True)
        from napipatch.tree import gitutil
        gitutil.git(a.tree, "worktree", "prune", check=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
