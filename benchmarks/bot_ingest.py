"""Benchmark (run by hand): the CI bot's ingest rate and reply latency.

    .venv/bin/python benchmarks/bot_ingest.py [--mails 10000] [--tree ~/.cache/napipatch/linux-6.12]
        [--keep DIR]

1. Writes a synthetic public-inbox v2 archive (``git/0.git``, one commit
   per message, the message in blob ``m``) with ``git fast-import``:
   netdev-like traffic, about a quarter patch series (cover letter plus
   2-6 patches threaded on it, real-looking diffs) and the rest review
   replies quoting them.
2. Times the bot reading it from scratch: fetch into the mirror, parse and
   record every message (mails/s), then grouping into series.
3. Appends one more series (cover + 2 patches made on the kernel tree with
   a temporary index, base-commit included), and times ``napipatch bot
   once`` from the last patch's arrival in the archive to the reply being
   written (dry run): static checks with the tree (all of them, checkpatch
   included) when --tree exists, and diff-only.
   ``bot run`` adds up to one polling interval on top.

Peak memory: ingest and grouping run in this process (its high-water mark
and the summed RSS of its tree with git, sampled); the latency runs are
subprocesses (largest single process, exact, and summed tree RSS,
sampled); see measure.py.
"""

from __future__ import annotations

import argparse
import email.utils
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import measure  # noqa: E402

from napipatch.bot import config as botconfig  # noqa: E402
from napipatch.bot.runner import Bot, PassResult  # noqa: E402

FILES = ["net/core/dev.c", "net/core/sock.c", "drivers/net/ethernet/intel/idpf/idpf_txrx.c",
         "net/ipv4/tcp.c", "include/linux/netdevice.h", "drivers/net/virtio_net.c"]
PEOPLE = [("Ann Dev", "ann@example.org"), ("Bo Hacker", "bo@example.com"),
          ("Chen Li", "chen@example.net"), ("Dana Review", "dana@example.org"),
          ("Eve Maint", "eve@example.com")]


def _date(t: float) -> str:
    return email.utils.formatdate(t)


def _mail(frm, subject, msgid, t, body, irt=None, refs=()) -> bytes:
    h = [f"From: {email.utils.formataddr(frm)}", f"Subject: {subject}", f"Date: {_date(t)}",
         f"Message-ID: <{msgid}>", "To: netdev@example.org"]
    if irt:
        h.append(f"In-Reply-To: <{irt}>")
        h.append("References: " + " ".join(f"<{r}>" for r in refs))
    h += ["MIME-Version: 1.0", "Content-Type: text/plain; charset=UTF-8",
          "Content-Transfer-Encoding: 8bit"]
    return ("\n".join(h) + "\n\n" + body).encode()


def _diff(rng: random.Random, path: str, n: int) -> str:
    start = rng.randint(100, 5000)
    ctx = [f"\tvalue_{rng.randint(0, 999)} = compute(dev, {k});" for k in range(6)]
    return (f"diff --git a/{path} b/{path}\nindex 1234567..89abcde 100644\n--- a/{path}\n+++ b/{path}\n"
            f"@@ -{start},6 +{start},{6 + n} @@\n"
            + "".join(f" {c}\n" for c in ctx[:3])
            + "".join(f"+\tnew_call_{rng.randint(0, 99)}(dev);\n" for _ in range(n))
            + "".join(f" {c}\n" for c in ctx[3:]))


def synthetic(n: int, seed: int = 1):
    """Yield n raw messages of netdev-like traffic."""
    rng = random.Random(seed)
    t = 1_740_000_000.0
    made, sid = 0, 0
    recent: list[tuple[str, str, list[str]]] = []  # (msgid, subject, refs) to reply to
    while made < n:
        t += rng.uniform(5, 120)
        if rng.random() < 0.25 or not recent:
            sid += 1
            who = rng.choice(PEOPLE)
            total = rng.randint(2, 6)
            ver = rng.randint(1, 4)
            vtag = f" v{ver}" if ver > 1 else ""
            title = f"net: feature {sid}: make thing {sid} faster"
            cover_id = f"{sid}.0-{ver}@bench.example"
            body = f"This series makes thing {sid} faster.\n\n" + "Some words. " * 40 + "\n"
            yield _mail(who, f"[PATCH net-next{vtag} 0/{total}] {title}", cover_id, t, body)
            made += 1
            recent.append((cover_id, f"[PATCH net-next{vtag} 0/{total}] {title}", []))
            for i in range(1, total + 1):
                if made >= n:
                    return
                path = rng.choice(FILES)
                body = (f"Change {i} of the series.\n\n" + "Explanation. " * 30 +
                        f"\n\nSigned-off-by: {email.utils.formataddr(who)}\n---\n"
                        f" {path} | 3 +++\n 1 file changed, 3 insertions(+)\n\n"
                        + _diff(rng, path, 3) + "-- \n2.47.0\n")
                pid = f"{sid}.{i}-{ver}@bench.example"
                subj = f"[PATCH net-next{vtag} {i}/{total}] net: part {i} of thing {sid}"
                yield _mail(who, subj, pid, t + i, body, irt=cover_id, refs=[cover_id])
                made += 1
                recent.append((pid, subj, [cover_id]))
        else:
            msgid, subj, refs = rng.choice(recent[-200:])
            who = rng.choice(PEOPLE)
            rid = f"r{made}@bench.example"
            body = "On Mon, someone wrote:\n" + "> quoted line of the patch\n" * 30 + \
                "\nLooks fine to me, one nit below.\n\nReviewed-by: " + email.utils.formataddr(who) + "\n"
            yield _mail(who, f"Re: {subj}", rid, t, body, irt=msgid, refs=refs + [msgid])
            made += 1
            recent.append((rid, f"Re: {subj}", refs + [msgid]))


