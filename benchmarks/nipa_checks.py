"""Benchmark (run by hand): what the NIPA checks add to ``napipatch check --tree``.

    .venv/bin/python benchmarks/nipa_checks.py [--before 16ac921] [-n 3]
        [--tree ~/.cache/napipatch/linux-6.12] [--json FILE] [--keep DIR]

Issue 26's goal: the checks that reproduce the netdev CI's (NIPA's) tests
add at most 1 s to ``check --tree`` of the shipped v5 and of a 3-patch
series on a warm base. Both sides run in one invocation, interleaved
(before, after, before, after ...), so load drift hits both:

- **before**: napipatch at ``--before`` (main before the NIPA checks), a
  ``git worktree add --detach`` of this repository;
- **after**: this checkout, as it is on disk.

Both run the same way, so that only the code differs: ``python -m
napipatch`` from a venv of the side's own whose site-packages points at
this checkout's venv for the dependencies (not at its editable install,
whose import hook costs every run 0.1-0.2 s), with ``PYTHONPATH`` at the
side's package laid out as pyproject's package-dir says, and the linters
found on ``PATH`` in this checkout's venv. (Before e8f3fdd the after side
ran the editable install's console script: 0.1-0.2 s against it.)

Both sides' code is byte-compiled first (``compileall``): this machine
sets PYTHONDONTWRITEBYTECODE, and a side without ``__pycache__`` would
compile every module on every run (before e8f3fdd the before side did,
and looked 0.5-1 s slower than it is). Each side has its own cache
directory, warmed once per series (the base's
trusted scripts exported, as for any tree one works on), then every timed
run is ``napipatch check DIR --tree T --format json --no-cache``: no
result, grep or apply cache, the checks all run. The series are the
shipped threaded-busy-poll v5 (5 patches) and the 3-patch variant of
benchmarks/static_checks.py (a long line, a kernel-doc gap, a spec change
without regenerating), made on the tree with a temporary index.

The tables give medians (min-max) and the difference after - before; the
checks only the after side runs are listed with their summed per-unit
seconds (units run two at a time, so the sum is more than the wall time
they add). Memory as in measure.py.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import tomllib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import measure  # noqa: E402
from measure import median, mib  # noqa: E402
from static_checks import base_commit, git, machine, make_variant, store_series  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def before_side(rev: str, work: Path) -> list[str]:
    """napipatch at ``rev`` in a worktree: its command."""
    wt = work / "before"
    if not wt.exists():
        git(ROOT, "worktree", "add", "--detach", "-f", str(wt), rev)
    return staged(wt, "before", work)


def staged(wt: Path, name: str, work: Path) -> list[str]:
    """The command running the napipatch of checkout ``wt`` by a venv of its own."""
    venv, stage = work / f"{name}-venv", work / f"{name}-path"
    if not (venv / "bin" / "python").exists():
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
        site = Path(sysconfig.get_paths(vars={"base": str(venv), "platbase": str(venv)})["purelib"])
        # Dependencies from this checkout's venv: a .pth line adds the path,
        # and the .pth files in it (this checkout's editable install) do not run.
        (site / "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    if not stage.exists():
        # The package as pyproject's package-dir lays it out (checks/ is
        # napipatch.checks), made of links into the worktree.
        pkg = stage / "napipatch"
        pkg.mkdir(parents=True)
        for entry in (wt / "napipatch").iterdir():
            (pkg / entry.name).symlink_to(entry)
        dirs = tomllib.loads((wt / "pyproject.toml").read_text())["tool"]["setuptools"]
        for name, d in dirs.get("package-dir", {}).items():
            if name.startswith("napipatch."):
                (pkg / name.split(".", 1)[1]).symlink_to(wt / d)
    cmd = ["env", f"PYTHONPATH={stage}", str(venv / "bin" / "python"), "-m", "napipatch"]
    cp = subprocess.run(cmd[:3] + ["-c", "import napipatch.checks as c; print(c.__file__)"],
                        capture_output=True, text=True, check=True, cwd=work)
    if not cp.stdout.startswith(str(stage)):
        raise SystemExit(f"{name} side imports {cp.stdout.strip()}, not {stage}")
    return cmd


def napipatch(cmd: list[str], target: Path, tree: Path, cache: Path, no_cache: bool = True) -> dict:
    args = cmd + ["check", str(target), "--tree", str(tree), "--format", "json"]
    env = dict(os.environ, XDG_CACHE_HOME=str(cache), COLUMNS="200",
               PATH=f"{ROOT / '.venv' / 'bin'}:{os.environ.get('PATH', '')}")
    # cwd: not this checkout, whose napipatch/ python -m would import first
    r = measure.run(args + (["--no-cache"] if no_cache else []), cwd=cache.parent, env=env)
    if r.rc not in (0, 1):
        raise SystemExit(f"{cmd} exited {r.rc}: {r.stderr[-2000:]}")
    rep = json.loads(r.stdout)
    return {"wall": r.wall, "max_rss": r.max_rss, "peak_tree": r.peak_tree,
            "checks": {c["id"]: c["seconds"] for c in rep["checks"]},
            "status": {c["id"]: c["status"] for c in rep["checks"]},
            "errors": rep["summary"]["errors"], "warnings": rep["summary"]["warnings"],
            "verdict": rep["summary"]["verdict"]}


def bench(label: str, target: Path, tree: Path, sides: dict[str, list[str]], n: int,
          work: Path) -> dict:
    caches = {s: work / f"cache-{s}" for s in sides}
    for side, cmd in sides.items():  # warm the base: the trusted scripts exported
        print(f"[{label}] warming {side} ...", file=sys.stderr, flush=True)
        napipatch(cmd, target, tree, caches[side], no_cache=False)
    runs: dict[str, list[dict]] = {s: [] for s in sides}
    loads = [os.getloadavg()[0]]
    for i in range(n):
        for side, cmd in sides.items():
            print(f"[{label}] run {i + 1}/{n}: {side} ...", file=sys.stderr, flush=True)
            runs[side].append(napipatch(cmd, target, tree, caches[side]))
        loads.append(os.getloadavg()[0])
    return {"label": label, "target": str(target), "runs": runs, "loads": loads}


def report(res: dict) -> str:
    b, a = res["runs"]["before"], res["runs"]["after"]
    wb, wa = [x["wall"] for x in b], [x["wall"] for x in a]
    new = sorted(set(a[-1]["checks"]) - set(b[-1]["checks"]))
    lines = [f"### {res['label']}: {res['target']}; 1-min load average between runs "
             f"{min(res['loads']):.1f}-{max(res['loads']):.1f}", "",
             "| side | checks | wall (median) | min-max | largest process | peak tree RSS | "
             "errors / warnings |", "|---|---|---|---|---|---|---|"]
    for name, xs, w in (("before", b, wb), ("after", a, wa)):
        lines.append(f"| {name} | {len(xs[-1]['checks'])} | {median(w):.2f} s | "
                     f"{min(w):.2f}-{max(w):.2f} s | {mib(max(x['max_rss'] for x in xs))} | "
                     f"{mib(max(x['peak_tree'] for x in xs))} | "
                     f"{xs[-1]['errors']} / {xs[-1]['warnings']} |")
    diffs = [y - x for x, y in zip(wb, wa)]
    lines += ["", f"after - before: **{median(wa) - median(wb):+.2f} s** (medians); pairwise "
              f"{', '.join(f'{d:+.2f}' for d in diffs)} s", ""]
    if new:
        lines += ["| check only after | summed unit seconds (median) | status |", "|---|---|---|"]
        lines += [f"| {c} | {median([x['checks'][c] for x in a]):.2f} | {a[-1]['status'][c]} |"
                  for c in new]
        lines.append(f"| all of them | "
                     f"{median([sum(x['checks'][c] for c in new) for x in a]):.2f} | |")
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tree", type=Path, default=Path.home() / ".cache/napipatch/linux-6.12")
    ap.add_argument("--before", default="16ac921", help="napipatch revision without the checks")
    ap.add_argument("-n", type=int, default=3)
    ap.add_argument("--json", type=Path, help="write every run's raw data here")
    ap.add_argument("--keep", type=Path, help="work here instead of a temporary directory")
    a = ap.parse_args()
    work = (a.keep or Path(tempfile.mkdtemp(prefix="napipatch-nipa-bench-"))).resolve()
    work.mkdir(parents=True, exist_ok=True)
    tree = a.tree.expanduser().resolve()
    rev = git(ROOT, "rev-parse", "--short", a.before)
    sides = {"before": before_side(rev, work), "after": staged(ROOT, "after", work)}
    # Both sides' code compiled, as an installed napipatch has it after its
    # first run: under PYTHONDONTWRITEBYTECODE (this machine's environment)
    # a side without __pycache__ compiles every module on every run.
    for d in (work / "before", ROOT):
        subprocess.run([sys.executable, "-m", "compileall", "-q", "-j", "0",
                        str(d / "napipatch"), str(d / "checks")], check=True)
    print(f"machine: {machine()} (at start)\nbefore: {rev}; after: "
          f"{git(ROOT, 'rev-parse', '--short', 'HEAD')} (this checkout)", flush=True)
    v5 = store_series("threaded-busy-poll@v5")
    variant = make_variant(tree, base_commit(v5), work / "variant")
    results = [bench("v5", v5, tree, sides, a.n, work),
               bench("3-patch variant", variant, tree, sides, a.n, work)]
    print(f"machine: {machine()} (at end)\n")
    for res in results:
        print(report(res))
    if a.json:
        a.json.write_text(json.dumps(results, indent=1, default=str))
    if not a.keep:
        git(ROOT, "worktree", "remove", "--force", str(work / "before"))
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
