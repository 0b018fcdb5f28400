"""Benchmark (run by hand): ``napipatch check`` vs the netdev CI's static pipeline run by hand.

    .venv/bin/python benchmarks/static_checks.py [--tree ~/.cache/napipatch/linux-6.12]
        [--series threaded-busy-poll@v5] [-n 3] [--no-variant] [--json FILE] [--keep DIR]

Both sides run in one invocation, on the same tree, N times each
(interleaved, so load drift hits both); the tables give medians.

napipatch side (cwd = this repository, so ``NAME@vN`` is the store):

- cold: ``napipatch check SERIES --tree T --format json --no-cache``
  (the trusted copy of the base's scripts already exported);
- first run: the same without ``--no-cache`` in an empty cache directory
  (``XDG_CACHE_HOME``), so it also exports the scripts with ``git archive``;
- cached re-run: that command again in the same cache directory.

The pipeline side is the netdev CI's (NIPA's) static tests done by hand as
NIPA runs them in its tree:

- ``git worktree add --detach`` at the series' base-commit (timed, and
  reported separately: NIPA keeps its trees, a user without a spare tree
  pays for it);
- per patch: ``git am``; ``scripts/checkpatch.pl -g HEAD --strict
  --max-line-length=80 --ignore=<NIPA's list> --show-types`` (NIPA's
  tests/patch/checkpatch/checkpatch.sh; ``--show-types`` only adds the
  type to each message; ``--codespell`` when Debian's codespell dictionary
  is installed, as napipatch does); ``scripts/kernel-doc -Wall -none`` on
  the .c/.h files the patch touches at HEAD~ and HEAD (``git checkout``),
  new warnings = warnings after whose (file, message) without the line
  number was not there before (tests/patch/kdoc); ``scripts/get_maintainer.pl
  PATCH`` (tests/patch/cc_maintainers: its addresses vs the mail's
  From/To/Cc);
- per series: ``tools/net/ynl/ynl-regen.sh -f`` then ``git diff --quiet``
  (tests/series/ynl, its regeneration part), with this venv's bin first on
  PATH for PyYAML and jsonschema.
- ``git worktree remove`` is timed but not counted.

Then the findings: the pipeline's (checkpatch messages, new kernel-doc
warnings, YNL files dirty after regeneration, maintainers not in the
mail's headers) and napipatch's (from ``--format json``), and whether
napipatch's are a superset of the pipeline's: checkpatch matched by
patch + type + file + line, kernel-doc by message, YNL by file.
cc_maintainers is listed but not compared: napipatch has no header check
for it (``napipatch send`` adds get_maintainer's addresses itself).

Unless --no-variant, the same is done on a 3-patch series made from the
tree's base with a temporary index (the tree's checkout and branches are
untouched) where the pipeline does find something: a checkpatch problem
(LONG_LINE, TRAILING_WHITESPACE), a new kernel-doc warning, and a spec
change without regenerating the YNL headers.

Memory: the largest single process (exact, wait4) and the largest summed
RSS of the process tree (sampled every 0.1 s); see measure.py.
"""

from __future__ import annotations

import argparse
import email
import email.utils
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import measure  # noqa: E402
from measure import median, mib  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
VENV_BIN = ROOT / ".venv" / "bin"
NAPIPATCH = VENV_BIN / "napipatch"
NIPA_IGNORE = ("COMMIT_LOG_LONG_LINE,MACRO_ARG_REUSE,ALLOC_SIZEOF_STRUCT,NO_AUTHOR_SIGN_OFF,"
               "GIT_COMMIT_ID,CAMELCASE,FILE_PATH_CHANGES,BAD_REPORTED_BY_LINK")
CODESPELL = Path("/usr/share/codespell/dictionary.txt")
IDENT = {"GIT_AUTHOR_NAME": "Bench Author", "GIT_AUTHOR_EMAIL": "bench@example.org",
         "GIT_COMMITTER_NAME": "Bench Author", "GIT_COMMITTER_EMAIL": "bench@example.org",
         "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z", "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z"}
STAGES = ["worktree add", "git am", "checkpatch", "kernel-doc", "get_maintainer", "ynl regen + diff"]


