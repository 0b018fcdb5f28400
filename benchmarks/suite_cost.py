"""What the test suite costs, test by test: the lines a run with
NAPIPATCH_TEST_COST=FILE wrote (tests/conftest.py), summed.

    NAPIPATCH_TEST_COST=/tmp/cost.jsonl scripts/test
    .venv/bin/python benchmarks/suite_cost.py /tmp/cost.jsonl [--top 20]

Prints the totals (wall and CPU, build tests apart) and the slowest tests
by wall time with their CPU time, as the table in benchmarks/README.md
("The test suite"). CPU seconds count a test's own and its processes'.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("file", type=Path)
    ap.add_argument("--top", type=int, default=20)
    ap.add_argument("--by", choices=("wall", "cpu"), default="wall")
    args = ap.parse_args()
    rows = [json.loads(line) for line in args.file.read_text().splitlines() if line.strip()]
    for label, part in (("build tests", [r for r in rows if r["build"]]),
                        ("other tests", [r for r in rows if not r["build"]]), ("all", rows)):
        wall, cpu = sum(r["wall"] for r in part), sum(r["cpu"] for r in part)
        print(f"{label}: {len(part)} tests, wall {wall / 60:.1f} min, cpu {cpu / 60:.1f} min")
    print(f"\n| test | wall | cpu |\n|---|---|---|")
    for r in sorted(rows, key=lambda r: -r[args.by])[:args.top]:
        print(f"| `{r['test']}` | {r['wall']:.0f} s | {r['cpu']:.0f} s |")


if __name__ == "__main__":
    main()
