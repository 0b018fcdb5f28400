"""Benchmark (run by hand): v5 through git send-email's sendemail-validate
hook, cold and warm, against one ``napipatch check --tree`` of the same mails.

    .venv/bin/python benchmarks/send_hook.py [--tree ~/.cache/napipatch/linux-6.12]
        [--series threaded-busy-poll@v5] [-n 3]

In a temporary clone of the prepared tree (``--shared``, no checkout: the
hook and the checks work from git's objects), the series is committed on
its base, and ``git format-patch -vN --cover-letter --base`` writes the
messages a developer sends. Then, each with its own new cache
(``XDG_CACHE_HOME``) unless said:

1. ``check cold``: ``napipatch check --tree CLONE OUTDIR`` (the same files);
2. ``hook cold``: ``git send-email --dry-run`` of those files with
   ``napipatch hook install`` done (every message through the hook);
3. ``hook warm``: the same send again (a re-send after a refusal);
4. ``hook after check``: a new cache, ``check`` first, then the send (is
   check's work reused?); only the send is timed.

Per row: wall time, per message, the hook's exit (0: git went on), and
the peak RSS of the process tree. The goals (issue 33): cold at most the
check's time plus 1 s, a warm re-send under 1 s per message.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import measure  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def git(repo: Path, *args: str, env: dict | None = None, input: bytes | None = None) -> str:
    cp = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, check=True,
                        env={**os.environ, **(env or {})}, input=input)
    return cp.stdout.decode().strip()


def commit_series(repo: Path, patches: list[Path], base: str) -> str:
    """Commit each patch on ``base`` without a checkout (a private index)."""
    head = base
    with tempfile.TemporaryDirectory() as td:
        env = {"GIT_INDEX_FILE": str(Path(td) / "index")}
        for p in patches:
            git(repo, "read-tree", head, env=env)
            git(repo, "apply", "--cached", str(p), env=env)
            tree = git(repo, "write-tree", env=env)
            info = subprocess.run(["git", "mailinfo", str(Path(td) / "msg"), str(Path(td) / "p")],
                                  input=p.read_bytes(), capture_output=True, check=True).stdout
            hdr = dict(line.split(": ", 1) for line in info.decode().splitlines() if ": " in line)
            msg = hdr["Subject"] + "\n\n" + (Path(td) / "msg").read_text()
            ident = {"GIT_AUTHOR_NAME": hdr["Author"], "GIT_AUTHOR_EMAIL": hdr["Email"],
                     "GIT_AUTHOR_DATE": hdr["Date"], "GIT_COMMITTER_NAME": hdr["Author"],
                     "GIT_COMMITTER_EMAIL": hdr["Email"], "GIT_COMMITTER_DATE": hdr["Date"]}
            head = git(repo, "commit-tree", tree, "-p", head, "-F", "-", env=ident,
                       input=msg.encode())
    return head


def timed(cmd: list[str], cwd: Path, cache: Path) -> tuple[float, int, int, str]:
    """Wall s, exit, peak tree RSS KiB and output of ``cmd`` with ``cache``."""
    env = {**os.environ, "XDG_CACHE_HOME": str(cache), "COLUMNS": "200"}
    r = measure.run(cmd, cwd=cwd, env=env)
    return r.wall, r.rc, r.peak_tree, r.stdout + r.stderr


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tree", type=Path, default=Path.home() / ".cache/napipatch/linux-6.12")
    ap.add_argument("--series", default="threaded-busy-poll@v5")
    ap.add_argument("-n", type=int, default=3, help="repetitions, interleaved")
    args = ap.parse_args()
    name, version = args.series.split("@v")
    vdir = ROOT / "series" / name / f"v{version}"
    patches = sorted(p for p in vdir.glob("0*.patch") if not p.name.startswith("0000"))
    base = next(line.split(": ", 1)[1].strip() for p in vdir.glob("*.patch")
                for line in p.read_text().splitlines() if line.startswith("base-commit: "))
    py = sys.executable
    with tempfile.TemporaryDirectory(prefix="napipatch-bench-send-") as td:
        clone, out = Path(td) / "linux", Path(td) / "outgoing"
        subprocess.run(["git", "clone", "-q", "--shared", "--no-checkout", str(args.tree),
                        str(clone)], check=True)
        git(clone, "config", "user.name", "Bench")
        git(clone, "config", "user.email", "bench@example.org")
        tip = commit_series(clone, patches, base)
        git(clone, "update-ref", "refs/heads/series", tip)
        git(clone, "symbolic-ref", "HEAD", "refs/heads/series")
        git(clone, "format-patch", "-q", f"-v{version}", "--cover-letter", f"--base={base}",
            "--subject-prefix=PATCH net-next", "-o", str(out), f"{base}..{tip}")
        # the cover letter the developer wrote, not format-patch's placeholder
        cover = next(out.glob("*-0000-cover-letter.patch"))
        cover.write_bytes((vdir / "0000-cover-letter.patch").read_bytes())
        files = sorted(str(p) for p in out.glob("*.patch"))
        subprocess.run([py, "-m", "napipatch", "hook", "install", "--sendemail", "--tree",
                        str(clone)], check=True, capture_output=True)
        send = ["git", "send-email", "--dry-run", "--confirm=never", "--suppress-cc=all",
                "--to=netdev@example.org", *files]
        check = [py, "-m", "napipatch", "check", "--tree", str(clone), str(out)]
        rows: dict[str, list[tuple[float, int, int, str]]] = {}
        for i in range(args.n):  # the rows interleaved, each with new caches
            cold, after = Path(td) / f"cache-cold-{i}", Path(td) / f"cache-after-{i}"
            rows.setdefault("check cold", []).append(timed(check, clone, Path(td) / f"c-{i}"))
            rows.setdefault("hook cold", []).append(timed(send, clone, cold))
            rows.setdefault("hook warm (re-send)", []).append(timed(send, clone, cold))
            timed(check, clone, after)
            rows.setdefault("hook after check", []).append(timed(send, clone, after))
        n = len(files)
        print(f"| run (n={args.n}) | wall s, median (min-max) | s per message ({n}) | exit "
              "| peak tree RSS MiB |")
        print("|---|---|---|---|---|")
        for label, got in rows.items():
            walls = sorted(g[0] for g in got)
            med = measure.median(walls)
            print(f"| {label} | {med:.1f} ({walls[0]:.1f}-{walls[-1]:.1f}) | {med / n:.2f} | "
                  f"{','.join(str(g[1]) for g in got)} | {max(g[2] for g in got) / 1024:.0f} |")
        for label, got in rows.items():
            if label.startswith("hook"):
                tail = [line for line in got[-1][3].splitlines() if "napipatch" in line][-1:]
                print(f"\n{label}: " + " / ".join(tail))

if __name__ == "__main__":
    main()