def git(repo, *args, env=None, input=None, check=True) -> str:
    e = dict(os.environ, GIT_PAGER="cat", LC_ALL="C", **(env or {}))
    cp = subprocess.run(["git", "-C", str(repo), *args], env=e, input=input, text=True,
                        capture_output=True)
    if check and cp.returncode != 0:
        raise SystemExit(f"git {' '.join(args)}: {cp.stderr.strip()}")
    return cp.stdout.strip()


# ------------------------------------------------------------------ the series

def store_series(spec: str) -> Path:
    name, _, ver = spec.partition("@")
    d = ROOT / "series" / name / (ver or "")
    if not ver:
        d = max((p for p in d.iterdir() if re.fullmatch(r"v\d+", p.name)), key=lambda p: int(p.name[1:]))
    if not d.is_dir():
        raise SystemExit(f"{d}: no such series version")
    return d


def patch_files(d: Path) -> list[Path]:
    return sorted(p for p in d.glob("*.patch") if not p.name.startswith("0000-"))


def base_commit(d: Path) -> str:
    for p in sorted(d.glob("*.patch")):
        m = re.search(r"^base-commit: ([0-9a-f]{40})$", p.read_text(errors="replace"), re.M)
        if m:
            return m.group(1)
    raise SystemExit(f"{d}: no base-commit:")


def _commit(repo: Path, parent: str, path: str, old: str, new: str, message: str) -> str:
    text = git(repo, "cat-file", "blob", f"{parent}:{path}") + "\n"
    if old not in text:
        raise SystemExit(f"{path}: anchor {old!r} not found")
    text = text.replace(old, new, 1)
    with tempfile.TemporaryDirectory() as td:
        env = {"GIT_INDEX_FILE": str(Path(td) / "index")}
        git(repo, "read-tree", parent, env=env)
        blob = git(repo, "hash-object", "-w", "--stdin", input=text)
        git(repo, "update-index", "--cacheinfo", f"100644,{blob},{path}", env=env)
        tree = git(repo, "write-tree", env=env)
    message += f"\n\nSigned-off-by: {IDENT['GIT_AUTHOR_NAME']} <{IDENT['GIT_AUTHOR_EMAIL']}>\n"
    return git(repo, "commit-tree", tree, "-p", parent, "-F", "-", input=message, env=IDENT)


def make_variant(repo: Path, base: str, out: Path) -> Path:
    """A 3-patch series on ``base`` with one problem of each kind the pipeline finds."""
    c1 = _commit(repo, base, "net/core/dev.c",
                 "int dev_set_threaded(struct net_device *dev, bool threaded)\n{\n",
                 "static int __maybe_unused bench_sum(struct net_device *dev, int first_value, int second_value)\n"
                 "{\n\treturn first_value + second_value; \n}\n\n"
                 "int dev_set_threaded(struct net_device *dev, bool threaded)\n{\n",
                 "net: core: add a summing helper\n\nA helper for the benchmark; its first line is "
                 "too long and it has a\ntrailing space.")
    c2 = _commit(repo, c1, "include/linux/netdevice.h",
                 "#endif\t/* _LINUX_NETDEVICE_H */",
                 "/**\n * netdev_bench_helper() - a helper added by the benchmark\n"
                 " * @dev: the device\n *\n * Return: 0 on success\n */\n"
                 "int netdev_bench_helper(struct net_device *dev, int flags);\n\n"
                 "#endif\t/* _LINUX_NETDEVICE_H */",
                 "net: declare netdev_bench_helper()\n\nIts kernel-doc does not describe @flags.")
    c3 = _commit(repo, c2, "Documentation/netlink/specs/netdev.yaml",
                 "          L3 checksum HW offload is supported by the driver.\n",
                 "          L3 checksum HW offload is supported by the driver.\n"
                 "      -\n        name: tx-bench\n        doc:\n"
                 "          A flag added without regenerating the headers.\n",
                 "netdev: add the tx-bench xsk flag\n\nThe spec changes; the generated uapi headers "
                 "are not regenerated.")
    out.mkdir(parents=True, exist_ok=True)
    git(repo, "format-patch", "-q", f"--base={base}", "--cover-letter", "--thread=shallow",
        "--subject-prefix=PATCH net-next", "-o", str(out), f"{base}..{c3}", env=IDENT)
    cover = next(out.glob("0000-*.patch"))
    cover.write_text(cover.read_text().replace("*** SUBJECT HERE ***", "net: benchmark problems")
                     .replace("*** BLURB HERE ***", "Three patches, one problem of each kind."))
    return out