def fast_import(repo: Path, msgs, start_from_existing: bool = False) -> None:
    """Append messages as v2 commits (tree = {m: message}) on refs/heads/master."""
    if not (repo / "HEAD").exists():
        repo.mkdir(parents=True)
        subprocess.run(["git", "init", "-q", "--bare", str(repo)], check=True)
    proc = subprocess.Popen(["git", "-C", str(repo), "fast-import", "--quiet"],
                            stdin=subprocess.PIPE)
    w = proc.stdin.write
    first = True
    for k, raw in enumerate(msgs):
        hdr = raw.split(b"\n\n", 1)[0].decode(errors="replace")
        subj = next((ln[9:] for ln in hdr.split("\n") if ln.startswith("Subject: ")), "")
        frm = next((ln[6:] for ln in hdr.split("\n") if ln.startswith("From: ")), "x <x@x>")
        name, addr = email.utils.parseaddr(frm)
        w(b"blob\nmark :1\ndata %d\n" % len(raw) + raw + b"\n")
        ident = f"{name or addr} <{addr}> {1_740_000_000 + k} +0000"
        msg = subj.encode() + b"\n"
        w(f"commit refs/heads/master\nauthor {ident}\ncommitter public-inbox <pi@localhost> "
          f"{1_740_000_000 + k} +0000\ndata {len(msg)}\n".encode() + msg)
        if first and start_from_existing:
            w(b"from refs/heads/master^0\n")
        first = False
        w(b"M 100644 :1 m\n\n")
    proc.stdin.close()
    if proc.wait() != 0:
        raise SystemExit("git fast-import failed")


def latency_series(tree: Path) -> list[bytes]:
    """cover + 2 patches made on the kernel tree (temporary index), threaded."""
    def git(*a, env=None, input=None):
        e = dict(os.environ, **(env or {}))
        return subprocess.run(["git", "-C", str(tree), *a], env=e, input=input, text=True,
                              capture_output=True, check=True).stdout.strip()

    base = git("rev-parse", "HEAD")
    parent = base
    ident = {"GIT_AUTHOR_NAME": "Bench Author", "GIT_AUTHOR_EMAIL": "bench@example.org",
             "GIT_COMMITTER_NAME": "Bench Author", "GIT_COMMITTER_EMAIL": "bench@example.org"}
    with tempfile.TemporaryDirectory() as td:
        for i, subj in enumerate(["net: core: note one", "net: core: note two"]):
            text = git("cat-file", "blob", f"{parent}:net/core/dev.c") + "\n"
            text = text.replace("#include <linux/uaccess.h>\n",
                                f"#include <linux/uaccess.h>\n/* benchmark note {i} */\n", 1)
            env = dict(ident, GIT_INDEX_FILE=f"{td}/index")
            git("read-tree", parent, env=env)
            blob = git("hash-object", "-w", "--stdin", input=text)
            git("update-index", "--cacheinfo", f"100644,{blob},net/core/dev.c", env=env)
            tr = git("write-tree", env=env)
            parent = git("commit-tree", tr, "-p", parent, "-F", "-", env=ident,
                         input=f"{subj}\n\nBenchmark change {i}.\n\nSigned-off-by: Bench Author <bench@example.org>\n")
        out = Path(td) / "out"
        git("format-patch", "-q", f"--base={base}", "--cover-letter", "--thread=shallow",
            "--subject-prefix=PATCH net-next", "-o", str(out), f"{base}..{parent}", env=ident)
        msgs = []
        for f in sorted(out.glob("*.patch")):
            data = f.read_bytes().split(b"\n", 1)[1]
            data = data.replace(b"*** SUBJECT HERE ***", b"Benchmark notes")
            data = data.replace(b"*** BLURB HERE ***", b"Two notes.")
            msgs.append(data)
    return msgs


