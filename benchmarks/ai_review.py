"""Benchmark (run by hand): what napipatch adds around the user's AI agent,
and how well it places an agent's comments on real code.

    .venv/bin/python benchmarks/ai_review.py [--tree ~/.cache/napipatch/linux-6.12]
        [--runs 5] [--full] [--skip-precision] [--keep DIR]

Overhead (the issue's goal: under 2 s for a 15-patch series, with an agent
that answers at once). A 15-patch series on the tree, one comment line
added to each of 15 files under net/, is checked with ``napipatch check
--only ai-review --no-cache`` and an agent that is ``awk``: it quotes every
added line and comments on it (15 comments to parse and place). The
ai-review unit's seconds (``checks[].seconds``: the throwaway checkout, the
agent, reading and placing its review) minus the same agent run alone on
the same mbox is napipatch's part. Measured in one run, alternating, for
the default (touched directories, sandboxed), without the sandbox, and
(``--full``) once with the whole tree checked out.

Precision: the large mechanical series of ``large_diff.py`` (patch 1
renames ``netdev_priv()``, patches 2-4 convert ~10,000 lines in ~880
files: the same added line thousands of times) and an agent, a Python
script, that quotes every 60th added line and writes down where that line
really is. Four quoting styles, as agents write them: the line alone;
the line with the three lines before it; each of those with the file's
``diff --git`` and the hunk's ``@@`` line. Counted: placed at the right
patch, file and line; placed elsewhere; not placed (series-level).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import large_diff  # noqa: E402
import measure  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
NAPIPATCH = ROOT / ".venv" / "bin" / "napipatch"
FILES = ["net/core/dev.c", "net/core/sock.c", "net/core/skbuff.c", "net/core/filter.c",
         "net/core/rtnetlink.c", "net/core/netdev-genl.c", "net/core/gro.c",
         "net/ipv4/tcp.c", "net/ipv4/udp.c", "net/ipv4/route.c", "net/ipv6/route.c",
         "net/ipv6/addrconf.c", "net/netlink/af_netlink.c", "net/packet/af_packet.c",
         "net/sched/sch_generic.c"]
AWK = ("awk '/^\\+[^+]/ { printf \"> %s\\n\\nIs this comment needed?\\n\\n\", $0 }' "
       "> review-inline.txt")

PRECISION_AGENT = r'''
import os, re, sys
from pathlib import Path
from unidiff import PatchSet
style, every, truth = os.environ["STYLE"], int(os.environ["EVERY"]), os.environ["TRUTH"]
mails = re.split(r"^From [0-9a-f]{40} ", sys.stdin.read(), flags=re.M)
patches = [m for m in mails if "\ndiff --git " in m]
out, where, k = [], [], 0
for n, mail in enumerate(patches, 1):
    diff = mail[mail.index("\ndiff --git ") + 1:]
    diff = diff[:diff.rindex("\n-- \n")] + "\n" if "\n-- \n" in diff else diff
    for pf in PatchSet(diff):
        for h in pf:
            lines = list(h)
            for i, ln in enumerate(lines):
                if not ln.is_added:
                    continue
                k += 1
                if k % every:
                    continue
                quote = lines[max(0, i - 3):i + 1] if "context" in style else [ln]
                if "headers" in style:
                    out.append(f"> diff --git a/{pf.path} b/{pf.path}")
                    out.append(f"> @@ -{h.source_start},{h.source_length} "
                               f"+{h.target_start},{h.target_length} @@")
                out += [f"> {q.line_type}{q.value.rstrip(chr(10))}" for q in quote]
                out += ["", f"Comment {len(where)}: is this right?", ""]
                where.append([n, pf.path, ln.target_line_no])
Path("review-inline.txt").write_text("\n".join(out) + "\n")
Path(truth).write_text(__import__("json").dumps(where))
'''
STYLES = ("line", "context", "line+headers", "context+headers")


def fifteen(tree: Path, out: Path, work: Path) -> Path:
    base = large_diff.git(tree, "rev-parse", "HEAD").strip()
    tip = base
    for i, path in enumerate(FILES, 1):
        text = large_diff.blob(tree, base, path)
        first, rest = text.split("\n", 1)
        tip = large_diff.commit(tree, tip, {path: f"{first}\n/* napipatch bench {i} */\n{rest}"},
                                f"net: comment {path}", work)
    return large_diff.export(tree, base, tip, out, "net: fifteen comments",
                             "Fifteen one-line comments, for the ai-review benchmark.")


def check(series: Path, tree: Path, cache: Path, settings: dict[str, str]) -> dict:
    env = dict(os.environ, XDG_CACHE_HOME=str(cache), GIT_CONFIG_COUNT=str(len(settings)))
    for i, (k, v) in enumerate(settings.items()):
        env[f"GIT_CONFIG_KEY_{i}"], env[f"GIT_CONFIG_VALUE_{i}"] = f"napipatch.{k}", v
    r = measure.run([str(NAPIPATCH), "check", str(series), "--tree", str(tree), "--only",
                     "ai-review", "--no-cache", "--format", "json"], cwd=ROOT, env=env)
    data = json.loads(r.stdout)
    (res,) = [c for c in data["checks"] if c["id"] == "ai-review"]
    found = [f for f in data["findings"] if f["check"] == "ai-review"]
    return {"wall": r.wall, "unit": res["seconds"], "status": res["status"], "findings": found,
            "reason": res.get("reason", "")}


def agent_alone(series: Path, command: str) -> float:
    text = "".join(p.read_text() for p in sorted(series.glob("*.patch")))
    with tempfile.TemporaryDirectory() as td:
        r = measure.run(["/bin/sh", "-c", command], cwd=td, input=text)
    return r.wall


def overhead(tree: Path, work: Path, runs: int, full: bool) -> None:
    series = fifteen(tree, work / "fifteen", work)
    cache = work / "cache"
    variants = {"touched, sandbox (default)": {},
                "touched, no sandbox": {"ai-review-sandbox": "false"},
                "full checkout, sandbox": {"ai-review-checkout": "full"}}
    if not full:
        del variants["full checkout, sandbox"]
    got: dict[str, list[dict]] = {v: [] for v in variants}
    alone: list[float] = []
    for i in range(runs):
        for name, extra in variants.items():
            if "full" in name and i:
                continue   # ~25 s each: once is enough to say what it costs
            got[name].append(check(series, tree, cache, {"ai-review-command": AWK, **extra}))
        alone.append(agent_alone(series, AWK))
    a = measure.median(alone)
    print(f"\n15 patches, awk agent (15 comments); agent alone: median {a:.3f} s; "
          f"load {os.getloadavg()[0]:.1f}")
    print("| variant | runs | ai-review unit, median (min-max) | minus the agent alone | "
          "command wall, median | comments placed |")
    print("|---|---|---|---|---|---|")
    for name, rs in got.items():
        units = [r["unit"] for r in rs]
        placed = sum(1 for f in rs[0]["findings"] if f["line"])
        print(f"| {name} | {len(rs)} | {measure.median(units):.2f} s ({min(units):.2f}-"
              f"{max(units):.2f}) | **{measure.median(units) - a:.2f} s** | "
              f"{measure.median([r['wall'] for r in rs]):.2f} s | {placed} of "
              f"{len(rs[0]['findings'])} |")


def precision(tree: Path, work: Path) -> None:
    series = large_diff.make_series(tree, work / "rename", work)
    script = work / "agent.py"
    script.write_text(PRECISION_AGENT)
    print(f"\nrename series ({', '.join(map(str, large_diff.diff_size(series)))} "
          "patches/files/lines); every 60th added line quoted")
    print("| quoting style | comments | right line | elsewhere | not placed | ai-review unit |")
    print("|---|---|---|---|---|---|")
    for style in STYLES:
        truth = work / f"truth-{style}.json"
        cmd = (f"STYLE={shlex.quote(style)} EVERY=60 TRUTH={shlex.quote(str(truth))} "
               f"{shlex.quote(sys.executable)} {shlex.quote(str(script))}")
        r = check(series, tree, work / "cache", {"ai-review-command": cmd})
        if r["status"] not in ("pass", "warn"):
            print(f"| {style} | ai-review {r['status']}: {r['reason']} |")
            continue
        want = json.loads(truth.read_text())
        by_n = {int(f["details"].split("Comment ", 1)[1].split(":")[0]): f for f in r["findings"]
                if "Comment " in f["details"]}
        right = sum(1 for i, (n, path, line) in enumerate(want) if i in by_n and
                    (by_n[i]["patch"], by_n[i]["file"], by_n[i]["line"]) == (n, path, line))
        unplaced = sum(1 for f in by_n.values() if f["patch"] == 0)
        print(f"| {style} | {len(want)} | {right} | {len(by_n) - right - unplaced} | "
              f"{unplaced} | {r['unit']:.2f} s |")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tree", type=Path, default=Path.home() / ".cache/napipatch/linux-6.12")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--full", action="store_true", help="also once with the whole tree")
    ap.add_argument("--skip-precision", action="store_true")
    ap.add_argument("--keep", type=Path, help="work here instead of a temporary directory")
    args = ap.parse_args()
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip()
    print(f"napipatch {commit}, tree {args.tree}, {os.cpu_count()} CPUs")
    with tempfile.TemporaryDirectory(prefix="bench-ai-review-") as td:
        work = args.keep or Path(td)
        work.mkdir(parents=True, exist_ok=True)
        overhead(args.tree, work, args.runs, args.full)
        if not args.skip_precision:
            precision(args.tree, work)
    return 0


if __name__ == "__main__":
    sys.exit(main())
