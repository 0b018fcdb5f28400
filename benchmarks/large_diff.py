"""Benchmark (run by hand): ``napipatch check --tree`` on a large mechanical series.

    .venv/bin/python benchmarks/large_diff.py [--tree ~/.cache/napipatch/linux-6.12]
        [--upstream ~/.cache/napipatch/linux-7.2 | --series DIR]
        [--keep DIR] [--json FILE] [--timeout S] [--fix [--range BASE..TIP]]

Small series say little about how the checks scale: a check that compares
everything with everything is fast on 5 patches and takes minutes on a
tree-wide rename. This benchmark makes the large series from the tree
itself, so it runs on any prepared tree (6.12, 7.2):

- patch 1 renames ``netdev_priv()`` to ``netdev_private()`` in
  include/linux/netdevice.h and keeps ``netdev_priv()`` as a wrapper for
  the callers not converted yet;
- patches 2-4 convert every caller in drivers/net (ethernet, wireless,
  the rest), about 10,000 lines in about 880 files on 6.12;
- with a cover letter, exported with ``git format-patch --base``.

The commits are made with a temporary index, so the tree's checkout and
branches are untouched (as tests/conftest.py does); only git objects are
added. ``--upstream TREE`` makes instead six patches of real upstream
work: what changed between ``--tree`` and another prepared tree (7.2) in
net/core, net/ipv4, net/ipv6 + net/mptcp, fbnic, bnxt and idpf (82,000
lines in 365 files from 6.12 to 7.2; new files, new helpers, moved code,
like the 7.2 -> 7.3-rc7 networking diff the issue measured). Headers
outside those directories are not part of it, so a patch may call what
its header does not declare yet: callsites reports those, rightly.
``--series DIR`` runs an existing series.

Then, once: ``napipatch check DIR --tree T --no-cache --format json``
(cwd = this repository, an empty ``XDG_CACHE_HOME``), and the table: each
check's seconds (``checks[].seconds``, summed over its units: one check on
one patch), its status and its findings by severity, the total wall time
and peak memory. The issue's goals: the whole run under 60 s on 2 cores,
no check above 20 s.

``--fix``: the rename's commits as a range instead, ``check BASE..TIP
--tree`` with an empty cache (T seconds), then ``fix BASE..TIP --diff`` on
that cache (the issue's goal: at most T + 10 s, the checks' results reused),
and whether the lines ``fix --diff`` changes are exactly those of the
fixable findings' edits.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import measure  # noqa: E402
from measure import mib  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
NAPIPATCH = ROOT / ".venv" / "bin" / "napipatch"
IDENT = {"GIT_AUTHOR_NAME": "Bench Author", "GIT_AUTHOR_EMAIL": "bench@example.org",
         "GIT_COMMITTER_NAME": "Bench Author", "GIT_COMMITTER_EMAIL": "bench@example.org",
         "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z", "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z"}
OLD, NEW = "netdev_priv", "netdev_private"
HEADER = "include/linux/netdevice.h"
# (subject, pathspecs) of the conversion patches, in order; the last takes the rest.
# --upstream: (subject, paths) of each patch, about 10-15k changed lines each
# between 6.12 and 7.2, as the 7.2 -> 7.3-rc7 networking diff of the issue.
UPSTREAM_GROUPS = [("net: core", ["net/core"]), ("net: ipv4", ["net/ipv4"]),
                   ("net: ipv6, mptcp", ["net/ipv6", "net/mptcp"]),
                   ("eth: fbnic", ["drivers/net/ethernet/meta"]),
                   ("eth: bnxt", ["drivers/net/ethernet/broadcom/bnxt"]),
                   ("eth: idpf", ["drivers/net/ethernet/intel/idpf"])]
GROUPS = [("ethernet", ["drivers/net/ethernet"]), ("wireless", ["drivers/net/wireless"]),
          ("the rest of drivers/net", ["drivers/net", ":!drivers/net/ethernet",
                                       ":!drivers/net/wireless"])]


def git(repo, *args, env=None, input=None) -> str:
    e = dict(os.environ, GIT_PAGER="cat", LC_ALL="C", **(env or {}))
    cp = subprocess.run(["git", "-C", str(repo), *args], env=e, input=input, text=True,
                        capture_output=True)
    if cp.returncode != 0:
        raise SystemExit(f"git {' '.join(args)}: {cp.stderr.strip()}")
    return cp.stdout


def commit(repo: Path, parent: str, changes: dict[str, str | bytes | None], message: str,
           work: Path) -> str:
    """A commit on ``parent`` with ``changes`` ({path: new content, or None to delete}),
    by a temporary index: one hash-object and one update-index for all files."""
    src = work / "blobs"
    shutil.rmtree(src, ignore_errors=True)
    src.mkdir(parents=True)
    kept = [p for p, c in changes.items() if c is not None]
    for i, p in enumerate(kept):
        c = changes[p]
        (src / str(i)).write_bytes(c.encode() if isinstance(c, str) else c)
    names = "".join(f"{src / str(i)}\n" for i in range(len(kept)))
    blobs = git(repo, "hash-object", "-w", "--stdin-paths", input=names).split() if kept else []
    info = "".join(f"100644 {b}\t{p}\n" for b, p in zip(blobs, kept))
    info += "".join(f"0 {'0' * 40}\t{p}\n" for p, c in changes.items() if c is None)
    with tempfile.TemporaryDirectory() as td:
        env = {"GIT_INDEX_FILE": str(Path(td) / "index")}
        git(repo, "read-tree", parent, env=env)
        git(repo, "update-index", "--index-info", env=env, input=info)
        tree = git(repo, "write-tree", env=env).strip()
    message += f"\n\nSigned-off-by: {IDENT['GIT_AUTHOR_NAME']} <{IDENT['GIT_AUTHOR_EMAIL']}>\n"
    return git(repo, "commit-tree", tree, "-p", parent, "-F", "-", input=message, env=IDENT).strip()


def blob(repo: Path, rev: str, path: str) -> str:
    return git(repo, "cat-file", "blob", f"{rev}:{path}")


def rename_patch(repo: Path, base: str, work: Path) -> str:
    """Patch 1: the header gets the new name and keeps the old one as a wrapper."""
    text = blob(repo, base, HEADER)
    old = f"static inline void *{OLD}(const struct net_device *dev)\n{{\n\treturn (void *)dev->priv;\n}}\n"
    if old not in text:
        raise SystemExit(f"{HEADER}: no {OLD}() definition to rename")
    new = (old.replace(OLD, NEW) + f"\n/* The old name, until every caller uses {NEW}(). */\n"
           f"static inline void *{OLD}(const struct net_device *dev)\n{{\n"
           f"\treturn {NEW}(dev);\n}}\n")
    text = text.replace(f" *\t{OLD} - access", f" *\t{NEW} - access").replace(old, new)
    return commit(repo, base, {HEADER: text},
                  f"net: rename {OLD}() to {NEW}()\n\nThe old name stays as a wrapper until "
                  f"the callers are converted.", work)


def convert(repo: Path, parent: str, base: str, subject: str, pathspecs: list[str],
            work: Path) -> str:
    files = git(repo, "grep", "-l", "-w", OLD, base, "--", *pathspecs).split("\n")
    paths = [f.split(":", 1)[1] for f in files if f]
    word = re.compile(rf"\b{OLD}\b")
    texts = {p: word.sub(NEW, blob(repo, base, p)) for p in paths}
    return commit(repo, parent, texts,
                  f"net: {subject}: use {NEW}()\n\nA mechanical conversion: "
                  f"sed -i 's/\\b{OLD}\\b/{NEW}/g'.", work)


def export(repo: Path, base: str, tip: str, out: Path, subject: str, blurb: str) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    git(repo, "format-patch", "-q", f"--base={base}", "--cover-letter", "--thread=shallow",
        "--subject-prefix=PATCH net-next", "-o", str(out), f"{base}..{tip}", env=IDENT)
    cover = next(out.glob("0000-*.patch"))
    cover.write_text(cover.read_text().replace("*** SUBJECT HERE ***", subject)
                     .replace("*** BLURB HERE ***", blurb))
    return out


def rename_commits(repo: Path, work: Path) -> tuple[str, str]:
    """(base, tip) of the rename's four commits on ``repo``'s HEAD."""
    base = git(repo, "rev-parse", "HEAD").strip()
    tip = rename_patch(repo, base, work)
    for subject, specs in GROUPS:
        tip = convert(repo, tip, base, subject, specs, work)
    return base, tip


def make_series(repo: Path, out: Path, work: Path) -> Path:
    base, tip = rename_commits(repo, work)
    return export(repo, base, tip, out, f"net: {OLD}() -> {NEW}()",
                  "A tree-wide mechanical rename.")


def _blobs(repo: Path, rev: str, paths: list[str]) -> dict[str, str]:
    """{path: blob id} of the regular files under ``paths`` at ``rev``."""
    out = {}
    for ln in git(repo, "ls-tree", "-r", rev, "--", *paths).splitlines():
        meta, path = ln.split("\t", 1)
        mode, _typ, sha = meta.split()
        if mode in ("100644", "100755"):
            out[path] = sha
    return out


def _read(repo: Path, shas: list[str]) -> list[bytes]:
    """Blob contents through one ``git cat-file --batch``."""
    data = subprocess.run(["git", "-C", str(repo), "cat-file", "--batch"], capture_output=True,
                          input="".join(f"{s}\n" for s in shas).encode(), check=True).stdout
    out, pos = [], 0
    for _ in shas:
        nl = data.index(b"\n", pos)
        size = int(data[pos:nl].split()[2])
        out.append(data[nl + 1:nl + 1 + size])
        pos = nl + 1 + size + 1
    return out


def upstream_series(repo: Path, other: Path, out: Path, work: Path) -> Path:
    """What upstream changed in UPSTREAM_GROUPS between ``repo``'s HEAD and
    ``other``'s HEAD (another prepared tree), as patches on ``repo``'s HEAD."""
    base = git(repo, "rev-parse", "HEAD").strip()
    theirs = git(other, "rev-parse", "HEAD").strip()
    tip = base
    for subject, paths in UPSTREAM_GROUPS:
        old, new = _blobs(repo, base, paths), _blobs(other, theirs, paths)
        changed = sorted(p for p in new if old.get(p) != new[p])
        changes: dict[str, bytes | None] = dict(zip(changed, _read(other, [new[p] for p in changed])))
        changes.update({p: None for p in old if p not in new})
        tip = commit(repo, tip, changes, f"{subject}: the changes from "
                     f"{git(repo, 'describe', '--tags', base).strip()} to "
                     f"{git(other, 'describe', '--tags', theirs).strip()}", work)
    return export(repo, base, tip, out, "net: upstream changes",
                  "Six directories' upstream changes between two releases.")


def diff_size(series: Path) -> tuple[int, int, int]:
    """(patches, files, changed lines) of the series' patch files."""
    patches = files = lines = 0
    for p in sorted(series.glob("*.patch")):
        if p.name.startswith("0000-"):
            continue
        patches += 1
        for ln in p.read_text(errors="replace").splitlines():
            if ln.startswith("diff --git "):
                files += 1
            elif ln[:1] in "+-" and not ln.startswith(("+++ ", "--- ")):
                lines += 1
    return patches, files, lines