def config(root: Path, inbox: Path, tree: Path | None, skip: list[str]) -> Path:
    cfg = root / "bot.toml"
    text = (f'[state]\ndir = "{root / "state"}"\n[bot]\nincomplete_after = 100000\n'
            f'[[inbox]]\nname = "bench"\npath = "{inbox}"\nstart = "beginning"\n'
            f'[reply]\npolicy = "always"\ndry_run_dir = "{root / "out"}"\n'
            f'[checks]\nskip = {skip!r}\n'.replace("'", '"'))
    if tree:
        text += f'[tree]\npath = "{tree}"\n'
    cfg.write_text(text)
    return cfg


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mails", type=int, default=10_000)
    ap.add_argument("--tree", type=Path, default=Path.home() / ".cache/napipatch/linux-6.12")
    ap.add_argument("--keep", type=Path, help="work here instead of a temporary directory")
    args = ap.parse_args()
    root = args.keep or Path(tempfile.mkdtemp(prefix="bot-bench-"))
    root.mkdir(parents=True, exist_ok=True)
    inbox = root / "inbox"
    epoch = inbox / "git" / "0.git"
    os.environ.setdefault("XDG_CACHE_HOME", str(root / "cache"))

    t0 = time.monotonic()
    fast_import(epoch, synthetic(args.mails))
    gen = time.monotonic() - t0
    size = sum(f.stat().st_size for f in epoch.rglob("*") if f.is_file())
    print(f"archive: {args.mails} mails, {size / 1e6:.1f} MB packed, generated in {gen:.1f}s")

    cfg = botconfig.load(config(root, inbox, None, []))
    bot = Bot(cfg)
    bot._lock()
    res = PassResult()
    rss0 = measure.self_max_rss()
    with measure.TreeSampler() as mem:
        t0 = time.monotonic()
        bot._ingest(cfg.inboxes[0], res)
        ingest = time.monotonic() - t0
        t0 = time.monotonic()
        groups = bot._assemble()
        assemble = time.monotonic() - t0
    bot._unlock()
    bot.close()
    print(f"ingest (git fetch into the mirror + parse + record): {res.ingested} mails in "
          f"{ingest:.2f}s = {res.ingested / ingest:.0f} mails/s")
    print(f"grouping into series: {len(groups)} series in {assemble:.2f}s")
    print(f"memory, ingest + grouping: this process peaked at {measure.mib(measure.self_max_rss())} "
          f"({measure.mib(rss0)} before), its tree (git fetch included) at {measure.mib(mem.peak)}; "
          f"largest child process {measure.mib(measure.children_max_rss())}")
    # The synthetic series are reported (not checked) so the latency run
    # below measures one series, as a live bot would see it.
    bot = Bot(cfg)
    bot.state.db.execute("UPDATE series SET state='reported', note='benchmark backlog'")
    bot.close()

    have_tree = (args.tree / ".git").exists()
    runs = [("diff-only", None, [])]
    if have_tree:
        runs.insert(0, ("with the tree, all static checks", args.tree, []))
    for label, tree, skip in runs:
        series = latency_series(args.tree) if have_tree else None
        if series is None:
            print("latency: needs --tree to make a real series; skipped")
            break
        if tree is None:  # a fresh series: nothing cached from the run before
            series = [m.replace(b"benchmark note", b"benchmark diff-only note") for m in series]
        cfgp = config(root, inbox, tree, skip)
        fast_import(epoch, series, start_from_existing=True)
        arrived = time.monotonic()
        before = set((root / "out").glob("*.eml")) if (root / "out").exists() else set()
        cp = measure.run([sys.executable, "-m", "napipatch", "bot", "once", "--config", str(cfgp)])
        done = time.monotonic()
        new = set((root / "out").glob("*.eml")) - before
        if cp.rc != 0 or len(new) != 1:
            print(cp.stdout, cp.stderr)
            raise SystemExit("latency run did not produce exactly one reply")
        print(f"latency, last patch in the archive -> reply written ({label}): {done - arrived:.1f}s "
              f"({cp.stdout.strip()}); peak memory: largest process {measure.mib(cp.max_rss)}, "
              f"tree {measure.mib(cp.peak_tree)}")
    print(f"work dir: {root}")


if __name__ == "__main__":
    main()
