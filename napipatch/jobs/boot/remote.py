"""A target on real hardware reached over SSH (idpf).

QEMU has no idpf model, so an idpf run needs a host with the NIC (on
Google Cloud: bare-metal C3/X4). ``RemoteJob``: build the kernel and
modules for the target, copy them to the host, boot them (``kexec``, or
``reboot`` after a user-given install command), wait for the host, run the
target's test plan on the idpf interface over SSH, collect TAP and logs.
On any failure after the host was touched it is rebooted into its default
entry and the report says so. The host's kernel log is read (``hostlog``)
from where it stood after the boot to after the plan and scanned for
splats like a guest's console: a splat during the boot or the plan is an
error even when every test passed. ``boot = "none"`` runs the plan on the
running kernel (used by the loopback tests against veth in a network
namespace; on real hardware only kexec/reboot prove the new kernel).

Host settings are git config keys in a subsection named after the target:
``napipatch.idpf.host``, ``.user``, ``.port``, ``.key``, ``.iface``,
``.boot`` (kexec|reboot|none), ``.install`` (for reboot), ``.peer``
(address to ping), ``.addr`` (address to put on the interface), ``.netns``,
``.known-hosts`` (a known_hosts file; default the user's) and
``.insecure-host-key``. napipatch kexecs that host as root, so its host key
is checked: known_hosts with ``StrictHostKeyChecking=accept-new`` (a new
host is recorded on first contact, a changed key refused). Only an
explicit ``insecure-host-key = true`` for the target skips the check.
"""

from __future__ import annotations

import re
import shlex
import shutil
import tarfile
import time
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import ClassVar

from napipatch import fileio, procs
from napipatch.errors import NapipatchError
from napipatch.jobs import targets
from napipatch.jobs.boot import hostlog
from napipatch.jobs.boot import result as bootmod
from napipatch.jobs.boot.console import BEGIN, END
from napipatch.jobs.build.builder import Builder
from napipatch.jobs.executor import HOST, InfraError, JobKind, JobResult
from napipatch.jobs.results import splats as splatmod
from napipatch.jobs.results.verdicts import (
    boot_findings,
    splat_findings,
    tap_counts,
    tap_lines,
)
from napipatch.report.findings import Finding, Severity
from napipatch.report.status import Status

COPY_TIMEOUT = 1800  # seconds scp may take to copy the kernel and modules
HOST_KEYS = ("host", "user", "port", "key", "iface", "boot", "install", "peer", "addr", "netns",
             "known-hosts", "insecure-host-key", "plan-timeout")


@dataclass
class RemoteHost:
    host: str
    iface: str
    user: str = "root"
    port: int = 22
    key: str = ""
    boot: str = "kexec"  # kexec | reboot | none
    install: str = ""  # for boot=reboot: makes the copied kernel the next boot entry
    peer: str = ""
    addr: str = ""
    netns: str = ""
    connect_timeout: int = 10
    up_timeout: int = 600
    plan_timeout: int = 900           # seconds the test plan may run before it counts as hung
    known_hosts: str = ""             # default: the user's ~/.ssh/known_hosts
    insecure_host_key: bool = False   # no host key check at all (explicit, per target)
    extra_ssh: list[str] = field(default_factory=list)

    @classmethod
    def from_config(cls, cfg, target: str) -> "RemoteHost":
        """The host ``napipatch.TARGET.*`` describes (``cfg.section`` types
        the values: jobs never parse configuration themselves)."""
        got = cfg.section(target, {"port": int, "insecure-host-key": bool, "plan-timeout": int})
        vals = {k.replace("-", "_"): v for k, v in got.items() if k in HOST_KEYS}
        if not vals.get("host") or not vals.get("iface"):
            raise NapipatchError(f"napipatch.{target}.host", "no remote host configured for "
                                 f"{target} (set napipatch.{target}.host and .iface)")
        host = cls(**vals)
        if host.boot not in ("kexec", "reboot", "none"):
            raise NapipatchError(f"napipatch.{target}.boot", f"unknown boot method {host.boot!r}")
        return host


def host_key_options(h: RemoteHost) -> list[str]:
    """ssh options checking the host key: known_hosts and accept-new, or,
    only when the target says ``insecure-host-key = true``, no check."""
    if h.insecure_host_key:
        return ["-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null"]
    opts = ["-o", "StrictHostKeyChecking=accept-new"]
    if h.known_hosts:
        opts += ["-o", f"UserKnownHostsFile={Path(h.known_hosts).expanduser()}"]
    return opts


class SshTimeout(procs.ProcessTimeout):
    """A command on the host gave no answer within its deadline (ssh was
    killed); ``output``: what it printed until then."""


