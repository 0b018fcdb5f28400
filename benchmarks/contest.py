"""Benchmark (run by hand): the contest before posting, v5's guest run, against
the same selftests run one by one in vng by hand.

    .venv/bin/python benchmarks/contest.py [--tree ~/.cache/napipatch/linux-6.12]
        [--series threaded-busy-poll@v5] [--flavour plain --flavour debug] [--runs 2]
        [--by-hand-only net:nl_netdev.py,drivers/net:stats.py]

For each flavour, ``napipatch test boot SERIES --tree T [--flavour F]
--format json`` runs ``--runs`` times in the shared build directory (the
first run is cold when that flavour's build directory is new; the later
ones are warm: nothing to build, one guest). Then, the baseline: each
selftest that run chose, booted alone in vng with the same kernel, options
and exported tests (``vng --run bzImage --exec ./PROG``), one boot a test,
as a developer would run them by hand (``--by-hand-only``: only these, no
``test boot`` run); no retry, no snapshots, no splat
scan, no base comparison.

Reported: wall time, CPU, the largest process and the summed RSS of the
process tree (measure.py), the cases run and the ``contest`` forecast.
Do not run it while other builds use the shared build directory: it moves
that flavour's build to the series' tip.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import measure  # noqa: E402

from napipatch.jobs import targets  # noqa: E402
from napipatch.jobs.boot import vng  # noqa: E402
from napipatch.jobs.results.selftests import ROOT  # noqa: E402

NAPIPATCH = Path(__file__).resolve().parent.parent / ".venv" / "bin" / "napipatch"


def boot_run(series: str, tree: Path, flavour: str) -> tuple[measure.Run, dict]:
    cmd = [str(NAPIPATCH), "test", "boot", series, "--tree", str(tree), "--format", "json"]
    if flavour != "plain":
        cmd += ["--flavour", flavour]
    r = measure.run(cmd)
    if r.rc not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)}: exit {r.rc}: {r.stderr[-500:]}")
    return r, json.loads(r.stdout)


def _dirs(flavour: str) -> Path:
    """The flavour's build directory in the shared build root (the newest tree's)."""
    root = Path(os.environ.get("NAPIPATCH_BUILD_DIR", Path.home() / ".cache/napipatch/build"))
    name = "virtio-net" if flavour == "plain" else f"virtio-net.{flavour}"
    found = sorted(root.glob(f"*/{name}/obj/arch/x86/boot/bzImage"), key=lambda p: p.stat().st_mtime)
    if not found:
        raise SystemExit(f"no {name} kernel under {root}")
    return found[-1].parents[4]


def chosen(report: dict) -> list[str]:
    """The selftests the run chose, from its "N selftests chosen: ..." line."""
    for f in report["findings"]:
        if f["check"] == "selftest" and " selftests chosen: " in f["message"]:
            return f["message"].split(" selftests chosen: ", 1)[1].split(", ")
    return []


def by_hand(names: list[str], flavour: str) -> list[tuple[str, measure.Run]]:
    """Each chosen selftest in a vng boot of its own, with napipatch's kernel
    and its export of the tip's selftests."""
    d = _dirs(flavour)
    kernel = d / "obj/arch/x86/boot/bzImage"
    ksrc = max((d / "selftests").iterdir(), key=lambda p: p.stat().st_mtime)
    target = targets.load("virtio-net", "" if flavour == "plain" else flavour)
    out = []
    with tempfile.TemporaryDirectory(dir=d / "guest") as td:
        script = Path(td) / "sub" / "one.sh"
        script.parent.mkdir()
        for name in names:
            sub, prog = name.split(":")[:2]
            script.write_text(f"#!/bin/sh\ncd {ksrc / ROOT / sub}\n./{prog}\necho rc=$?\n"
                              "python3 -c 'import ctypes; ctypes.CDLL(None).reboot(0x01234567)'\n")
            accel = os.environ.get("NAPIPATCH_ACCEL", "tcg")
            cmd = vng.command(kernel, target, script, accel)
            # vng runs virtme-run from PATH: the one beside it, as the boot job does
            env = dict(os.environ, PATH=f"{Path(cmd[0]).parent}{os.pathsep}{os.environ['PATH']}")
            out.append((name, measure.run(["timeout", "900", *cmd], env=env)))
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tree", type=Path, default=Path.home() / ".cache/napipatch/linux-6.12")
    ap.add_argument("--series", default="threaded-busy-poll@v5")
    ap.add_argument("--flavour", action="append", default=None)
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--by-hand-only", metavar="DIR:PROG,...", default="",
                    help="only the by-hand baseline, of these tests (as a run chose them)")
    a = ap.parse_args()
    print("| flavour | run | wall | CPU | largest process | process tree | selftest cases | "
          "contest (patch 1) |\n|---|---|---|---|---|---|---|---|")
    for flavour in a.flavour or ["plain"]:
        report = {}
        for k in range(0 if a.by_hand_only else a.runs):
            r, report = boot_run(a.series, a.tree, flavour)
            cases = [f["message"] for f in report["findings"] if f["check"] == "selftest"
                     and ": selftest " in f["message"]]
            ok = sum(m.endswith(" ok") for m in cases)
            contest = report["series"]["patches"][0]["nipa"].get("contest", {}).get("state", "-")
            print(f"| {flavour} | {'first' if k == 0 else 'again'} | {r.wall:.0f} s | "
                  f"{r.cpu:.0f} s | {measure.mib(r.max_rss)} | {measure.mib(r.peak_tree)} | "
                  f"{ok} ok of {len(cases)} | {contest} |", flush=True)
        names = a.by_hand_only.split(",") if a.by_hand_only else chosen(report)
        for name, r in by_hand(names, flavour):
            print(f"| {flavour} | by hand: vng + {name} | {r.wall:.0f} s | {r.cpu:.0f} s | "
                  f"{measure.mib(r.max_rss)} | {measure.mib(r.peak_tree)} | "
                  f"{'rc=0' if 'rc=0' in r.stdout + r.stderr else 'failed'} | - |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