def run_check(series: Path, tree: Path, cache_home: Path, timeout: float | None,
              only: str | None = None) -> dict:
    cmd = [str(NAPIPATCH), "check", str(series), "--tree", str(tree), "--no-cache",
           "--format", "json"] + (["--only", only] if only else [])
    env = dict(os.environ, XDG_CACHE_HOME=str(cache_home), COLUMNS="200")
    if timeout is not None:
        env.update(GIT_CONFIG_COUNT="1", GIT_CONFIG_KEY_0="napipatch.check-timeout",
                   GIT_CONFIG_VALUE_0=str(timeout))
    r = measure.run(cmd, cwd=ROOT, env=env, interval=0.5)
    if r.rc not in (0, 1):
        raise SystemExit(f"napipatch exited {r.rc}: {r.stderr[-2000:]}")
    return {"wall": r.wall, "cpu": r.cpu, "max_rss": r.max_rss, "peak_tree": r.peak_tree,
            "report": json.loads(r.stdout)}


def cpu_per_check(series: Path, tree: Path, cache: Path, ids: list[str]) -> dict[str, float]:
    """CPU seconds of ``check --only ID`` for each check (one at a time).

    On a shared machine a unit's wall time grows with whatever else runs;
    the CPU a check's run takes does not, and bounds what it costs on
    idle cores. Each run also applies the series and parses the diff:
    ``apply`` alone is that common part.
    """
    out = {}
    for cid in ids:
        shutil.rmtree(cache, ignore_errors=True)
        out[cid] = run_check(series, tree, cache, None, only=cid)["cpu"]
        print(f"  {cid}: {out[cid]:.1f} s CPU", flush=True)
    return out


