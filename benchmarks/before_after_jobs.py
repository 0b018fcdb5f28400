"""Benchmark (run by hand, as root): every job check's fixtures at an older commit vs this checkout.

    .venv/bin/python benchmarks/before_after_jobs.py [--rev 9aaef08] [--after HEAD]
        [--tree ~/.cache/napipatch/linux-6.12] [--build-dir ~/.cache/napipatch/build]
        [--only build,kunit] [--no-remote] [--json FILE] [--keep DIR]

The job half of before_after.py (which compares `napipatch check` on
series): each job check's good and bad fixture (tests/fixtures/checks/ID/)
goes through the command a user runs for it, as
tests/test_checks_fixtures.py runs it: `napipatch test build|boot|kunit MBOX
--tree T [--target virtio-net]`, `napipatch test remote MBOX --target idpf`
on a loopback sshd whose interface is a veth in a network namespace (root;
--no-remote leaves it out), and `napipatch check MBOX --only IDS` for the
build warnings and the tools builds; one run serves every job check whose
fixture that mbox is. Targets are the tests' (tests/fixtures/targets:
the lean idpf for both sides, and each side's own shipped virtio-net).

Both versions build in the same build directory (one build per target and
configuration, as a user has it), each with its own cache; what the job
directories keep per commit (``*/results``, ``cocci/*``, ``ynl/*``) is
removed before each side's runs, so each side judges every run itself.
Printed per run: the exit status, findings and check statuses of each side
and what differs. The one difference issue 46 expects is the remote check's
findings' id (the target's name ``idpf`` before, ``remote`` after), shown
and then compared as ``remote``.
"""
from __future__ import annotations

import json
import os
import platform
import shutil
import subprocess
import sys
import time
import uuid
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from before_after import ROOT, arguments, compare, worktrees  # noqa: E402

from napipatch.engine.registry import discover  # noqa: E402
from napipatch.jobs.kinds import KINDS  # noqa: E402

FIX = ROOT / "tests" / "fixtures" / "checks"
TARGETS = ROOT / "tests" / "fixtures" / "targets"
TEST = {"build": (("test", "build"), ("--target", "virtio-net")),
        "boot": (("test", "boot"), ("--target", "virtio-net")),
        "remote": (("test", "remote"), ("--target", "idpf")),
        "kunit": (("test", "kunit"), ())}
KEPT = ("results", "cocci", "ynl")  # per-commit results the job directories keep


def runs() -> dict[tuple, list[str]]:
    """(command, fixture path) -> the job checks whose fixture it is (same mbox bytes, one run)."""
    checks = discover()
    warning_jobs = {name for name, (kind, _cls) in KINDS.items() if kind.warnings}
    jobs = sorted((i for i, c in checks.items() if c.is_job),
                  key=lambda i: (KINDS[checks[i].job][0].order, i))
    out: dict[tuple, list[str]] = {}
    first: dict[tuple, Path] = {}
    for cid in jobs:
        job = checks[cid].job
        command = (("check",), ()) if job in warning_jobs else TEST[job]
        for name in ("good.mbox", "bad.mbox"):
            mbox = FIX / cid / name
            key = first.setdefault((command, mbox.read_bytes()), mbox)
            out.setdefault((command, key), [])
            if cid not in out[(command, key)]:
                out[(command, key)].append(cid)
    return out


def clear_kept(build_dir: Path) -> list[Path]:
    gone = []
    for tree in build_dir.iterdir() if build_dir.is_dir() else ():
        gone += [tree / k for k in KEPT[1:] if (tree / k).is_dir()]
        gone += [p for p in tree.glob("*/results") if p.is_dir()]
        gone += [p for p in tree.glob("*/*/results") if p.is_dir()]
    for p in gone:
        shutil.rmtree(p)
    return gone


