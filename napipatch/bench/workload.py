"""The workload: napi_rr, a small UDP request/response latency program.

The guest is a busybox initramfs with nothing else in it, and Debian has
no packaged request/response tool that is static, so napipatch builds
napi_rr.c (next to this module) with ``gcc -static -O2 -pthread`` once
per source change and packs it into the initramfs; on idpf hosts the same
binary is copied over SSH. The experiment's workload templates name it as
``napi_rr``; :func:`command` fills a template and points that word at
wherever the binary is.
"""

from __future__ import annotations

import hashlib
import shlex
import shutil
import socket
import subprocess
import time
from importlib import resources
from pathlib import Path

from napipatch import fileio, procs
from napipatch.bench.experiment import Experiment, Load, Mode
from napipatch.errors import NapipatchError

PROGRAM = "napi_rr"


def source() -> bytes:
    return resources.files("napipatch.bench").joinpath("napi_rr.c").read_bytes()


def build(cache: Path) -> Path:
    """The static napi_rr binary (cached under <cache>/bench by source hash)."""
    src = source()
    out = cache / "bench" / f"{PROGRAM}-{hashlib.sha256(src).hexdigest()[:12]}"
    if out.is_file():
        return out
    if not shutil.which("gcc"):
        raise NapipatchError("gcc", "not installed (apt-get install gcc libc6-dev)")
    out.parent.mkdir(parents=True, exist_ok=True)
    c = fileio.atomic_write(out.with_suffix(".c"), src)
    # gcc writes a name of this process's own, renamed over ``out`` once built.
    with fileio.replacing(out, mode=0o755) as tmp:
        cp = procs.run(["gcc", "-static", "-O2", "-pthread", "-o", str(tmp), str(c)],
                       timeout=None, package="gcc")
        if cp.returncode != 0:
            err = (cp.stderr.strip().splitlines() or ["gcc failed"])[-1]
            raise NapipatchError(f"gcc -static {c.name}",
                                 f"{err} (static glibc: apt-get install libc6-dev)")
    return out


def values(exp: Experiment, mode: Mode, load: Load | None, server: str, port: int,
           bind: str = "127.0.0.1") -> dict[str, str]:
    """What the workload templates' placeholders stand for in one cell."""
    return {"server": server, "port": str(port), "bind": bind,
            "rate": str(load.rate) if load else "0", "delay": str(load.delay) if load else "0",
            "duration": str(exp.duration), "dev": exp.device,
            "percentiles": ",".join(f"{p:g}" for p in exp.percentiles),
            "client_args": mode.client_args, "server_args": mode.server_args}


def command(template: str, vals: dict[str, str], program: str = PROGRAM) -> str:
    """The template filled in, with the word ``napi_rr`` pointing at ``program``."""
    words = shlex.split(template.format(**vals))
    return " ".join(shlex.quote(program) if w == PROGRAM else shlex.quote(w) for w in words)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class HostServers:
    """One napi_rr server per mode on this host (the guest's peer through
    QEMU user networking), each with its mode's server arguments."""

    def __init__(self, exp: Experiment, binary: Path):
        self.exp, self.binary = exp, binary
        self.ports: dict[str, int] = {}
        self.procs: list[subprocess.Popen] = []

    # Not napipatch.procs: a server runs beside the experiment and is read
    # line by line while it does (its first line says it listens); procs
    # runs a tool to its end.
    def __enter__(self) -> "HostServers":
        for mode in self.exp.modes:
            port = free_port()
            cmd = command(self.exp.server, values(self.exp, mode, None, "127.0.0.1", port),
                          str(self.binary))
            p = subprocess.Popen(shlex.split(cmd), stdin=subprocess.DEVNULL,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            self.procs.append(p)
            line = p.stdout.readline() if p.stdout else ""
            if not line.startswith(f"{PROGRAM} listening"):
                self.__exit__()
                err = (p.stderr.read() if p.stderr and p.poll() is not None else "").strip()
                raise NapipatchError(f"workload.server ({cmd})",
                                     f"did not start: {err or line.strip() or 'no output'}")
            self.ports[mode.name] = int(line.split()[-1])
        return self

    def __exit__(self, *exc) -> None:
        for p in self.procs:
            if p.poll() is None:
                p.terminate()
        deadline = time.monotonic() + 5
        for p in self.procs:
            try:
                p.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
