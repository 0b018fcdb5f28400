"""Benchmark (run by hand): how fast ``napipatch bot serve`` answers with a
big state, beside the same pages of a small one.

    .venv/bin/python benchmarks/bot_pages.py [--series 10000] [--results 100000] [-n 30]
        [--keep DIR]

1. Writes two synthetic bot states with the bot's own ``State`` (its
   schema, ``save_report``, ``add_results``): a big one (--series series,
   each with a stored report of 5 patches x every NIPA context, 24 findings
   and 16 checks with their outputs, replies, and --results selftest
   results over 200 tests) and a small one of 10 series (and results in the
   same proportion). Series rows are inserted directly: they are what
   ingest and assembly would have made.
2. Starts ``napipatch bot serve`` on each (subprocesses, loopback) and
   times, interleaved, GET ``/`` (the newest page), ``/series/<id>`` (the
   newest series), ``/log/<id>/checkpatch`` and ``/tests``: medians (min)
   of -n requests a page, client side (HTTP included). The ratio big/small
   is the figure; the goal is under 200 ms each on the big state.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from napipatch.bot.state import State
from napipatch.report.nipa import CONTEXTS

PATCHES = 5
TESTS = 200
CHECKS = ["apply", "checkpatch", "kdoc", "subject", "signoff", "cc-maintainers", "ynl",
          "cachelines", "callsites", "source-inline", "header-inline", "fixes-tag",
          "base-commit", "series-format", "maintainers", "build-virtio-net"]


def report_data(rng: random.Random, sid: int) -> dict:
    """A report as ``report.render.to_data`` writes it, of a 5-patch series."""
    states = ["success"] * 6 + ["warning", "fail", "unknown"]
    patches = [{"number": n, "subject": f"[PATCH net-next v2 {n}/{PATCHES}] net: patch {n}",
                "nipa": {c.name: {"state": (st := rng.choice(states)),
                                  "description": "" if st == "success" else
                                  f"{c.name}: net/core/dev.c:{rng.randint(1, 9000)}: "
                                  "a description of what the check found, one line"}
                         for c in CONTEXTS}} for n in range(1, PATCHES + 1)]
    findings = [{"check": rng.choice(CHECKS), "severity": rng.choice(["error", "warning", "info"]),
                 "patch": rng.randint(0, PATCHES), "message": f"finding {i} of series {sid}",
                 "file": "net/core/dev.c", "line": rng.randint(1, 9000),
                 "hint": "how to fix it", "details": "a\nfew\nlines", "nipa": None}
                for i in range(24)]
    return {"series": {"name": f"bench-{sid}", "version": 2, "title": f"series {sid}",
                       "source": "", "patches": patches, "base-commit": "0" * 40},
            "tree": "/srv/linux", "base": "0" * 40, "base_why": "base-commit",
            "findings": findings,
            "checks": [{"id": c, "status": "pass", "seconds": 1.0, "cached": False,
                        "reason": "", "nipa": [], "group": ""} for c in CHECKS],
            "summary": {"errors": 1, "warnings": 2, "infos": 3, "planned": 16,
                        "completed": 16, "incomplete": [], "verdict": "findings",
                        "exit_status": 1, "line": "16 of 16 checks completed"}}


def make_state(root: Path, n_series: int, n_results: int) -> Path:
    """A bot state dir of ``n_series`` reported series and ``n_results`` test results."""
    rng = random.Random(n_series)
    state = State(root / "state" / "bot.sqlite3")
    now = time.time() - n_series * 60
    with state.tx() as db:
        db.executemany(
            "INSERT INTO series(id, key, title, author_name, author_email, version, total, "
            "tree, head_msgid, inbox, state, first_seen, updated, prev_id, note, errors, "
            "warnings, base) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            [(i, f"k{i}", f"net: series {i} <of the bench>", "Ann Dev", "ann@example.org", 2,
              PATCHES, "net-next", f"cover.{i}@example.org", "netdev", "reported",
              now + i * 60, now + i * 60, None, "", 1, 2, "0" * 40)
             for i in range(1, n_series + 1)])
        db.executemany(
            "INSERT INTO replies(series_id, kind, msgid, author_email, sender, rcpts, mail, "
            "state, created) VALUES(?,?,?,?,?,?,?,?,?)",
            [(i, "report", f"r{i}@bot", "ann@example.org", "bot@example.org", "[]",
              b"Subject: Re: x\n\nHi Ann,\n\nthe report.\n", "sent", now + i * 60)
             for i in range(1, n_series + 1)])
    logs = root / "state" / "logs"
    for i in range(1, n_series + 1):
        state.save_report(i, report_data(rng, i), [c for c in CHECKS])
    newest = logs / str(n_series)
    newest.mkdir(parents=True)
    for c in CHECKS:
        (newest / f"{c}.log").write_text("".join(
            f"net/core/dev.c:{n}: warning: PATCH 1/5 [{c}] line {n} of its output\n"
            for n in range(1, 2001)))
    tests = [f"net:prog{t // 10}.sh:case{t}" for t in range(TESTS)]
    rows = [(rng.choice(tests), "0" * 40, "virtio-net", rng.randint(1, n_series),
             rng.choice(["pass"] * 8 + ["fail", "skip"])) for _ in range(n_results)]
    state.add_results(sorted(rows, key=lambda r: r[3]))
    state.close()
    cfg = root / "bot.toml"
    cfg.write_text(f'[state]\ndir = "{root / "state"}"\n[[inbox]]\nname = "netdev"\n'
                   f'url = "https://lore.kernel.org/netdev"\n')
    return cfg


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve(cfg: Path) -> tuple[subprocess.Popen, int]:
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "napipatch", "bot", "serve", "--config",
                             str(cfg), "--listen", f"127.0.0.1:{port}"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(600):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return proc, port
        except OSError:
            time.sleep(0.1)
    raise SystemExit("bot serve did not start")


def get(port: int, path: str) -> float:
    t0 = time.perf_counter()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    conn.request("GET", path)
    resp = conn.getresponse()
    resp.read()
    conn.close()
    if resp.status != 200:
        raise SystemExit(f"{path}: HTTP {resp.status}")
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--series", type=int, default=10000)
    ap.add_argument("--results", type=int, default=100000)
    ap.add_argument("-n", type=int, default=30)
    ap.add_argument("--keep", type=Path)
    args = ap.parse_args()
    root = args.keep or Path(tempfile.mkdtemp(prefix="bot-pages-"))
    t0 = time.monotonic()
    sides = {"small": make_state(root / "small", 10, max(1, args.results * 10 // args.series)),
             "big": make_state(root / "big", args.series, args.results)}
    made = time.monotonic() - t0
    size = os.path.getsize(root / "big" / "state" / "bot.sqlite3")
    procs = {k: serve(c) for k, c in sides.items()}
    n_of = {"small": 10, "big": args.series}
    pages = {"/": lambda n: "/", "/series/<id>": lambda n: f"/series/{n}",
             "/log/<id>/checkpatch": lambda n: f"/log/{n}/checkpatch", "/tests": lambda n: "/tests"}
    times = {(p, k): [] for p in pages for k in sides}
    try:
        for k, (_proc, port) in procs.items():  # warm each server once
            for p, path in pages.items():
                get(port, path(n_of[k]))
        for _ in range(args.n):
            for p, path in pages.items():
                for k, (_proc, port) in procs.items():
                    times[(p, k)].append(get(port, path(n_of[k])))
    finally:
        for proc, _port in procs.values():
            proc.terminate()
            proc.wait(timeout=30)
    print(f"states made in {made:.0f} s; big state database {size / 2**20:.0f} MiB; "
          f"load {os.getloadavg()[0]:.1f}")
    print("| page | 10 series | %d series, %d results | ratio |" % (args.series, args.results))
    print("|---|---|---|---|")
    for p in pages:
        s, b = (statistics.median(times[(p, k)]) * 1000 for k in ("small", "big"))
        lo = min(times[(p, "big")]) * 1000
        print(f"| `{p}` | {s:.1f} ms | {b:.1f} ms (min {lo:.1f}) | {b / s:.2f} |")
    print(json.dumps({f"{p} {k}": statistics.median(v) for (p, k), v in times.items()}))


if __name__ == "__main__":
    main()
