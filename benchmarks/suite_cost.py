"""What the test suite costs, test by test: the lines a run with
NAPIPATCH_TEST_COST=FILE wrote (tests/conftest.py), summed.

    NAPIPATCH_TEST_COST=/tmp/cost.jsonl scripts/test
    .venv/bin/python benchmarks/suite_cost.py /tmp/cost.jsonl [--top 20]

Prints the totals (wall and CPU, build tests apart) and the slowest tests
by wall time with their CPU time, as the table in benchmarks/README.md
("The test suite"). CPU seconds count a test's own and its processes'.

``--timeline`` (lines with ``worker`` and ``start``, written since
2026-12-07): per xdist worker, when it started and ended its tests, how
much of that it ran tests and their CPU, and the minutes when the machine
had fewer tests running than workers, so the tail and the waits are seen,
not guessed.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("file", type=Path)
    ap.add_argument("--top", type=int, default=20)
    ap.add_argument("--by", choices=("wall", "cpu"), default="wall")
    ap.add_argument("--timeline", action="store_true")
    args = ap.parse_args()
    rows = [json.loads(line) for line in args.file.read_text().splitlines() if line.strip()]
    if args.timeline:
        timeline(rows)
        return
    for label, part in (("build tests", [r for r in rows if r["build"]]),
                        ("other tests", [r for r in rows if not r["build"]]), ("all", rows)):
        wall, cpu = sum(r["wall"] for r in part), sum(r["cpu"] for r in part)
        print(f"{label}: {len(part)} tests, wall {wall / 60:.1f} min, cpu {cpu / 60:.1f} min")
    print("\n| test | wall | cpu |\n|---|---|---|")
    for r in sorted(rows, key=lambda r: -r[args.by])[:args.top]:
        print(f"| `{r['test']}` | {r['wall']:.0f} s | {r['cpu']:.0f} s |")


def timeline(rows: list[dict]) -> None:
    placed = [r for r in rows if r.get("worker") is not None and "start" in r]
    if not placed:
        raise SystemExit("no line has a worker and a start time (written since 2026-12-07)")
    t0 = min(r["start"] for r in placed)
    end = max(r["start"] + r["wall"] for r in placed)
    print(f"tests from first start to last end: {(end - t0) / 60:.1f} min\n")
    print("| worker | first start | last end | running tests | their CPU |\n|---|---|---|---|---|")
    workers = sorted({r["worker"] for r in placed})
    for w in workers:
        mine = [r for r in placed if r["worker"] == w]
        first, last = min(r["start"] for r in mine), max(r["start"] + r["wall"] for r in mine)
        print(f"| {w or '(no xdist)'} | {(first - t0) / 60:.1f} min | {(last - t0) / 60:.1f} min | "
              f"{sum(r['wall'] for r in mine) / 60:.1f} min | {sum(r['cpu'] for r in mine) / 60:.1f} min |")
    # a minute-by-minute count of running tests: where fewer ran than workers
    short = []
    for minute in range(math.ceil((end - t0) / 60)):
        a, b = t0 + 60 * minute, t0 + 60 * (minute + 1)
        busy = sum(max(0.0, min(b, r["start"] + r["wall"]) - max(a, r["start"])) for r in placed) / 60
        if busy < len(workers) - 0.05:
            short.append(f"{minute}: {busy:.2f}")
    print(f"\nminutes with fewer than {len(workers)} tests running (minute: tests running on average): "
          + (", ".join(short) or "none"))


if __name__ == "__main__":
    main()