@contextmanager
def loopback_host(work: Path):
    """A git config giving target idpf a loopback sshd whose v0 is a veth in a namespace."""
    d = work / "sshd"
    d.mkdir()
    for k in ("host", "user"):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(d / k)], check=True)
    shutil.copy(d / "user.pub", d / "authorized_keys")
    os.chmod(d / "authorized_keys", 0o600)
    Path("/run/sshd").mkdir(exist_ok=True)
    port = 20000 + os.getpid() % 20000
    (d / "config").write_text(
        f"Port {port}\nListenAddress 127.0.0.1\nHostKey {d / 'host'}\n"
        f"AuthorizedKeysFile {d / 'authorized_keys'}\nPermitRootLogin prohibit-password\n"
        f"StrictModes no\nUsePAM no\nPidFile {d / 'pid'}\nPasswordAuthentication no\n"
        "Subsystem sftp /usr/lib/openssh/sftp-server\n")  # scp speaks sftp
    tag = uuid.uuid4().hex[:6]
    a, b = f"np-a-{tag}", f"np-b-{tag}"
    subprocess.run(["sh", "-ec", (f"ip netns add {a}; ip netns add {b}\n"
                    f"ip -n {a} link add v0 type veth peer name v1 netns {b}\n"
                    f"ip netns exec {a} ethtool -K v0 gro on\n"
                    f"ip -n {b} addr add 10.99.0.2/24 dev v1\n"
                    f"ip -n {a} link set lo up; ip -n {b} link set lo up; "
                    f"ip -n {b} link set v1 up")], check=True)
    with open(d / "log", "w") as log:
        sshd = subprocess.Popen([shutil.which("sshd") or "/usr/sbin/sshd", "-D", "-e", "-f",
                                 str(d / "config")], stderr=log)
    try:
        time.sleep(1)
        host = {"host": "127.0.0.1", "port": port, "key": d / "user", "iface": "v0",
                "boot": "none", "peer": "10.99.0.2", "addr": "10.99.0.1/24", "netns": a,
                "known-hosts": d / "known_hosts"}
        cfg = d / "gitconfig"
        cfg.write_text('[napipatch "idpf"]\n' + "".join(f"\t{k} = {v}\n" for k, v in host.items()))
        yield cfg
    finally:
        sshd.kill()
        sshd.wait()
        subprocess.run(["sh", "-c", f"ip netns del {a}; ip netns del {b}"], check=False)


def side_targets(src: Path, work: Path, side: str) -> Path:
    """The tests' targets as ``src`` knows them: a shipped target (a link in
    tests/fixtures/targets) is ``src``'s own shipped one, whose keys that
    version reads; the tests' own (idpf) is this checkout's, the same for both."""
    d = work / f"targets-{side}"
    if not d.exists():
        d.mkdir()
        for t in TARGETS.iterdir():
            (d / t.name).symlink_to(src / "targets" / t.name if t.is_symlink() else t.resolve())
    return d


def run(src: Path, command: tuple, mbox: Path, ids: list[str], a, work: Path, side: str,
        gitconfig: Path | None) -> dict:
    before, after = command
    env = dict(os.environ, PYTHONPATH=str(src), XDG_CACHE_HOME=str(work / f"cache-{side}"),
               NAPIPATCH_SERIES_DIR=str(work / f"series-{side}"), COLUMNS="200",
               NAPIPATCH_BUILD_DIR=str(a.build_dir),
               NAPIPATCH_TARGETS_DIR=str(side_targets(src, work, side)))
    if gitconfig:
        env["GIT_CONFIG_GLOBAL"] = str(gitconfig)
    t0 = time.monotonic()
    cp = subprocess.run([sys.executable, "-m", "napipatch", *before, str(mbox), "--tree",
                         str(a.tree), *after, "--only", ",".join(ids), "--format", "json"],
                        cwd=src, env=env, capture_output=True, text=True, check=False)
    try:
        if cp.returncode not in (0, 1):
            raise ValueError(f"exit {cp.returncode}")
        rep = json.loads(cp.stdout)
    except ValueError:  # an error, or a version that printed no report
        return {"rc": cp.returncode, "error": cp.stderr.strip()[-800:], "findings": [],
                "checks": [], "seconds": time.monotonic() - t0}
    rep.update(rc=cp.returncode, seconds=time.monotonic() - t0)
    return rep


