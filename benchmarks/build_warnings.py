"""Benchmark (run by hand): `napipatch test warnings` on a 3-patch net series
(core plus a driver), cold and warm, against the netdev CI's way.

    .venv/bin/python benchmarks/build_warnings.py [--tree ~/.cache/napipatch/linux-6.12]
        [--jobs 2] [--only w1 --only 32bit --only clang] [--anchor [--anchor-dir net/core]]
        [--dir DIR]

The series (made on the tree's v6.12.117-debian with a temporary index, the
tree's checkout untouched): 1) ``include/linux/netdevice.h`` gains
``netif_napi_weight()`` and ``net/core/dev.c`` uses it, 2) and 3)
``drivers/net/virtio_net.c`` uses it in two places.

1. cold: a new build directory (``NAPIPATCH_BUILD_DIR``) and an empty ccache
   (``CCACHE_DIR``): the worktree, allmodconfig and ``make prepare`` of each
   configuration, then every patch at its parent and at the patch;
2. warm: the same command again (kept prepares, warm ccache);
3. ``--anchor``: NIPA's per-patch stand-in, one ``allmodconfig`` build of
   ``net/`` and ``drivers/net/`` with ``W=1`` (gcc, x86_64, -Werror options
   off as NIPA sets them) at the same base, with its own empty ccache: timed
   once (hours on 2 cores). With ``--anchor-dir`` only those directories
   are built, and the whole anchor is extrapolated from their time per
   object and the number of objects allmodconfig compiles in ``net/`` and
   ``drivers/net/`` (counted with kbuild's own lists, ``kernel.kbuild``).

Reported: wall time, the largest process and the summed RSS of the process
tree (``measure``), the disk the build directory and ccache take, and the
load average before and after each run (the machine may be shared).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import measure  # noqa: E402

from napipatch.jobs.warnings.configs import ALLCONFIG  # noqa: E402
from napipatch.kernel.kbuild import Kbuild  # noqa: E402
from napipatch.tree import gitutil  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
HELPER = """
/**
 * netif_napi_weight - the budget a NAPI instance polls with
 * @n: NAPI context
 *
 * Return: the weight @n was added with.
 */