# ------------------------------------------------------------ the pipeline

_CP_HEAD = re.compile(r"^(ERROR|WARNING|CHECK):([A-Z0-9_]+): (.*)$")
_CP_FILE = re.compile(r"^#\d+: FILE: (.+?):(\d+):")
_KDOC = re.compile(r"^(?P<file>[^\s:]+):(?P<line>\d+): (?P<kind>warning|error): (?P<msg>.*)$")
_EMAIL = re.compile(r'([^ <"]*@[^ >"]*)')


def parse_checkpatch(text: str) -> list[dict]:
    out, cur = [], None
    for line in text.splitlines():
        m = _CP_HEAD.match(line)
        if m:
            cur = {"level": m.group(1), "type": m.group(2), "message": m.group(3),
                   "file": None, "line": None}
            out.append(cur)
        elif cur is not None and cur["file"] is None and (w := _CP_FILE.match(line)):
            cur["file"], cur["line"] = w.group(1), int(w.group(2))
        elif not line.strip():
            cur = None
    return out


def parse_kdoc(text: str) -> list[tuple[str, str, str]]:
    """(file, kind, message) per warning: the line number dropped, as NIPA compares."""
    return [(m["file"], m["kind"], m["msg"].strip()) for ln in text.splitlines()
            if (m := _KDOC.match(ln.strip()))]


def touched(patch_text: str) -> tuple[list[str], list[str]]:
    """.c/.h files before and after the patch (NIPA's extract_files, filtered)."""
    before, after = set(), set()
    lines = patch_text.split("\n")
    for i, line in enumerate(lines[:-1]):
        nxt = lines[i + 1]
        if not nxt.startswith("+++ b/") or not line.startswith("--- "):
            continue
        path = nxt[6:]
        if not path.endswith((".c", ".h")):
            continue
        if "/dev/null" not in line:
            before.add(path)
        after.add(path)
    return sorted(before), sorted(after)


def mail_addresses(patch_text: str) -> set[str]:
    msg = email.message_from_string(patch_text)
    addrs = []
    for h in ("from", "to", "cc", "sender"):
        addrs += msg.get_all(h, [])
    return {a for _, a in email.utils.getaddresses(addrs)}


class Stages:
    def __init__(self):
        self.wall = {s: 0.0 for s in STAGES}
        self.max_rss = {s: 0 for s in STAGES}
        self.peak_tree = {s: 0 for s in STAGES}

    def run(self, stage: str, cmd, cwd, env=None, ok=(0,)) -> measure.Run:
        r = measure.run(cmd, cwd=cwd, env=env)
        self.wall[stage] += r.wall
        self.max_rss[stage] = max(self.max_rss[stage], r.max_rss)
        self.peak_tree[stage] = max(self.peak_tree[stage], r.peak_tree)
        if ok is not None and r.rc not in ok:
            raise SystemExit(f"pipeline: {' '.join(map(str, cmd))} exited {r.rc}\n{r.stderr[-2000:]}")
        return r


