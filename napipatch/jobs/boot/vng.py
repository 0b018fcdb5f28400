"""Booting a built kernel with virtme-ng (``vng``): the guest sees the host's
root filesystem read-only over 9p, so it has python3, iproute2 and udev,
and runs the target's test plan and the kernel's selftests in one boot.

The guest script prints the plan's TAP between the initramfs markers (so
``result.parse_tap`` reads it as before) and each selftest's KTAP between
``SELFTEST_BEGIN``/``SELFTEST_END`` markers. KVM is used only where a short
probe shows a KVM guest boots on this host (a KVM guest hung on the machines
this was written on); otherwise QEMU runs under TCG (``--disable-kvm``).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import sys
import time
from pathlib import Path

from virtme_ng.version import get_package_version

from napipatch import fileio, procs
from napipatch.errors import NapipatchError
from napipatch.jobs.boot.console import (
    BEGIN,
    DONE,
    END,
    NETSTATE,
    SELFTEST_BEGIN,
    SELFTEST_END,
    SELFTEST_RETRY,
)
from napipatch.jobs.boot.result import BootResult, parse_tap, require_bootable
from napipatch.jobs.results import netstate, splats
from napipatch.jobs.results.selftests import ROOT, ProgramRun, Selftest
from napipatch.jobs.targets import Target

# A kernel without ACPI cannot power off: it halts and QEMU stays up, so the
# host ends the guest once the script is done.
_ENDED = (DONE, "reboot: Power off not available", "reboot: System halted")
PROBE_TIMEOUT = 60  # seconds a KVM guest gets to run `true` before KVM is judged broken


def vng_path() -> str:
    """``vng`` next to this Python (the venv), else on PATH."""
    here = Path(sys.executable).parent / "vng"
    found = str(here) if here.is_file() else shutil.which("vng")
    if not found:
        raise NapipatchError("vng", "not installed (pip install virtme-ng)")
    return found


def command(kernel: Path, target: Target, script: Path, accel: str) -> list[str]:
    assert target.boot is not None
    b = target.boot
    # --rodir: the script and the exported tree stay visible even where the
    # guest mounts its own tmpfs over the host path (/tmp).
    cmd = [vng_path(), "--run", str(kernel), "--force-9p", "--disable-microvm", "--verbose",
           f"--rodir={script.parent.parent}",
           "--memory", f"{b.memory}M" if b.memory.isdigit() else b.memory, "--cpus", b.cpus,
           # root=: the 9p root's tag (a kernel without CONFIG_BLOCK mounts a
           # nodev root only by name); net.ifnames=0: the host's udevd in the
           # guest keeps the NIC's name eth0
           "--cwd", "/", "--append", f"{b.append} root=/dev/root net.ifnames=0"]
    if b.network:
        cmd += ["--network", b.network, "--no-dhcp"]
    if accel != "kvm":
        cmd.append("--disable-kvm")
    return cmd + ["--exec", f"sh {shlex.quote(str(script))}"]


def guest_script(plan: Path | None, ksrc: Path, tests: list[Selftest],
                 snap: Path | None = None) -> str:
    """The guest's payload: the plan, then each selftest under its timeout,
    the way kselftest's runner runs it (in its dir, ``timeout`` around it).
    A selftest that fails (any status but 0 and KSFT_SKIP) runs once more
    right away in the same guest, as NIPA retries it (a second boot would
    cost a minute under TCG; the retry costs the test's own time). With
    ``snap`` (netsnap.py), a netdev snapshot is printed before the first
    selftest and after each run: the host compares each run's neighbours."""
    q = shlex.quote
    lines = ["#!/bin/sh", "# napipatch: test plan and kernel selftests in a vng guest",
             "export PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1",
             f"export KSRC={q(str(ksrc))}",
             f"export YNL={q(str(ksrc / 'tools/net/ynl/cli.py'))}",
             f"export YNL_SPECS={q(str(ksrc / 'Documentation/netlink/specs'))}",
             "cd /tmp",
             splats.console_setup(),  # before the plan: splats on the console
             # the plan's NIC is eth0, whatever the host's udev rules named it
             "udevadm settle -t 10 2>/dev/null",
             "for n in /sys/class/net/*; do",
             '  case "$(readlink "$n/device/driver" 2>/dev/null)" in',
             '  *virtio_net) [ "${n##*/}" = eth0 ] || ip link set "${n##*/}" name eth0; break;;',
             "  esac",
             "done"]
    if plan is not None:
        lines += [f"echo {BEGIN}", f"sh {q(str(plan))}",
                  f'echo "{END} rc=$?"', splats.kmemleak_scan()]
    snapshot = f"python3 {q(str(snap))} {NETSTATE} 2>/dev/null" if snap and tests else ":"
    if tests:
        lines.append(writable(ksrc))
    lines.append(snapshot)
    for t in tests:
        run = f"timeout -k 10 {t.timeout} ./{q(t.prog)} 2>&1"
        lines += [f"echo {SELFTEST_BEGIN} {q(t.name)}",
                  f"cd {q(str(ksrc / ROOT / t.dir))}",
                  run, "rc=$?",
                  f'echo "{SELFTEST_END} {t.name} rc=$rc"',
                  # before the next marker: its leaks are this test's
                  splats.kmemleak_scan(), snapshot,
                  'case $rc in 0|4) ;; *)',
                  f"  echo {SELFTEST_RETRY} {q(t.name)}", f"  {run}",
                  f'  echo "{SELFTEST_END} {t.name} rc=$?"', f"  {splats.kmemleak_scan()}",
                  f"  {snapshot};;", "esac"]
    # Restart the guest's kernel (QEMU runs with -no-reboot, so it exits): a
    # kernel without ACPI only halts at power-off, and a host watcher killed
    # mid-run (kill -9 of a worker) would leave that QEMU up for good.
    lines += ["sync", f"echo {DONE}", "sleep 1",
              "python3 -c 'import ctypes; ctypes.CDLL(None).reboot(0x01234567)' 2>/dev/null",
              "exit 0"]
    return "\n".join(lines) + "\n"


def writable(ksrc: Path) -> str:
    """A guest shell line: the exported tree made writable in the guest (an
    overlay on a tmpfs; the host's copy is untouched), as the netdev CI's
    tree is (it runs make in it): a test may write beside itself (a state
    file, a capture). Where the overlay cannot be mounted the tree stays
    read-only and the tests run as before."""
    q, ov = shlex.quote(str(ksrc)), "/run/napipatch-ksrc"
    return (f"mkdir -p {ov} && mount -t tmpfs napipatch-ksrc {ov} && mkdir {ov}/u {ov}/w && "
            f"mount -t overlay napipatch-ksrc -o lowerdir={q},upperdir={ov}/u,workdir={ov}/w "
            f"{q} 2>/dev/null || echo 'napipatch: the selftests stay read-only in this guest'")


def _boot_id() -> str:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return "unknown"


def accel(kernel: Path, target: Target, workdir: Path, cache: Path, progress) -> str:
    """``kvm`` where a KVM guest boots within PROBE_TIMEOUT s, else ``tcg``.
    $NAPIPATCH_ACCEL forces one; a probe's verdict is kept per host boot."""
    forced = os.environ.get("NAPIPATCH_ACCEL", "").strip().lower()
    if forced in ("kvm", "tcg"):
        return forced
    if not os.access("/dev/kvm", os.R_OK | os.W_OK):
        return "tcg"
    memo = Path(cache) / "kvm-probe.json"
    try:
        seen = json.loads(memo.read_text())
        if seen.get("boot_id") == _boot_id():
            return seen["accel"]
    except (OSError, ValueError, KeyError):
        pass
    progress(f"probing KVM (a guest that hangs is cut after {PROBE_TIMEOUT} s)")
    script = workdir / "probe.sh"
    script.write_text(f"#!/bin/sh\necho napipatch-kvm-ok\necho {DONE}\n")
    cmd = [c for c in command(kernel, target, script, "kvm") if c != "--verbose"]
    out, timed_out, _ = run(cmd, PROBE_TIMEOUT, workdir / "logs" / "kvm-probe.log")
    verdict = "kvm" if not timed_out and "napipatch-kvm-ok" in out else "tcg"
    memo.parent.mkdir(parents=True, exist_ok=True)
    # Shared by the build directories of every target: written whole.
    fileio.atomic_write(memo, json.dumps({"boot_id": _boot_id(), "accel": verdict}))
    return verdict


def run(cmd: list[str], timeout: float, logf: Path, progress=None, what: str = "guest",
        stamps: dict[str, float] | None = None) -> tuple[str, bool, float]:
    """Run ``cmd`` (vng) with its stdout (the script) and stderr (the kernel
    console) merged line by line into ``logf``; kill it after ``timeout``.
    ``stamps`` gets when the first selftest began and the last one ended."""
    stamps = {} if stamps is None else stamps
    logf.parent.mkdir(parents=True, exist_ok=True)
    lines: list[str] = []
    t0 = time.monotonic()

    def took(line: str) -> None:
        if line.startswith(_ENDED):
            stamps.setdefault("done", time.monotonic())
        if line.startswith(SELFTEST_BEGIN):
            stamps.setdefault("start", time.monotonic())
        elif line.startswith(SELFTEST_END):
            stamps["end"] = time.monotonic()
        lines.append(line)

    def tick(seconds: float) -> bool:
        if time.monotonic() - stamps.get("done", 1e18) > 3:
            return True  # the guest's script is over: it halts, QEMU would not exit
        if progress:
            progress(f"{what}: {seconds:.0f} s, {lines[-1][:100] if lines else 'starting'}")
        return False

    timed_out = False
    with open(logf, "w", buffering=1) as lf:
        # which virtme-ng booted it: its guest init and options vary by version
        lf.write(f"# virtme-ng {get_package_version()}\n$ " + shlex.join(cmd) + "\n")
        # vng runs virtme-run from PATH: the one installed beside it
        env = dict(os.environ, PATH=f"{Path(cmd[0]).parent}{os.pathsep}{os.environ.get('PATH', '')}")
        # vng runs QEMU as a child: in a session of its own, ended whole
        try:
            procs.run(cmd, timeout=timeout, name="vng", env=env, log=lf, on_line=took,
                      newline="\n", tick=tick, session=True)
        except procs.ProcessTimeout:
            timed_out = True
            lf.write(f"# napipatch: killed after {timeout:.0f} s\n")
    return "\n".join(lines) + "\n", timed_out, round(time.monotonic() - t0, 1)


def split_runs(console: str, tests: list[Selftest]) -> tuple[list[ProgramRun], list[str]]:
    """Each selftest's output between its markers (a retry attached to its
    first run), each run's netdev snapshots before and after it; and the
    tests never started."""
    runs: list[ProgramRun] = []
    cur: ProgramRun | None = None
    ended: ProgramRun | None = None  # the last run, waiting for its "after" snapshot
    state: dict | None = None  # the last snapshot seen
    for line in console.splitlines():
        if line.startswith((SELFTEST_BEGIN + " ", SELFTEST_RETRY + " ")):
            name = line.split(" ", 1)[1].strip()
            cur = ProgramRun(name, None, before=state)
            if line.startswith(SELFTEST_RETRY) and runs and runs[-1].test == name:
                runs[-1].retry = cur
            else:
                runs.append(cur)
            ended = None
        elif line.startswith(SELFTEST_END + " ") and cur is not None:
            m = re.search(r" rc=(\d+)", line)
            cur.rc = int(m.group(1)) if m else None
            cur, ended = None, cur
        elif line.startswith(NETSTATE + " ") and cur is None:
            state = netstate.parse(line, NETSTATE)
            if ended is not None:
                ended.after, ended = state, None
        elif cur is not None:
            cur.output.append(line)
    started = {r.test for r in runs}
    return runs, [t.name for t in tests if t.name not in started]


def boot(kernel: Path, target: Target, workdir: Path, probe_dir: Path, ksrc: Path,
         tests: list[Selftest], timeout: float | None = None, plan: bool = True,
         progress=None) -> BootResult:
    """One vng boot of ``kernel``: the plan (unless ``plan`` is false), then
    ``tests`` from ``ksrc``. A guest past the timeout is killed; the plan
    gets the target's timeout and each selftest its own, unless ``timeout``.
    ``probe_dir`` keeps the KVM probe's verdict (shared by every target)."""
    require_bootable(kernel, target)
    guest = workdir / "guest"
    guest.mkdir(parents=True, exist_ok=True)
    a = accel(kernel, target, guest, probe_dir, progress or (lambda _m: None))
    plan_copy = None
    if plan:
        plan_copy = guest / "plan.sh"
        shutil.copy(target.boot.plan, plan_copy)
    script = guest / f"run-{ksrc.name[:12]}{'' if plan else '-selftests'}.sh"
    snap = guest / "netsnap.py"
    shutil.copy(Path(__file__).with_name("netsnap.py"), snap)
    script.write_text(guest_script(plan_copy, ksrc, tests, snap))
    # each test may run twice (the retry), with a snapshot after each run
    total = timeout or target.boot.timeout + sum(2 * t.timeout + 60 for t in tests)
    logf = workdir / "logs" / f"{time.strftime('%Y%m%d-%H%M%S')}-vng.console.log"
    stamps: dict[str, float] = {}
    console, timed_out, secs = run(command(kernel, target, script, a), total, logf, progress,
                                   what=f"vng guest ({a})", stamps=stamps)
    if "start" in stamps:
        stamps.setdefault("end", stamps["start"])
    m = re.search(END + r" rc=(\d+)", console)
    runs, not_run = split_runs(console, tests)
    return BootResult(kernel=kernel, console=console, console_log=logf, seconds=secs,
                      finished=bool(m) if plan else not timed_out, timed_out=timed_out,
                      plan_rc=int(m.group(1)) if m else None, tests=parse_tap(console),
                      backend="vng", accel=a, runs=runs, not_run=not_run,
                      selftest_seconds=round(stamps["end"] - stamps["start"], 1)
                      if "start" in stamps else None)