def as_remote(rep: dict) -> dict:
    """The report with the remote check's findings (``idpf`` before issue 46) named ``remote``."""
    out = dict(rep)
    out["findings"] = [dict(f, check="remote") if f.get("check") == "idpf" else f
                       for f in rep["findings"]]
    return out


def main() -> int:
    ap = arguments(__doc__)
    ap.add_argument("--build-dir", type=Path, default=Path.home() / ".cache/napipatch/build")
    ap.add_argument("--only", help="comma-separated job checks (default: all)")
    ap.add_argument("--no-remote", action="store_true")
    a = ap.parse_args()
    todo = {k: ids for k, ids in runs().items()
            if (not a.only or set(ids) & set(a.only.split(",")))
            and not (a.no_remote and "remote" in ids)}
    res: list[dict] = []
    with worktrees(a, "napipatch-before-after-jobs-") as (rev, head, work, sides):
        with loopback_host(work) if any("remote" in ids for ids in todo.values()) \
                else _none() as gitconfig:
            reps: dict[str, dict] = {}
            for side in sides:
                for p in clear_kept(a.build_dir):
                    print(f"{side}: removed {p}", file=sys.stderr)
                for (command, mbox), ids in todo.items():
                    what = f"{' '.join(command[0])} {mbox.relative_to(ROOT)} --only {','.join(ids)}"
                    print(f"{side}: {what}", file=sys.stderr, flush=True)
                    reps[f"{side} {what}"] = run(sides[side], command, mbox, ids, a, work, side,
                                                 gitconfig if "remote" in ids else None)
            for (command, mbox), ids in todo.items():
                what = f"{' '.join(command[0])} {mbox.relative_to(ROOT)} --only {','.join(ids)}"
                b, f = reps[f"before {what}"], reps[f"after {what}"]
                renamed = sum(x.get("check") == "idpf" for x in b["findings"])
                res.append({"run": what, "rc": (b["rc"], f["rc"]),
                            "findings": (len(b["findings"]), len(f["findings"])),
                            "statuses": sorted(f"{c['id']}={c['status']}" for c in f["checks"]),
                            "seconds": (round(b["seconds"]), round(f["seconds"])),
                            "renamed": renamed, "errors": (b.get("error"), f.get("error")),
                            "diff": compare(as_remote(b), f) + (
                                [f"  exit status: before {b['rc']}, after {f['rc']}"]
                                if b["rc"] != f["rc"] else [])})
    print(f"napipatch {rev} (before) vs {head} (after); "
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {platform.node()}, "
          f"{os.cpu_count()} cores; one run a side, build directory {a.build_dir}\n")
    print("| run | exit before / after | findings before / after | statuses (after) | "
          "ids renamed idpf -> remote | seconds before / after | differences |")
    print("|---|---|---|---|---|---|---|")
    for r in res:
        print(f"| `{r['run']}` | {r['rc'][0]} / {r['rc'][1]} | {r['findings'][0]} / "
              f"{r['findings'][1]} | {', '.join(r['statuses'])} | {r['renamed']} | "
              f"{r['seconds'][0]} / {r['seconds'][1]} | {len(r['diff'])} |")
    for r in res:
        if r["diff"] or any(r["errors"]):
            print(f"\n{r['run']}:\n" + "\n".join(r["diff"] + [f"  error: {e}" for e in r["errors"] if e]))
    if a.json:
        a.json.write_text(json.dumps(res, indent=1))
    return 0


@contextmanager
def _none():
    yield None


if __name__ == "__main__":
    sys.exit(main())