static inline int netif_napi_weight(const struct napi_struct *n)
{
	return n->weight;
}
"""


def _commit(repo: Path, parent: str, changes: dict[str, str], subject: str) -> str:
    with tempfile.TemporaryDirectory() as td:
        env = {"GIT_INDEX_FILE": str(Path(td) / "index")}
        gitutil.git(repo, "read-tree", parent, env=env)
        for path, text in changes.items():
            blob = gitutil.out(repo, "hash-object", "-w", "--stdin", input=text)
            gitutil.git(repo, "update-index", "--add", "--cacheinfo", f"100644,{blob},{path}",
                        env=env)
        tree = gitutil.out(repo, "write-tree", env=env)
    ident = {"GIT_AUTHOR_NAME": "Bench", "GIT_AUTHOR_EMAIL": "bench@example.org",
             "GIT_COMMITTER_NAME": "Bench", "GIT_COMMITTER_EMAIL": "bench@example.org",
             "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z", "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z"}
    msg = f"{subject}\n\nBenchmark series.\n\nSigned-off-by: Bench <bench@example.org>\n"
    return gitutil.out(repo, "commit-tree", tree, "-p", parent, "-F", "-", input=msg, env=ident)


def _replace(repo: Path, rev: str, path: str, old: str, new: str) -> str:
    text = gitutil.git(repo, "cat-file", "blob", f"{rev}:{path}").stdout
    assert old in text, (path, old)
    return text.replace(old, new, 1)


def make_series(repo: Path, base: str, out: Path) -> Path:
    h, dev, vn = "include/linux/netdevice.h", "net/core/dev.c", "drivers/net/virtio_net.c"
    anchor = "\treturn napi_complete_done(n, 0);\n}\n"
    c1 = _commit(repo, base, {h: _replace(repo, base, h, anchor, anchor + HELPER),
                              dev: _replace(repo, base, dev, "\tweight = n->weight;\n",
                                            "\tweight = netif_napi_weight(n);\n")},
                 "net: add netif_napi_weight()")
    c2 = _commit(repo, c1, {vn: _replace(repo, c1, vn, "\tif (napi->weight)\n",
                                         "\tif (netif_napi_weight(napi))\n")},
                 "virtio_net: read the NAPI weight with netif_napi_weight()")
    c3 = _commit(repo, c2, {vn: _replace(repo, c2, vn, "\tif (!napi->weight)\n",
                                         "\tif (!netif_napi_weight(napi))\n")},
                 "virtio_net: and when enabling a tx NAPI")
    out.mkdir(parents=True, exist_ok=True)
    gitutil.git(repo, "format-patch", "-q", f"--base={base}", "-o", str(out), f"{base}..{c3}")
    return out


def _du(path: Path) -> str:
    cp = subprocess.run(["du", "-sh", str(path)], capture_output=True, text=True)
    return cp.stdout.split()[0] if cp.returncode == 0 else "-"


def _load() -> str:
    return Path("/proc/loadavg").read_text().split(" ", 3)[0]


def run_warnings(series: Path, tree: Path, d: Path, only: list[str], jobs: int) -> dict:
    env = dict(os.environ, NAPIPATCH_BUILD_DIR=str(d / "build"), CCACHE_DIR=str(d / "ccache"),
               XDG_CACHE_HOME=str(d / "cache"))
    cmd = [str(ROOT / ".venv/bin/napipatch"), "test", "warnings", str(series), "--tree", str(tree),
           "-j", str(jobs), "--format", "json", *[a for o in only for a in ("--only", o)]]
    load0 = _load()
    r = measure.run(cmd, env=env)
    report = json.loads(r.stdout) if r.stdout.strip().startswith("{") else {}
    return {"wall": r.wall, "rc": r.rc, "max_rss": r.max_rss, "peak_tree": r.peak_tree,
            "load": f"{load0} -> {_load()}", "build": _du(d / "build"), "ccache": _du(d / "ccache"),
            "checks": {c["id"]: (c["status"], c["seconds"]) for c in report.get("checks", [])},
            "findings": [f"{f['check']} p{f['patch']} {f['file']}:{f['line']} {f['message']}"
                         for f in report.get("findings", []) if f["severity"] != "info"],
            "stderr": r.stderr[-1500:] if r.rc not in (0, 1) else ""}


ANCHOR = ("net", "drivers/net")


def count_objects(src: Path, obj: Path, roots) -> int:
    """The objects the configuration in ``obj`` compiles under ``roots``."""
    kb = Kbuild(src, obj, ["ARCH=x86_64", "SRCARCH=x86", "BITS=64"])
    todo, seen, n = list(roots), set(), 0
    while todo:
        d = todo.pop()
        if d in seen:
            continue
        seen.add(d)
        lst = kb.listing(d)
        if lst is None:
            continue
        objs, dirs = lst
        n += len(objs)
        todo += [x for x in dirs if x.startswith(d + "/")]
    return n


def run_anchor(tree: Path, base: str, d: Path, jobs: int, dirs=ANCHOR) -> dict:
    """allmodconfig, then ``dirs`` (net/ and drivers/net/) with W=1, in a
    fresh worktree; for a subset, the whole anchor extrapolated."""
    src, obj = d / "anchor-src", d / "anchor-obj"
    if not src.exists():
        gitutil.git(tree, "worktree", "add", "--detach", "-f", str(src), base)
    obj.mkdir(parents=True, exist_ok=True)
    (obj / "nowerror.config").write_text(ALLCONFIG)
    env = dict(os.environ, CCACHE_DIR=str(d / "ccache-anchor"), LC_ALL="C")
    cfg = measure.run(["make", "-C", str(src), f"O={obj}", "CC=ccache gcc",
                       f"KCONFIG_ALLCONFIG={obj / 'nowerror.config'}", "allmodconfig"], env=env)
    load0 = _load()
    r = measure.run(["make", "-C", str(src), f"O={obj}", "CC=ccache gcc", f"-j{jobs}", "W=1",
                     *(x.rstrip("/") + "/" for x in dirs)], env=env)
    objs = sum(1 for x in dirs for o in obj.joinpath(x).rglob("*.o")
                if not o.name.endswith(".mod.o"))
    whole = count_objects(src, obj, ANCHOR)
    est = r.wall / objs * whole if objs else 0.0
    return {"dirs": list(dirs), "config_wall": cfg.wall, "wall": r.wall, "rc": r.rc,
            "objects": objs, "anchor_objects": whole,
            "estimate": r.wall if tuple(dirs) == ANCHOR else est,
            "max_rss": r.max_rss, "peak_tree": r.peak_tree, "load": f"{load0} -> {_load()}",
            "disk": _du(obj), "warning_lines": sum("warning:" in ln
                                                    for ln in r.stderr.splitlines())}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tree", type=Path, default=Path.home() / ".cache/napipatch/linux-6.12")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--only", action="append", default=None)
    ap.add_argument("--anchor", action="store_true")
    ap.add_argument("--anchor-dir", action="append", default=None,
                    help="build only this directory for the anchor, and extrapolate")
    ap.add_argument("--dir", type=Path, default=None, help="work here (kept) instead of a temp dir")
    a = ap.parse_args()
    only = a.only or ["w1", "32bit", "clang"]
    base = gitutil.out(a.tree, "rev-parse", "v6.12.117-debian^{commit}")
    d = a.dir or Path(tempfile.mkdtemp(prefix="napipatch-bench-warnings-"))
    d.mkdir(parents=True, exist_ok=True)
    series = make_series(a.tree, base, d / "series")
    out = {"dir": str(d), "only": only}
    for label in ("cold", "warm"):
        res = run_warnings(series, a.tree, d, only, a.jobs)
        out[label] = res
        print(f"{label}: {res['wall']:.0f} s (rc {res['rc']}), largest process "
              f"{measure.mib(res['max_rss'])}, process tree {measure.mib(res['peak_tree'])}, "
              f"build dir {res['build']}, ccache {res['ccache']}, load {res['load']}", flush=True)
        for c, (st, sec) in res["checks"].items():
            print(f"    {c:12} {st:6} {sec:7.1f} s")
        for f in res["findings"]:
            print(f"    finding: {f}")
        if res["stderr"]:
            print(res["stderr"])
    if a.anchor:
        anc = run_anchor(a.tree, base, d, a.jobs, tuple(a.anchor_dir or ANCHOR))
        out["anchor"] = anc
        print(f"anchor: allmodconfig {anc['config_wall']:.0f} s; make W=1 "
              f"{' '.join(anc['dirs'])}: {anc['wall']:.0f} s (rc {anc['rc']}), "
              f"{anc['objects']} objects, largest process {measure.mib(anc['max_rss'])}, "
              f"O= {anc['disk']}, load {anc['load']}")
        if anc["dirs"] != list(ANCHOR):
            print(f"anchor (net/ drivers/net/, {anc['anchor_objects']} objects) extrapolated "
                  f"at {anc['wall'] / max(anc['objects'], 1):.2f} s an object: "
                  f"{anc['estimate']:.0f} s")
        print(f"ratio anchor / cold: {anc['estimate'] / out['cold']['wall']:.1f}x; "
              f"anchor / warm: {anc['estimate'] / out['warm']['wall']:.1f}x")
    (d / "result.json").write_text(json.dumps(out, indent=1))
    print(f"results: {d / 'result.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
