"""Benchmark (run by hand): napipatch at an older commit vs this checkout, side by side.

    .venv/bin/python benchmarks/before_after.py [--rev 9aaef08] [--after HEAD]
        [--tree ~/.cache/napipatch/linux-6.12]
        [-n 3] [--no-large] [--upstream ~/.cache/napipatch/linux-7.2] [--json FILE] [--keep DIR]

A refactor that keeps behaviour must give the same findings and statuses and
be no slower. This runs ``napipatch check TARGET --tree T --format json
--no-cache`` with both versions on the same series, interleaved N times (so
load drift hits both), and prints per series: the median wall and CPU
seconds of each side, their ratio, and every finding or check status that
differs (none is the goal).

Each version runs from a ``git worktree`` of its commit (so editing this
checkout meanwhile changes nothing) through PYTHONPATH (it comes before the
venv's editable install on sys.path; its top-level checks/, templates/ and
targets/ linked into its package as the wheel has them), with this venv's
packages; both read the same series store (``NAPIPATCH_SERIES_DIR`` = this
repository's ``series/``) and each has its own cache directory, warmed once
per series before the timed runs (the base's trusted scripts and grep
results, which ``--no-cache`` keeps; every check result is recomputed).

Series: the carried v4 (``threaded-busy-poll-6.12@v4``), v5, the large
rename of benchmarks/large_diff.py (about 880 files) unless ``--no-large``,
and with ``--upstream TREE`` its upstream series (six networking
directories' changes from 6.12 to TREE's release). The job checks'
fixtures: benchmarks/before_after_jobs.py.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import large_diff  # noqa: E402
import measure  # noqa: E402
from measure import median  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
SERIES = ["threaded-busy-poll-6.12@v4", "threaded-busy-poll@v5"]


def arguments(doc: str, default_rev: str = "9aaef08") -> argparse.ArgumentParser:
    """The options every before/after script has: the two commits, the tree,
    where the results go and where the work is kept."""
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    ap.add_argument("--rev", default=default_rev)
    ap.add_argument("--after", default="HEAD")
    ap.add_argument("--tree", type=Path, default=Path.home() / ".cache/napipatch/linux-6.12")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--keep", type=Path)
    return ap


def resolve(rev: str) -> str:
    """``rev``'s short commit id in this repository, or exit naming it."""
    cp = subprocess.run(["git", "rev-parse", "--short", "--verify", "--quiet", f"{rev}^{{commit}}"],
                        cwd=ROOT, capture_output=True, text=True, check=False)
    if cp.returncode:
        raise SystemExit(f"{Path(sys.argv[0]).name}: error: {rev}: not a commit of {ROOT}")
    return cp.stdout.strip()


@contextmanager
def worktrees(a: argparse.Namespace, prefix: str):
    """(before commit, after commit, work directory, {side: its worktree}).

    Each side runs from a detached worktree of its commit, as the wheel
    would; all is removed at the end (a SIGTERM too) unless --keep."""
    rev, head = resolve(a.rev), resolve(a.after)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    work = a.keep or Path(tempfile.mkdtemp(prefix=prefix))
    work.mkdir(parents=True, exist_ok=True)
    sides = {"before": work / "before", "after": work / "after"}
    try:
        for side, r in (("before", rev), ("after", head)):
            src = sides[side]
            if src.exists():  # --keep: as it is
                continue
            subprocess.run(["git", "worktree", "add", "-q", "--detach", str(src), r], cwd=ROOT,
                           check=True)
            # the wheel's napipatch.checks/templates/targets are top-level
            # directories (pyproject.toml, package-dir); the editable install
            # maps them to this checkout's, so the worktree gets its own in place
            for sub in ("checks", "templates", "targets"):
                if (src / sub).is_dir():
                    (src / "napipatch" / sub).symlink_to(Path("..") / sub)
        yield rev, head, work, sides
    finally:
        if not a.keep:
            for src in sides.values():
                if src.exists():
                    subprocess.run(["git", "worktree", "remove", "--force", str(src)], cwd=ROOT,
                                   check=False)
            shutil.rmtree(work, ignore_errors=True)