class Ssh:
    def __init__(self, h: RemoteHost):
        self.h = h
        self.base = ["-p", str(h.port), "-o", "BatchMode=yes", *host_key_options(h),
                     "-o", "LogLevel=ERROR",
                     "-o", f"ConnectTimeout={h.connect_timeout}"] + h.extra_ssh
        if h.key:
            self.base += ["-i", h.key]
        self.dest = f"{h.user}@{h.host}"

    def run(self, command: str, timeout: float = 600, check: bool = True) -> procs.CompletedProcess:
        try:
            cp = procs.run(["ssh", *self.base, self.dest, command], timeout=timeout,
                           package="openssh-client")
        except procs.ProcessTimeout as exc:
            # ssh was killed; what the command printed so far is kept for
            # the log (a hung plan's last TAP lines say where it hung).
            raise SshTimeout(f"{self.dest}: {command.split()[0]}",
                             f"no answer within {timeout:g} s", exc.output, timeout) from exc
        if cp.returncode == 255:  # ssh's own failure: the host, not the command
            raise InfraError(f"{self.dest}:{self.h.port} unreachable: "
                             f"{(cp.stderr.strip().splitlines() or ['ssh failed'])[-1]}")
        if check and cp.returncode != 0:
            raise NapipatchError(f"{self.dest}: {command.split()[0]}",
                                 (cp.stderr.strip().splitlines() or [f"exit {cp.returncode}"])[-1])
        return cp

    def copy(self, files: list[Path], dest: str) -> None:
        scp = ["scp", "-q", "-P", str(self.h.port)] + [a for a in self.base if a != "-p"
                                                      and a != str(self.h.port)]
        try:
            cp = procs.run([*scp, *map(str, files), f"{self.dest}:{dest}"], timeout=COPY_TIMEOUT,
                           package="openssh-client")
        except procs.ProcessTimeout:
            raise InfraError(f"copy to {self.dest} failed: still running after "
                             f"{COPY_TIMEOUT} s; stopped") from None
        if cp.returncode != 0:
            raise InfraError(f"copy to {self.dest} failed: "
                             f"{(cp.stderr.strip().splitlines() or ['scp failed'])[-1]}")

    def wait(self, up: bool, timeout: float) -> bool:
        t0 = time.monotonic()
        while time.monotonic() - t0 < timeout:
            try:
                self.run("true", timeout=self.h.connect_timeout + 5)
                alive = True
            except (InfraError, SshTimeout):
                alive = False
            if alive == up:
                return True
            time.sleep(2)
        return False


def plan_command(h: RemoteHost, workdir: str) -> str:
    env = f"DEV={shlex.quote(h.iface)} PEER={shlex.quote(h.peer)} ADDR={shlex.quote(h.addr)} REMOTE=1"
    inner = (f"echo {BEGIN}; env {env} sh {workdir}/plan.sh; "
             f"echo \"{END} rc=$?\"")
    if h.netns:
        return f"ip netns exec {shlex.quote(h.netns)} sh -c {shlex.quote(inner)}"
    return f"sh -c {shlex.quote(inner)}"


