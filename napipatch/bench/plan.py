"""The experiment as one shell script, and its output read back.

The script runs as root where the client side runs (the QEMU guest's
/init payload, or a shell on the idpf client host): it brings the device
up, then for every mode runs the common setup and the mode's setup lines
and, for every load point and repetition, the client command. Everything
it reports is a line starting with ``NAPIPATCH-BENCH`` on stdout (the
guest's serial console), so boot noise never mixes in.

Setup lines run with ``DEV`` (the device), ``TARGET`` and ``EMULATED``
(1 in a TCG guest, empty on real hardware) in the environment. A failing
line is reported and the run goes on (the guest lacks ethtool and chrt
is pointless on one vCPU); lines starting with ``-`` may fail silently.
"""

from __future__ import annotations

import re
import shlex

from napipatch.bench.experiment import Experiment, pct_key
from napipatch.bench.workload import command, values

TAG = "NAPIPATCH-BENCH"

_PRELUDE = """#!/bin/sh
# napipatch bench: generated from {path}
export DEV={dev} TARGET={target} EMULATED={emulated}
setup_line() {{  # mode, optional, command
	out=$(sh -c "$3" 2>&1) && return 0
	[ "$2" = 1 ] && return 0
	echo "{tag} setup-failed mode=$1 :: $3 :: $(echo "$out" | tail -n 1)"
}}
cell() {{  # mode, load index, rep, command
	out=$(sh -c "$4" 2>/tmp/napi_rr.err); rc=$?
	case "$out" in *"napi_rr sent="*)
		echo "{tag} cell mode=$1 load=$2 rep=$3 ${{out#*napi_rr }}" ;;
	*)	echo "{tag} cell-failed mode=$1 load=$2 rep=$3 rc=$rc :: $(tail -n 1 /tmp/napi_rr.err)" ;;
	esac
}}
echo "{tag} kernel $(uname -r)"
"""

# In the guest: no DHCP, QEMU user networking's fixed addresses.
GUEST_NET = """ip link set lo up
ip link set $DEV up
ip addr add 10.0.2.15/24 dev $DEV 2>/dev/null
i=0; while [ $i -lt 50 ] && [ "$(cat /sys/class/net/$DEV/operstate)" != up ]; do sleep 0.1; i=$((i+1)); done
echo "{tag} link $(cat /sys/class/net/$DEV/operstate)"
"""


def _setup(mode: str, line: str) -> str:
    optional = line.startswith("-")
    return f"setup_line {shlex.quote(mode)} {int(optional)} {shlex.quote(line.lstrip('-').strip())}"


def script(exp: Experiment, target: str, emulated: bool, server: str,
           ports: dict[str, int], guest_net: bool = True, program: str = "napi_rr") -> str:
    """The whole matrix as a shell script (``ports``: the server port per mode)."""
    out = [_PRELUDE.format(path=exp.path.name, dev=shlex.quote(exp.device),
                           target=shlex.quote(target), emulated="1" if emulated else "",
                           tag=TAG)]
    if guest_net:
        out.append(GUEST_NET.format(tag=TAG))
    for mode in exp.modes:
        out.append(f"echo '{TAG} mode {mode.name}'")
        out += [_setup(mode.name, ln) for ln in exp.setup + mode.setup]
        for li, load in enumerate(exp.loads):
            cmd = command(exp.client, values(exp, mode, load, server, ports[mode.name]), program)
            for rep in range(1, exp.repetitions + 1):
                out.append(f"cell {shlex.quote(mode.name)} {li} {rep} {shlex.quote(cmd)}")
    out.append(f"echo '{TAG} done'")
    return "\n".join(out) + "\n"


_KV = re.compile(r"(\w[\w.]*)=(\S+)")


def parse(output: str, exp: Experiment) -> tuple[str | None, list[dict], list[str], bool]:
    """(guest kernel, cells, notes, finished) from the script's output."""
    kernel, cells, notes, done = None, [], [], False
    keys = [pct_key(p) for p in exp.percentiles]
    for line in output.splitlines():
        i = line.find(TAG + " ")
        if i < 0:
            continue
        word, _, rest = line[i + len(TAG) + 1:].rstrip("\r").partition(" ")
        if word == "kernel":
            kernel = rest.strip()
        elif word == "done":
            done = True
        elif word == "cell":
            kv = dict(_KV.findall(rest))
            cell = {"mode": kv.get("mode"), "load": exp.loads[int(kv["load"])].name,
                    "rep": int(kv["rep"])}
            cell.update({k: int(kv[k]) if kv.get(k, "").isdigit() else None for k in keys})
            cell["samples"] = int(kv.get("samples", 0))
            cell["sent"] = int(kv.get("sent", 0))
            cell["clock"] = kv.get("clock", "monotonic")  # tsc where the kernel's clock is coarse
            if not cell["samples"]:
                cell.update({k: None for k in keys})
            cells.append(cell)
        elif word in ("setup-failed", "cell-failed"):
            note = f"{word}: {rest.strip()}"
            if note not in notes:
                notes.append(note)
    return kernel, cells, notes, done