def check(src: Path, target: str, tree: Path, cache: Path) -> tuple[measure.Run, dict]:
    env = dict(os.environ, PYTHONPATH=str(src), XDG_CACHE_HOME=str(cache), COLUMNS="200",
               NAPIPATCH_SERIES_DIR=str(ROOT / "series"))
    cmd = [sys.executable, "-m", "napipatch", "check", target, "--tree", str(tree),
           "--format", "json", "--no-cache"]
    r = measure.run(cmd, cwd=src, env=env)
    if r.rc not in (0, 1):
        raise SystemExit(f"{src.name}: napipatch check {target} exited {r.rc}: {r.stderr[-1500:]}")
    return r, json.loads(r.stdout)


def findings(rep: dict) -> set[tuple]:
    return {(f.get("check"), f.get("patch"), f.get("file"), f.get("line"), f.get("severity"),
             f.get("message")) for f in rep["findings"]}


def statuses(rep: dict) -> dict[str, str]:
    return {c["id"]: c["status"] for c in rep["checks"]}


def compare(before: dict, after: dict) -> list[str]:
    out = []
    fb, fa = findings(before), findings(after)
    out += [f"  - only before: {f}" for f in sorted(fb - fa, key=str)]
    out += [f"  + only after:  {f}" for f in sorted(fa - fb, key=str)]
    sb, sa = statuses(before), statuses(after)
    for cid in sorted(set(sb) | set(sa)):
        if sb.get(cid) != sa.get(cid):
            out.append(f"  status {cid}: before {sb.get(cid)}, after {sa.get(cid)}")
    return out


def main() -> int:
    ap = arguments(__doc__)
    ap.add_argument("-n", type=int, default=3)
    ap.add_argument("--no-large", action="store_true")
    ap.add_argument("--upstream", type=Path, metavar="TREE",
                    help="also large_diff.py's upstream series: what upstream changed in six "
                         "networking directories between --tree and TREE (a prepared 7.2 tree)")
    a = ap.parse_args()
    res: dict = {}
    with worktrees(a, "napipatch-before-after-") as (rev, head, work, sides):
        targets = list(SERIES)
        if not a.no_large:
            targets.append(str(large_diff.make_series(a.tree, work / "large", work)))
        if a.upstream:
            targets.append(str(large_diff.upstream_series(
                a.tree, a.upstream.expanduser().resolve(), work / "upstream", work)))
        for target in targets:
            label = Path(target).name if "/" in target else target
            runs: dict[str, list] = {s: [] for s in sides}
            reps: dict[str, dict] = {}
            for s, src in sides.items():  # warm the base's trusted scripts and grep, untimed
                check(src, target, a.tree, work / f"cache-{s}")
            for _ in range(a.n):
                for s, src in sides.items():
                    r, reps[s] = check(src, target, a.tree, work / f"cache-{s}")
                    runs[s].append((r.wall, r.cpu))
            diff = compare(reps["before"], reps["after"])
            res[label] = {
                s: {"wall": median([w for w, _ in runs[s]]), "cpu": median([c for _, c in runs[s]]),
                    "findings": len(reps[s]["findings"]), "checks": len(reps[s]["checks"])}
                for s in sides}
            res[label]["diff"] = diff
    print(f"napipatch {rev} (before) vs {head} (after); {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; "
          f"{platform.node()}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}; "
          f"median of {a.n} interleaved runs of check --tree --format json --no-cache\n")
    print("| series | checks | findings before / after | wall before | wall after | "
          "CPU before | CPU after | CPU after/before | differences |")
    print("|---|---|---|---|---|---|---|---|---|")
    for label, r in res.items():
        b, f = r["before"], r["after"]
        print(f"| {label} | {f['checks']} | {b['findings']} / {f['findings']} | {b['wall']:.1f} s | "
              f"{f['wall']:.1f} s | {b['cpu']:.1f} s | {f['cpu']:.1f} s | {f['cpu'] / b['cpu']:.3f} | "
              f"{len(r['diff'])} |")
    for label, r in res.items():
        if r["diff"]:
            print(f"\n{label}:\n" + "\n".join(r["diff"]))
    if a.json:
        a.json.write_text(json.dumps(res, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
