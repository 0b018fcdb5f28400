"""The experiment on real hosts over SSH (idpf): a client and a server host.

Hosts come from the target's git config subsection, as for ``napipatch
test remote``: ``napipatch.idpf.host`` (the client, where latency is
measured), ``.user``, ``.port``, ``.key``, ``.iface`` (the device the
setup lines configure, ``$DEV``), plus for the experiment
``napipatch.idpf.server`` (the server host, reached with the same SSH
settings) and ``napipatch.idpf.server-addr`` (the address the client
sends to on the test network; default: ``.peer``, else ``.server``).

Per mode: the mode's setup runs on both hosts, a napi_rr server for the
mode starts on the server host, the mode's cells run on the client, the
server is stopped. The hosts run the kernel they are running: boot the
tip on them first with ``napipatch test remote`` (kexec); the record
names the client's ``uname -r``.
"""

from __future__ import annotations

import shlex
from dataclasses import replace
from pathlib import Path

from napipatch.bench.experiment import Experiment
from napipatch.bench.plan import parse, script
from napipatch.bench.workload import command, values
from napipatch.errors import NapipatchError
from napipatch.jobs.boot.remote import RemoteHost, Ssh

WORKDIR = "/tmp/napipatch-bench"
BASE_PORT = 54321


def hosts(cfg, target: str) -> tuple[Ssh, Ssh, str, str]:
    client = RemoteHost.from_config(cfg, target)
    server_name = cfg.get(f"napipatch.{target}.server")
    if not server_name:
        raise NapipatchError(f"napipatch.{target}.server", "no server host configured for the "
                             f"experiment (git config napipatch.{target}.server HOST)")
    addr = cfg.get(f"napipatch.{target}.server-addr") or client.peer or server_name
    return Ssh(client), Ssh(replace(client, host=server_name)), addr, client.iface


def _one_mode(exp: Experiment, i: int) -> Experiment:
    return replace(exp, modes=[exp.modes[i]])


def _start_server(ssh: Ssh, exp: Experiment, i: int) -> str:
    mode = exp.modes[i]
    port = BASE_PORT + i
    cmd = command(exp.server, values(exp, mode, None, "0.0.0.0", port, bind="0.0.0.0"),
                  f"{WORKDIR}/napi_rr")
    # Setup for this mode first (its output is not parsed: the client's is).
    setup = script(replace(_one_mode(exp, i), loads=[]), "server", False, "", {mode.name: port},
                   guest_net=False)
    ssh.run(f"cat > {WORKDIR}/setup.sh <<'EOF'\n{setup}EOF\nDEV={shlex.quote(exp.device)} "
            f"sh {WORKDIR}/setup.sh >/dev/null 2>&1; true", timeout=120, check=False)
    ssh.run(f"nohup {cmd} > {WORKDIR}/server-{i}.log 2>&1 & echo $! > {WORKDIR}/server.pid; "
            f"sleep 1; grep -q listening {WORKDIR}/server-{i}.log", timeout=60)
    return f"kill $(cat {WORKDIR}/server.pid) 2>/dev/null; true"


def run_hosts(cfg, exp: Experiment, target: str, binary: Path, progress) -> dict:
    """Every mode x load x repetition between the target's two hosts."""
    client, server, addr, iface = hosts(cfg, target)
    exp = replace(exp, device=iface or exp.device)
    for ssh in (client, server):
        ssh.run(f"rm -rf {WORKDIR} && mkdir -p {WORKDIR}", timeout=60)
        ssh.copy([binary], f"{WORKDIR}/napi_rr")
    cpu = client.run("grep -m1 'model name' /proc/cpuinfo | cut -d: -f2", timeout=60).stdout.strip()
    kernel, cells, notes = None, [], []
    for i, mode in enumerate(exp.modes):
        progress(f"{target}: mode {mode.name} ({i + 1}/{len(exp.modes)}) "
                 f"{client.dest} -> {server.dest}")
        stop = _start_server(server, exp, i)
        try:
            plan = script(_one_mode(exp, i), target, False, addr, {mode.name: BASE_PORT + i},
                          guest_net=False, program=f"{WORKDIR}/napi_rr")
            timeout = 120 + len(exp.loads) * exp.repetitions * (exp.duration + 5)
            cp = client.run(f"cat > {WORKDIR}/plan.sh <<'EOF'\n{plan}EOF\nsh {WORKDIR}/plan.sh",
                            timeout=timeout, check=False)
        finally:
            server.run(stop, timeout=60, check=False)
        k, c, n, done = parse(cp.stdout, _one_mode(exp, i))
        if not done:
            raise NapipatchError(f"{client.dest}", f"the plan for mode {mode.name} did not finish: "
                                 f"{(cp.stderr.strip().splitlines() or ['no output'])[-1]}")
        kernel = kernel or k
        cells += c
        notes += [x for x in n if x not in notes]
    return {"kernel": kernel, "cells": cells, "notes": notes, "emulated": False, "accel": "none",
            "host_cpu": cpu}
