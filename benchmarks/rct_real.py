"""Benchmark (run by hand): the rct check on real networking code.

    .venv/bin/python benchmarks/rct_real.py [--tree ~/.cache/napipatch/linux-6.12]
        [--lines 60000] [--out DIR] DIR-IN-TREE...

Posts the ``.c`` files of the given directories of a prepared tree (6.12)
as one patch adding them as new files (``git diff --no-index /dev/null
FILE``, paths as in the tree, files in sorted order until ``--lines`` added
lines), then runs ``napipatch check PATCH --only rct --format json`` on it
(diff-only) and prints each finding with its hint, for reading by hand:
every function's declarations are the patch's own lines, so a finding a
netdev maintainer would not ask to fix is a false one.
"""

from __future__ import annotations

import argparse
import json
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NAPIPATCH = ROOT / ".venv" / "bin" / "napipatch"
HEAD = ("From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001\n"
        "From: Bench Author <bench@example.org>\nDate: Thu, 1 Jan 2026 00:00:00 +0000\n"
        "Subject: [PATCH net-next] net: add real driver code as new files\n\n"
        "Real networking code posted as new files for the rct benchmark.\n\n"
        "Signed-off-by: Bench Author <bench@example.org>\n---\n")


def new_file_diff(tree: Path, path: str) -> str:
    cp = subprocess.run(["git", "diff", "--no-index", "--no-color", "/dev/null", path],
                        cwd=tree, capture_output=True, text=True, check=False)
    return cp.stdout


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tree", type=Path, default=Path.home() / ".cache/napipatch/linux-6.12")
    ap.add_argument("--lines", type=int, default=60000)
    ap.add_argument("--out", type=Path, default=Path("/tmp/rct-real"))
    ap.add_argument("dirs", nargs="+")
    a = ap.parse_args()
    files = sorted(str(p.relative_to(a.tree)) for d in a.dirs for p in (a.tree / d).rglob("*.c"))
    parts, added = [], 0
    for f in files:
        if added >= a.lines:
            break
        d = new_file_diff(a.tree, f)
        parts.append(d)
        added += sum(1 for ln in d.splitlines() if ln.startswith("+") and
                     not ln.startswith("+++"))
    a.out.mkdir(parents=True, exist_ok=True)
    patch = a.out / "real.patch"
    patch.write_text(HEAD + "".join(parts) + "-- \n2.47.0\n")
    cp = subprocess.run([str(NAPIPATCH), "check", str(patch), "--only", "rct", "--no-cache",
                         "--format", "json"], capture_output=True, text=True, check=False,
                        cwd=ROOT)
    data = json.loads(cp.stdout)
    found = [f for f in data["findings"] if f["check"] == "rct"]
    for f in found:
        print(f"{f['file']}:{f['line']}: {f['message']}\n    {f['hint']}")
    print(f"{len(parts)} files, {added} added lines, {len(found)} findings "
          f"(status {[c['status'] for c in data['checks']]})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