def table(res: dict, cpu: dict[str, float] | None = None) -> str:
    rep = res["report"]
    by: dict[str, Counter] = {}
    for f in rep["findings"]:
        by.setdefault(f["check"], Counter())[f["severity"]] += 1
    extra = " CPU alone (s) |" if cpu else ""
    rows = [f"| check | seconds |{extra} status | findings (error/warning/info) |",
            "|---|---|" + ("---|" if cpu else "") + "---|---|"]
    for c in sorted(rep["checks"], key=lambda c: -c.get("seconds", 0)):
        n = by.get(c["id"], Counter())
        alone = f" {cpu[c['id']]:.1f} |" if cpu else ""
        rows.append(f"| {c['id']} | {c.get('seconds', 0):.1f} |{alone} {c['status']} | "
                    f"{n['error']}/{n['warning']}/{n['info']} |")
    rows.append(f"| **total wall** (CPU {res['cpu']:.1f}) | **{res['wall']:.1f}** |"
                + (" |" if cpu else "") + f" | {len(rep['findings'])} |")
    slow = [c["id"] for c in rep["checks"] if c.get("seconds", 0) > 20]
    return "\n".join(rows) + (
        f"\n\npeak memory: largest process {mib(res['max_rss'])}, tree {mib(res['peak_tree'])}"
        f"\ngoals: total under 60 s: {'met' if res['wall'] < 60 else 'NOT met'}; "
        f"no check above 20 s: {'met' if not slow else 'NOT met (' + ', '.join(slow) + ')'}")


