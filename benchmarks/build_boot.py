"""Benchmark (run by hand): first build, per-patch incremental steps, boot + test plan.

    .venv/bin/python benchmarks/build_boot.py [--tree ~/.cache/napipatch/linux-6.12]
        [--build-dir DIR] [--fresh] [--no-ccache] [--target virtio-net]

--fresh builds in a new temporary build directory (so "first build" really
is a first build; ccache may still be warm unless --no-ccache). Without it
the shared build directory is used and the base step is whatever is left
to do there. The series is 3 small patches touching one .c file each; it is
made with a temporary index (the tree's checkout and branches are untouched).
Peak memory per step: the summed RSS of this process's tree (make, gcc,
QEMU; sampled every 0.5 s), and the largest single process of the run
(exact); see measure.py.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import measure  # noqa: E402

from napipatch.jobs.boot.qemu import boot  # noqa: E402
from napipatch.jobs.build import guestconfig  # noqa: E402
from napipatch.jobs.build.builder import Builder  # noqa: E402
from napipatch.tree import gitutil  # noqa: E402

EDITS = [
    ("net/core/dev.c", "int dev_set_threaded(struct net_device *dev, bool threaded)\n{\n",
     "\t/* benchmark: patch 1 */\n"),
    ("drivers/net/virtio_net.c", "static int virtnet_probe(struct virtio_device *vdev)\n{\n",
     "\t/* benchmark: patch 2 */\n"),
    ("net/core/net-sysfs.c", "static int modify_napi_threaded(struct net_device *dev, unsigned long val)\n{\n",
     "\t/* benchmark: patch 3 */\n"),
]


def make_series(repo: Path, base: str) -> list[str]:
    commits, parent = [], base
    env_ident = dict(gitutil.NAPIPATCH_IDENT, GIT_AUTHOR_NAME="bench", GIT_AUTHOR_EMAIL="b@localhost",
                     GIT_AUTHOR_DATE="2026-01-01T00:00:00Z", GIT_COMMITTER_DATE="2026-01-01T00:00:00Z")
    for i, (path, anchor, add) in enumerate(EDITS, 1):
        text = gitutil.out(repo, "cat-file", "blob", f"{parent}:{path}") + "\n"
        assert anchor in text, (path, anchor)
        text = text.replace(anchor, anchor + add, 1)
        with tempfile.TemporaryDirectory() as td:
            env = {"GIT_INDEX_FILE": str(Path(td) / "index")}
            gitutil.git(repo, "read-tree", parent, env=env)
            blob = gitutil.out(repo, "hash-object", "-w", "--stdin", input=text)
            gitutil.git(repo, "update-index", "--cacheinfo", f"100644,{blob},{path}", env=env)
            tree = gitutil.out(repo, "write-tree", env=env)
        parent = gitutil.out(repo, "commit-tree", tree, "-p", parent, "-m", f"bench patch {i}",
                             env=env_ident)
        commits.append(parent)
    return commits


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tree", type=Path, default=Path.home() / ".cache/napipatch/linux-6.12")
    ap.add_argument("--build-dir", type=Path, default=None)
    ap.add_argument("--fresh", action="store_true")
    ap.add_argument("--no-ccache", action="store_true")
    ap.add_argument("--target", default="virtio-net")
    ap.add_argument("--jobs", type=int, default=2)
    a = ap.parse_args()
    if a.no_ccache:
        os.environ["CCACHE_DISABLE"] = "1"
    tmp = tempfile.mkdtemp(prefix="napipatch-bench-") if a.fresh else None
    bdir = Path(tmp) if tmp else (a.build_dir or Path.home() / ".cache/napipatch/build")
    os.environ["NAPIPATCH_BUILD_DIR"] = str(bdir)
    repo = gitutil.require_repo(a.tree)
    base = gitutil.out(repo, "rev-parse", "HEAD")
    commits = make_series(repo, base)
    # configured as `napipatch test` configures it: the shared build is not reconfigured
    target = guestconfig.load(a.target, repo, base)
    rows = []
    first = "first build (base, empty O= dir)" if a.fresh else "base (shared O= dir, incremental)"
    with Builder(repo, target, bdir, jobs=a.jobs,
                 progress=lambda m: print(f"\r\x1b[K{m[:110]}", end="", file=sys.stderr)) as b:
        for i, c in enumerate([base] + commits):
            with measure.TreeSampler(interval=0.5) as mem:
                t0 = time.monotonic()
                s = b.step(i, c, "base" if i == 0 else f"patch-{i}")
            rows.append((first if i == 0 else f"patch {i} ({EDITS[i - 1][0]})",
                         time.monotonic() - t0, mem.peak,
                         f"{'ok' if s.ok else 'FAILED'}, {s.rebuilt} objects compiled"))
        if target.boot:
            with measure.TreeSampler(interval=0.5) as mem:
                t0 = time.monotonic()
                r = boot(b.dirs.obj / target.image, target, b.dirs.root)
            oks = sum(t.ok and t.skip is None for t in r.tests)
            skips = sum(t.skip is not None for t in r.tests)
            rows.append(("boot + test plan (TCG)", time.monotonic() - t0, mem.peak,
                         f"{oks} ok, {skips} skip, {len(r.failed)} not ok, finished={r.finished}"))
    print(file=sys.stderr)
    print(f"\nbuild dir: {bdir}  target: {a.target}  make -j{a.jobs}  "
          f"ccache: {'off' if a.no_ccache else 'on'}  "
          f"largest single process: {measure.mib(measure.children_max_rss())}\n")
    print(f"| {'step':38} | {'wall':>9} | {'peak tree RSS':>13} | result")
    print(f"|{'-' * 40}|{'-' * 11}|{'-' * 15}|{'-' * 40}")
    for name, secs, peak, res in rows:
        print(f"| {name:38} | {secs:7.1f} s | {measure.mib(peak):>13} | {res}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