def nipa(repo: Path, base: str, patches: list[Path], work: Path) -> dict:
    """The netdev CI's static tests, by hand, in a fresh worktree at ``base``."""
    wt = work / "nipa-worktree"
    st = Stages()
    env = dict(os.environ, LC_ALL="C", GIT_PAGER="cat", **{k: v for k, v in IDENT.items()
                                                          if k.startswith("GIT_COMMITTER_N")
                                                          or k.startswith("GIT_COMMITTER_E")})
    env_ynl = dict(env, PATH=f"{VENV_BIN}:{os.environ['PATH']}")
    st.run("worktree add", ["git", "-C", str(repo), "worktree", "add", "--detach", "-f", "-q",
                            str(wt), base], None, env)
    cp_args = ["./scripts/checkpatch.pl", "-g", "HEAD", "--strict", "--max-line-length=80",
               f"--ignore={NIPA_IGNORE}", "--show-types", "--color=never"]
    if CODESPELL.is_file():
        cp_args.insert(3, "--codespell")
    findings = {"checkpatch": [], "kdoc": [], "ynl": [], "cc_maintainers": []}
    for i, pf in enumerate(patches, 1):
        text = pf.read_text(errors="replace")
        st.run("git am", ["git", "am", "-q", str(pf)], wt, env)
        head = git(wt, "rev-parse", "HEAD")
        r = st.run("checkpatch", cp_args, wt, env, ok=None)
        for item in parse_checkpatch(r.stdout):
            findings["checkpatch"].append(dict(item, patch=i))
        before_files, after_files = touched(text)
        if before_files or after_files:
            st.run("kernel-doc", ["git", "checkout", "-q", "HEAD~"], wt, env)
            old = st.run("kernel-doc", ["./scripts/kernel-doc", "-Wall", "-none", *before_files], wt, env,
                         ok=None) if before_files else None
            st.run("kernel-doc", ["git", "checkout", "-q", head], wt, env)
            new = st.run("kernel-doc", ["./scripts/kernel-doc", "-Wall", "-none", *after_files], wt, env,
                         ok=None)
            had = set(parse_kdoc(old.stderr + old.stdout)) if old else set()
            for f, kind, msg in parse_kdoc(new.stderr + new.stdout):
                if (f, kind, msg) not in had:
                    findings["kdoc"].append({"patch": i, "file": f, "message": msg})
        r = st.run("get_maintainer", ["./scripts/get_maintainer.pl", str(pf)], wt, env)
        expected = {m.group(1) for ln in r.stdout.splitlines() if (m := _EMAIL.search(ln))}
        expected.discard("linux-kernel@vger.kernel.org")
        missing = sorted(expected - mail_addresses(text))
        if missing:
            findings["cc_maintainers"].append({"patch": i, "missing": missing})
    st.run("ynl regen + diff", ["./tools/net/ynl/ynl-regen.sh", "-f"], wt, env_ynl)
    dirty = st.run("ynl regen + diff", ["git", "diff", "--quiet"], wt, env, ok=(0, 1)).rc == 1
    if dirty:
        names = st.run("ynl regen + diff", ["git", "diff", "--name-only"], wt, env).stdout.split()
        findings["ynl"] = [{"file": n} for n in names]
    t0 = time.monotonic()
    subprocess.run(["git", "-C", str(repo), "worktree", "remove", "--force", str(wt)], check=True)
    removal = time.monotonic() - t0
    return {"wall": sum(st.wall.values()), "stages": st.wall, "worktree_remove": removal,
            "max_rss": max(st.max_rss.values()), "peak_tree": max(st.peak_tree.values()),
            "stage_max_rss": st.max_rss, "findings": findings, "ynl_dirty": dirty}


# ------------------------------------------------------------ napipatch

def napipatch(target: str, tree: Path, cache_home: Path, no_cache: bool) -> dict:
    cmd = [str(NAPIPATCH), "check", target, "--tree", str(tree), "--format", "json"]
    if no_cache:
        cmd.append("--no-cache")
    env = dict(os.environ, XDG_CACHE_HOME=str(cache_home), COLUMNS="200")
    r = measure.run(cmd, cwd=ROOT, env=env)
    if r.rc not in (0, 1):
        raise SystemExit(f"napipatch exited {r.rc}: {r.stderr[-2000:]}")
    rep = json.loads(r.stdout)
    return {"wall": r.wall, "max_rss": r.max_rss, "peak_tree": r.peak_tree, "report": rep,
            "cached": sum(1 for c in rep["checks"] if c.get("cached")), "checks": len(rep["checks"])}


# ------------------------------------------------------------ comparing

def superset(nipa_f: dict, nap: list[dict]) -> list[tuple[str, str, str]]:
    """[(kind, pipeline finding, napipatch's match or 'MISSED')]."""
    rows = []
    for c in nipa_f["checkpatch"]:
        hit = next((f for f in nap if f["check"] == "checkpatch" and f["patch"] == c["patch"]
                    and f["message"].startswith(c["type"] + ":")
                    and f.get("file") == c["file"] and f.get("line") == c["line"]), None)
        rows.append(("checkpatch", f"patch {c['patch']} {c['level']}:{c['type']} "
                     f"{c['file'] or '(commit message)'}:{c['line'] or '-'}: {c['message']}",
                     _where(hit)))
    for k in nipa_f["kdoc"]:
        hit = next((f for f in nap if f["check"] == "kdoc"
                    and f["message"] == f"new kernel-doc warning: {k['message']}"), None)
        rows.append(("kdoc", f"patch {k['patch']} {k['file']}: {k['message']}", _where(hit)))
    for y in nipa_f["ynl"]:
        hit = next((f for f in nap if f["check"] == "ynl" and f.get("file") == y["file"]), None)
        rows.append(("ynl", f"{y['file']} changes after ynl-regen.sh -f", _where(hit)))
    return rows


