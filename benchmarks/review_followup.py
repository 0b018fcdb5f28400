"""Benchmark (run by hand): what review-followup adds to ``napipatch check``.

    .venv/bin/python benchmarks/review_followup.py [-n 5] [--replies 200,1000]

Issue 47's goal: judging a vN-1 thread of 200 replies against vN adds
under 1 s to ``check``; 1000 replies stay bounded in time and memory.

For each size, a store holds the shipped threaded-busy-poll v5 and v4
imported from the real v4 thread (../shared/lore, 17 replies) with
synthetic replies added to reach the size: reviewers quoting a line of a
v4 patch and asking about it, each third one answered by the author
quoting it back. Interleaved in one invocation (so load drift hits both),
each side runs ``napipatch check threaded-busy-poll@v5 --format json
--no-cache`` with ``--only`` the five netdev process checks, one side with
``--skip review-followup``. The history record (which holds the comments)
is built on both sides: the difference is the judging plus, on the
review-followup side, nothing else; the record's extraction is measured
alone too (``history_of`` in-process, CPU seconds, the median of n): on
this shared machine CPU time says more than wall time.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from measure import median, mib, run

ROOT = Path(__file__).resolve().parent.parent
V4 = ROOT / "tests" / "fixtures" / "lore" / "threaded-busy-poll-v4.mbox"
PROCESS = "repost-wait,new-thread,version-link,review-tags,review-followup"
NAMES = ["Joe Damato <jdamato@fastly.com>", "Jakub Kicinski <kuba@kernel.org>",
         "Martin Karsten <mkarsten@uwaterloo.ca>", "Stanislav Fomichev <stfomichev@gmail.com>"]
AUTHOR = "Samiullah Khawaja <skhawaja@google.com>"


def synthetic(n: int, seed: int = 47) -> bytes:
    """``n`` replies to the v4 patches: a quoted added line, a question, and
    for each third an answer by the author quoting the question."""
    from napipatch.mails.mbox import read_mbox
    mails = read_mbox(V4)
    patches = [m for m in mails if m.subject.is_patch and not m.subject.is_reply
               and m.subject.index]
    rnd = random.Random(seed)
    out = []
    for i in range(n):
        p = rnd.choice(patches)
        added = [ln for ln in p.diff.split("\n") if ln.startswith("+") and len(ln) > 12
                 and not ln.startswith("+++")]
        line = rnd.choice(added)
        mid = f"bench-{i}@example.org"
        question = f"Question {i}: why is this line needed here, and what if it fails?"
        out.append(_mail(rnd.choice(NAMES), p, mid, p.msgid, f"> {line}\n\n{question}\n"))
        if i % 3 == 0:
            out.append(_mail(AUTHOR, p, f"answer-{i}@example.org", mid,
                             f"> {question}\n\nIt is needed because the napi may be "
                             f"scheduled before the thread starts ({i}).\n"))
    return b"".join(out[:n])


def _mail(frm: str, p, mid: str, to: str, body: str) -> bytes:
    return (f"From mboxrd@z Thu Jan  1 00:00:00 1970\nFrom: {frm}\nSubject: Re: "
            f"{p.subject.raw}\nDate: Fri, 21 Mar 2025 13:00:00 +0000\nMessage-ID: <{mid}>\n"
            f"In-Reply-To: <{to}>\nReferences: <{p.msgid}> <{to}>\n"
            "Content-Type: text/plain; charset=utf-8\n\n" + body + "\n").encode()


def store_with(replies: int, work: Path) -> Path:
    store = work / f"store-{replies}"
    shutil.copytree(ROOT / "series" / "threaded-busy-poll", store / "threaded-busy-poll")
    mbox = work / f"v4-{replies}.mbox"
    mbox.write_bytes(V4.read_bytes() + synthetic(max(0, replies - 17)))
    r = run([sys.executable, "-m", "napipatch", "--store", str(store), "series", "import",
             str(mbox), "--name", "threaded-busy-poll", "--version", "4", "--force"])
    assert r.rc == 0, r.stderr
    return store


def extraction(store: Path, n: int) -> float:
    """CPU seconds (median) to build v4's history record, its comments included."""
    from napipatch.store.history import history_of
    from napipatch.store.store import Store
    st = Store(store)
    v5 = st.load("threaded-busy-poll@v5")
    times = []
    for _ in range(n):
        t0 = time.process_time()
        h = history_of(v5, st)["previous"]
        times.append(time.process_time() - t0)
    assert "comments" in h["review-comments"], h["review-comments"]
    return median(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("-n", type=int, default=5)
    ap.add_argument("--replies", default="200,1000")
    a = ap.parse_args()
    print(f"load: {os.getloadavg()[0]:.1f}")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        print("| replies | comments | --skip review-followup | with it | with - without "
              "(median wall) | with - without (median CPU) | largest process | record "
              "built (in-process CPU) |")
        print("|---|---|---|---|---|---|---|---|")
        for size in map(int, a.replies.split(",")):
            store = store_with(size, work)
            env = dict(os.environ, XDG_CACHE_HOME=str(work / f"cache-{size}"))
            sides = {"skip": [], "with": []}
            cpu = {"skip": [], "with": []}
            rss = {"skip": 0, "with": 0}
            found = 0
            for _ in range(a.n):
                for side in ("skip", "with"):
                    cmd = [sys.executable, "-m", "napipatch", "--store", str(store), "check",
                           "threaded-busy-poll@v5", "--only", PROCESS, "--format", "json",
                           "--no-cache"] + (["--skip", "review-followup"] if side == "skip" else [])
                    r = run(cmd, env=env)
                    assert r.rc in (0, 1), r.stderr[-2000:]
                    sides[side].append(r.wall)
                    cpu[side].append(r.cpu)
                    rss[side] = max(rss[side], r.max_rss)
                    if side == "with":
                        found = r.stdout.count('"check": "review-followup"')
            s, w = median(sides["skip"]), median(sides["with"])
            print(f"| {size} | {found} | {s:.2f} s ({min(sides['skip']):.2f}-"
                  f"{max(sides['skip']):.2f}) | {w:.2f} s ({min(sides['with']):.2f}-"
                  f"{max(sides['with']):.2f}) | **{w - s:+.2f} s** | "
                  f"{median(cpu['with']) - median(cpu['skip']):+.2f} s | {mib(rss['skip'])} / "
                  f"{mib(rss['with'])} | {extraction(store, a.n):.2f} s |")
    print(f"load after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