@dataclass
class RemoteJob:
    """Build for the target, boot it on the remote host, run its test plan."""

    kinds: ClassVar[tuple[JobKind, ...]] = (JobKind(
        "remote", 11, "boots the series tip on each target's real host over SSH and runs "
                      "its plan", per_target=True),)

    repo: Path
    target: str
    commit: str
    patch: int
    cache: Path
    host: dict
    jobs: int = 2
    artifacts: str = ""  # a dir with a kernel image (and modules.tar.gz, vmlinux) already built
    kind: str = "remote"
    base: str | None = None  # the series' base: its decode_stacktrace.sh decodes splats
    at: int = 0  # the patch number of ``commit`` (splat findings name it)

    @contextmanager
    def _built(self, progress):
        """(kernel, modules tarball or None, vmlinux, its source dir, findings),
        the build directory held (its vmlinux decodes the splats) until the end."""
        if self.artifacts:
            d = Path(self.artifacts)
            kernel = d / "bzImage"
            mods = d / "modules.tar.gz"
            if not kernel.is_file():
                raise NapipatchError(kernel, "no kernel image in the artifacts")
            yield kernel, (mods if mods.is_file() else None), d / "vmlinux", self.repo, []
            return
        target = targets.load(self.target)
        with Builder(self.repo, target, self.cache, jobs=self.jobs, progress=progress) as b:
            step = b.step(self.patch, self.commit, "remote")
            if not step.ok:
                yield Path(), None, Path(), Path(), [Finding(
                    check=HOST, severity=Severity.ERROR, patch=self.patch,
                    message=f"not booted on the {self.target} host: {self.commit[:12]} does not build",
                    hint=f"full log: {step.log}", details=step.error_excerpt)]
                return
            obj = b.dirs.obj
            stage = obj.parent / "modules-stage"
            shutil.rmtree(stage, ignore_errors=True)
            procs.run(b.make_cmd("modules_install") + [f"INSTALL_MOD_PATH={stage}"],
                      timeout=None)
            mods = obj.parent / "modules.tar.gz"
            with tarfile.open(mods, "w:gz") as tf:
                if stage.exists():
                    tf.add(stage, arcname=".")
            yield obj / target.image, mods, obj / "vmlinux", b.dirs.src, []

    def run(self, progress) -> JobResult:
        t0 = time.monotonic()
        with self._built(progress) as (kernel, mods, vmlinux, src, findings):
            if findings:
                return JobResult(self.kind, self.target, Status.FAIL, findings, time.monotonic() - t0)
            return self._run(t0, kernel, mods, vmlinux, src, progress)

    def _run(self, t0: float, kernel: Path, mods: Path | None, vmlinux: Path, src: Path,
             progress) -> JobResult:
        h = RemoteHost(**self.host)
        target = targets.load(self.target)
        plan = (target.dir / "plan.sh") if (target.dir / "plan.sh").is_file() else \
            targets.load("virtio-net").boot.plan
        ssh = Ssh(h)
        progress(f"{self.target}: contacting {ssh.dest}:{h.port}")
        try:
            previous = ssh.run("uname -r", timeout=60).stdout.strip()
        except SshTimeout as exc:  # nothing touched yet: the lab, not the series
            raise InfraError(str(exc)) from exc
        workdir = f"/tmp/napipatch-{self.commit[:12]}"
        touched = hung = False
        notes: list[Finding] = []
        data: dict = {"previous-kernel": previous}
        try:
            ssh.run(f"rm -rf {workdir} && mkdir -p {workdir}")
            ssh.copy([kernel, plan] + ([mods] if mods else []), workdir)
            touched = True
            if h.boot != "none":
                self._boot(ssh, h, workdir, previous, mods is not None, progress)
            start, unread = self._log_position(ssh, h.boot != "none")
            running = ssh.run("uname -r").stdout.strip()
            progress(f"{self.target}: running the test plan on {h.iface} ({running})")
            try:
                cp = ssh.run(plan_command(h, workdir), timeout=h.plan_timeout, check=False)
                out, err = cp.stdout, cp.stderr
            except SshTimeout as exc:
                # A hung plan still gives a report (the TAP so far) and the
                # host is still restored below.
                hung, out, err = True, exc.output, f"{exc}\n"
            out = out.replace("\r\n", "\n")
            log = self.cache / "remote-logs" / f"{time.strftime('%Y%m%d-%H%M%S')}-{self.target}.log"
            log.parent.mkdir(parents=True, exist_ok=True)
            fileio.atomic_write(log, out + err)
            tests = bootmod.parse_tap(out)
            m = re.search(END + r" rc=(\d+)", out)
            res = bootmod.BootResult(kernel=kernel, console=out, console_log=log,
                                     seconds=round(time.monotonic() - t0, 1), finished=bool(m),
                                     timed_out=hung, plan_rc=int(m.group(1)) if m else None,
                                     tests=tests)
            findings = [self._recheck(f) for f in boot_findings(self.target, res, self.patch)]
            found, klog, said = self._splats(ssh, h, start, unread, log, vmlinux, src, progress)
            findings += [self._recheck(f) for f in splat_findings(
                self.target, found, self.at, self.commit, None, str(klog))]
            notes += said
            data.update({"splats": splatmod.as_data(found), "kernel-log": str(klog or "")})
            notes.append(Finding(
                check=HOST, severity=Severity.INFO, patch=0,
                message=f"{self.target} host {h.host}: kernel {running} ({h.boot}), "
                        f"{tap_counts(tests)}",
                hint=f"log: {log}", details=tap_lines(tests)))
        except NapipatchError as exc:
            findings = [Finding(check=HOST, severity=Severity.ERROR, patch=self.patch,
                                message=f"{self.target} host {h.host}: {exc}")]
        failed = any(f.severity is Severity.ERROR for f in findings)
        if failed and touched and h.boot != "none":
            notes.append(self._restore(ssh, h, previous, progress))
        # A hung plan leaves the verdict open: over SSH, the kernel under test,
        # the host or the network may be what stopped answering.
        status = Status.TIMEOUT if hung else Status.FAIL if failed else Status.PASS
        return JobResult(self.kind, self.target, status, findings + notes,
                         round(time.monotonic() - t0, 1), data=data)

    def _log_position(self, ssh: Ssh, booted: bool) -> tuple[hostlog.KernelLog | None, str]:
        """Where the host's kernel log stands before the plan: after a boot,
        the new kernel's log from its start (the boot's records), else only
        the position. None and why when it cannot be read."""
        try:
            return hostlog.read(ssh, -1 if booted else hostlog.END), ""
        except (NapipatchError, InfraError) as exc:
            return None, str(exc)

    def _splats(self, ssh: Ssh, h: RemoteHost, start: hostlog.KernelLog | None, unread: str,
                log: Path, vmlinux: Path, src: Path, progress
                ) -> tuple[list[splatmod.Splat], Path | None, list[Finding]]:
        """The splats in the host's kernel log since ``start`` (the boot's
        records, then the plan's: those after ``start.last``), decoded; the
        kernel log file they came from; info when the scan did not run or
        saw only part of the log (never a silent clean)."""
        def info(message: str) -> Finding:
            return Finding(check=HOST, severity=Severity.INFO, patch=0,
                           message=f"{self.target} host {h.host}: {message}")
        try:
            if start is None:
                raise NapipatchError("before the plan", unread)
            after = hostlog.read(ssh, start.last)
        except (NapipatchError, InfraError) as exc:
            return [], None, [info(f"kernel splat scan did not run: the kernel log could not "
                                   f"be read: {exc}")]
        partly = [f"the boot's first {start.first} records were overwritten"] \
            if h.boot != "none" and start.first > 0 else []
        partly += [f"{after.first - start.last - 1} records of the plan were overwritten"] \
            if after.first > start.last + 1 else []
        partly += [f"cut at {hostlog.CAP} bytes"] if start.cut or after.cut else []
        partly += [x for x in (start.early, after.early) if x]
        klog = log.with_suffix(".kernel.log")
        console = f"{start.text}\n{BEGIN}\n{after.text}\n"
        fileio.atomic_write(klog, console)
        found = splatmod.unique(splatmod.scan(console))
        if found:
            progress(f"{self.target}: decoding {len(found)} kernel splat(s)")
            splatmod.decode_trusted(found, self.repo, self.base, self.cache, vmlinux, src)
        said = [info(f"kernel log partly scanned for splats: {'; '.join(partly)}")] \
            if partly else []
        return found, klog, said

    def _recheck(self, f: Finding) -> Finding:
        return replace(f, check=HOST)

    def _boot(self, ssh: Ssh, h: RemoteHost, workdir: str, previous: str, has_mods: bool,
              progress) -> None:
        if has_mods:
            ssh.run(f"tar -xzf {workdir}/modules.tar.gz -C /")
        if h.boot == "kexec":
            ssh.run(f"kexec -l {workdir}/bzImage --reuse-cmdline")
            ssh.run("nohup sh -c 'sleep 1; kexec -e' >/dev/null 2>&1 &", check=False)
        else:
            if h.install:
                ssh.run(h.install.replace("{kernel}", f"{workdir}/bzImage"))
            ssh.run("nohup sh -c 'sleep 1; reboot' >/dev/null 2>&1 &", check=False)
        progress(f"{self.target}: waiting for {h.host} to go down and come back")
        if not ssh.wait(up=False, timeout=120) or not ssh.wait(up=True, timeout=h.up_timeout):
            raise NapipatchError(h.host, f"did not come back within {h.up_timeout} s after {h.boot}")
        now = ssh.run("uname -r").stdout.strip()
        if now == previous:
            raise NapipatchError(h.host, f"still runs {previous} after {h.boot}: the new kernel did not boot")

    def _restore(self, ssh: Ssh, h: RemoteHost, previous: str, progress) -> Finding:
        progress(f"{self.target}: rebooting {h.host} into its default kernel")
        try:
            ssh.run("nohup sh -c 'sleep 1; reboot' >/dev/null 2>&1 &", check=False)
            back = ssh.wait(up=False, timeout=120) and ssh.wait(up=True, timeout=h.up_timeout)
            now = ssh.run("uname -r").stdout.strip() if back else "?"
        except (InfraError, NapipatchError) as exc:
            now, back = f"? ({exc})", False
        ok = back and now == previous
        return Finding(check=HOST, severity=Severity.INFO if ok else Severity.WARNING,
                       patch=0, message=(f"{h.host} restored to its previous kernel {previous}"
                                         if ok else f"{h.host} NOT restored: runs {now}, "
                                         f"expected {previous}"),
                       hint="" if ok else "bring the host back by hand")


def host_dict(h: RemoteHost) -> dict:
    d = asdict(h)
    d.pop("extra_ssh", None)
    return d