def _where(f) -> str:
    if f is None:
        return "MISSED"
    loc = f"{f['file']}:{f['line']}" if f.get("file") else "-"
    return f"patch {f['patch']} {f['severity']} {loc}"


def fmt_nap_findings(rep: dict) -> list[str]:
    out = []
    for f in rep["findings"]:
        loc = f" {f['file']}:{f['line']}" if f.get("file") else ""
        out.append(f"- patch {f['patch']} {f['severity']} [{f['check']}]{loc}: {f['message'][:150]}")
    return out


def fmt_nipa_findings(fd: dict) -> list[str]:
    out = [f"- patch {c['patch']} checkpatch {c['level']}:{c['type']} "
           f"{c['file'] or '(commit message)'}:{c['line'] or '-'}: {c['message']}" for c in fd["checkpatch"]]
    out += [f"- patch {k['patch']} kdoc {k['file']}: {k['message']}" for k in fd["kdoc"]]
    out.append("- ynl: tree dirty after ynl-regen.sh -f: " + ", ".join(y["file"] for y in fd["ynl"])
               if fd["ynl"] else "- ynl: generated files up to date (git diff --quiet)")
    for c in fd["cc_maintainers"]:
        out.append(f"- patch {c['patch']} cc_maintainers (not compared): {len(c['missing'])} "
                   f"get_maintainer.pl addresses not in From/To/Cc")
    return out


def bench(label: str, target: str, pdir: Path, tree: Path, n: int, work: Path) -> dict:
    base = base_commit(pdir)
    patches = patch_files(pdir)
    runs = {"nipa": [], "cold": [], "first": [], "cached": []}
    loads = [os.getloadavg()[0]]
    for i in range(n):
        print(f"[{label}] run {i + 1}/{n}: pipeline ...", file=sys.stderr, flush=True)
        runs["nipa"].append(nipa(tree, base, patches, work))
        cache_home = work / f"cache-{label}-{i}"
        print(f"[{label}] run {i + 1}/{n}: napipatch ...", file=sys.stderr, flush=True)
        runs["first"].append(napipatch(target, tree, cache_home, no_cache=False))
        runs["cached"].append(napipatch(target, tree, cache_home, no_cache=False))
        runs["cold"].append(napipatch(target, tree, cache_home, no_cache=True))
        shutil.rmtree(cache_home, ignore_errors=True)
        loads.append(os.getloadavg()[0])
    return {"label": label, "target": target, "patches": len(patches), "base": base, "runs": runs,
            "loads": loads}