def fix_run(tree: Path, base: str, tip: str, cache_home: Path) -> None:
    """``--fix``: ``check BASE..TIP --tree`` with an empty cache (T), then
    ``fix BASE..TIP --diff`` on the same cache, side by side under the same
    load; and the precision of the fixes: the lines ``fix --diff`` changes
    against the lines of the fixable findings' edits (equal: it touches
    only what the findings it fixes name)."""
    rng = f"{base}..{tip}"
    env = dict(os.environ, XDG_CACHE_HOME=str(cache_home), COLUMNS="200")
    shutil.rmtree(cache_home, ignore_errors=True)
    chk = measure.run([str(NAPIPATCH), "check", rng, "--tree", str(tree), "--format", "json"],
                      cwd=ROOT, env=env, interval=0.5)
    if chk.rc not in (0, 1):
        raise SystemExit(f"check exited {chk.rc}: {chk.stderr[-2000:]}")
    fx = measure.run([str(NAPIPATCH), "fix", rng, "--tree", str(tree), "--diff"],
                     cwd=ROOT, env=env, interval=0.5)
    if fx.rc not in (0, 1):
        raise SystemExit(f"fix exited {fx.rc}: {fx.stderr[-2000:]}")
    findings = json.loads(chk.stdout)["findings"]
    fixable = [f for f in findings if f["fixable"]]
    # The lines the edits name, by file: a line fix --diff removes must be an
    # old line of one, a line it adds a new line of one.
    named: dict[tuple[str, str], set[str]] = {}
    for f in fixable:
        for e in f["fix"]["edits"]:
            named.setdefault((e["file"], "-"), set()).update(e["old"])
            named.setdefault((e["file"], "+"), set()).update(e["new"])
    got, stray, path = Counter(), [], ""
    for ln in fx.stdout.splitlines():
        if ln.startswith("+++ b/"):
            path = ln[6:]
        elif ln[:1] in "+-" and not ln.startswith("--- "):
            got[ln[0]] += 1
            if ln[1:] not in named.get((path, ln[0]), ()):
                stray.append(f"{path}: {ln}")
    print(f"findings: {len(findings)}, fixable: {len(fixable)} "
          f"({dict(Counter(f['check'] for f in fixable))})")
    print(f"fix --diff removes {got['-']} and adds {got['+']} lines; "
          + ("every one is a line of a fixable finding's edit" if not stray else
             f"{len(stray)} are not a line of any fixable finding's edit, e.g. {stray[0]}"))
    print(f"| check --tree (empty cache) | {chk.wall:.1f} s | CPU {chk.cpu:.1f} s |")
    print(f"| fix --diff (same cache) | {fx.wall:.1f} s | CPU {fx.cpu:.1f} s |")
    print(f"goal fix <= T + 10 s: {'met' if fx.wall <= chk.wall + 10 else 'NOT met'}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tree", type=Path, default=Path.home() / ".cache/napipatch/linux-6.12")
    ap.add_argument("--series", type=Path, help="check this series instead of generating one")
    ap.add_argument("--upstream", type=Path, metavar="TREE",
                    help="instead of the rename: what upstream changed in six networking "
                         "directories between --tree and TREE (another prepared tree)")
    ap.add_argument("--keep", type=Path, help="work here instead of a temporary directory")
    ap.add_argument("--json", type=Path, help="write the raw report here")
    ap.add_argument("--timeout", type=float, help="napipatch.check-timeout for the run")
    ap.add_argument("--cpu", action="store_true",
                    help="then run each check alone and give its CPU seconds")
    ap.add_argument("--fix", action="store_true",
                    help="instead: check BASE..TIP of the rename's commits, then fix --diff "
                         "on the same cache (its time, and the lines it touches)")
    ap.add_argument("--range", metavar="BASE..TIP",
                    help="with --fix: these commits of --tree instead of the rename's")
    a = ap.parse_args()
    tree = a.tree.expanduser().resolve()
    work = a.keep or Path(tempfile.mkdtemp(prefix="napipatch-large-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    if a.fix:
        print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} (at start)",
              flush=True)
        fix_run(tree, *(a.range.split("..") if a.range else rename_commits(tree, work)),
                work / "cache")
        print(f"load average {os.getloadavg()[0]:.2f} (at end)")
        return 0
    if a.series:
        series = a.series
    elif a.upstream:
        series = upstream_series(tree, a.upstream.expanduser().resolve(), work / "series", work)
    else:
        series = make_series(tree, work / "series", work)
    patches, files, lines = diff_size(series)
    print(f"series: {series}: {patches} patches, {files} file diffs, {lines} changed lines")
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} (at start)",
          flush=True)
    cache = work / "cache"
    shutil.rmtree(cache, ignore_errors=True)
    res = run_check(series, tree, cache, a.timeout)
    print(f"load average {os.getloadavg()[0]:.2f} (at end)\n", flush=True)
    cpu = cpu_per_check(series, tree, cache, [c["id"] for c in res["report"]["checks"]]) \
        if a.cpu else None
    print(table(res, cpu))
    if a.json:
        a.json.write_text(json.dumps({**res, "cpu_alone": cpu}, indent=1))
    if not a.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