def report(res: dict, n: int) -> str:
    R = res["runs"]
    med = lambda key, xs: median([x[key] for x in xs])  # noqa: E731
    nipa_t = med("wall", R["nipa"])
    wt = median([x["stages"]["worktree add"] for x in R["nipa"]])
    lines = [f"### {res['label']}: {res['target']} ({res['patches']} patches, base {res['base'][:12]}), "
             f"median of {n}; 1-min load average between runs {min(res['loads']):.1f}-{max(res['loads']):.1f}", "",
             "| side | wall (median) | min-max | vs pipeline | largest process | peak tree RSS |",
             "|---|---|---|---|---|---|"]

    def row(name, xs, ratio=True):
        w = [x["wall"] for x in xs]
        x = median(w) / nipa_t
        r = (f"{x:.2f} ({1 / x:.1f}x faster)" if x < 1 else f"{x:.2f} ({x:.1f}x slower)") if ratio else "1"
        lines.append(f"| {name} | {median(w):.1f} s | {min(w):.1f}-{max(w):.1f} s | {r} | "
                     f"{mib(max(x['max_rss'] for x in xs))} | {mib(max(x['peak_tree'] for x in xs))} |")

    row("pipeline by hand (worktree + per patch + ynl)", R["nipa"], ratio=False)
    lines.append(f"| pipeline without the worktree add | {nipa_t - wt:.1f} s | | | | |")
    row("napipatch check --no-cache (cold)", R["cold"])
    row("napipatch check, empty cache dir (first run)", R["first"])
    row("napipatch check, cached re-run", R["cached"])
    cached = R["cached"][-1]
    cold, cach = med("wall", R["cold"]), med("wall", R["cached"])
    per_check = {c["id"]: median([next(k["seconds"] for k in x["report"]["checks"] if k["id"] == c["id"])
                                  for x in R["cold"]]) for c in R["cold"][-1]["report"]["checks"]}
    lines += ["", f"cached re-run: {cached['cached']} of {cached['checks']} checks answered from the cache", "",
              "napipatch per-check seconds, cold, median (checks run 2 at a time, napipatch.jobs): "
              + ", ".join(f"{k} {v:.1f}" for k, v in sorted(per_check.items(), key=lambda kv: -kv[1]) if v >= 0.05), "",
              f"goal, napipatch cold at most 1/5 of the pipeline: {cold:.1f} s vs {nipa_t:.1f} s = "
              f"{cold / nipa_t:.2f} -> {'met' if cold <= nipa_t / 5 else 'NOT met'} "
              f"(against the pipeline without its worktree add, {nipa_t - wt:.1f} s: {cold / (nipa_t - wt):.2f})",
              f"goal, cached re-run under a second: {cach:.2f} s -> {'met' if cach < 1 else 'NOT met'}", "",
              "pipeline stages (median s): " + ", ".join(
                  f"{s} {median([x['stages'][s] for x in R['nipa']]):.1f}" for s in STAGES)
              + f"; worktree remove (not counted) {median([x['worktree_remove'] for x in R['nipa']]):.1f}", ""]
    fd = R["nipa"][-1]["findings"]
    rep = R["cold"][-1]["report"]
    lines += ["pipeline findings:", *fmt_nipa_findings(fd), "",
              f"napipatch findings ({rep['summary']['errors']} errors, {rep['summary']['warnings']} warnings, "
              f"{rep['summary']['infos']} infos):", *fmt_nap_findings(rep), ""]
    rows = superset(fd, rep["findings"])
    missed = [r for r in rows if r[2] == "MISSED"]
    lines += ["superset check (pipeline finding -> napipatch's):"]
    lines += [f"- [{k}] {what} -> {where}" for k, what, where in rows] or ["- (the pipeline found nothing to match)"]
    lines += ["", f"napipatch's findings are a superset of the pipeline's: "
              f"{'yes' if not missed else 'NO, missed ' + str(len(missed))} ({len(rows)} pipeline findings compared)", ""]
    same = all(json.dumps(x["report"]["findings"], sort_keys=True) == json.dumps(rep["findings"], sort_keys=True)
               for k in ("cold", "first", "cached") for x in R[k])
    lines += [f"napipatch findings identical across all its runs (cold, first, cached): {same}", ""]
    return "\n".join(lines)


def machine() -> str:
    mem = next(int(ln.split()[1]) for ln in open("/proc/meminfo") if ln.startswith("MemTotal"))
    osr = dict(ln.rstrip().split("=", 1) for ln in open("/etc/os-release") if "=" in ln)
    return (f"{os.cpu_count()} CPUs, {mem / 1024 / 1024:.0f} GiB, {osr.get('PRETTY_NAME', '?').strip(chr(34))}, "
            f"load average {os.getloadavg()[0]:.2f}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tree", type=Path, default=Path.home() / ".cache/napipatch/linux-6.12")
    ap.add_argument("--series", default="threaded-busy-poll@v5")
    ap.add_argument("-n", type=int, default=3)
    ap.add_argument("--no-variant", action="store_true")
    ap.add_argument("--json", type=Path, help="write every run's raw data here")
    ap.add_argument("--keep", type=Path, help="work here instead of a temporary directory")
    a = ap.parse_args()
    work = a.keep or Path(tempfile.mkdtemp(prefix="napipatch-static-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    tree = a.tree.expanduser().resolve()
    print(f"machine: {machine()} (at start)", flush=True)
    results = [bench("flagship", a.series, store_series(a.series), tree, a.n, work)]
    if not a.no_variant:
        vdir = make_variant(tree, base_commit(store_series(a.series)), work / "variant")
        results.append(bench("variant", str(vdir), vdir, tree, a.n, work))
    print(f"machine: {machine()} (at end)\n")
    for res in results:
        print(report(res, a.n))
    if a.json:
        a.json.write_text(json.dumps(results, indent=1, default=str))
    if not a.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
