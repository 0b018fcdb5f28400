"""Guest side of the leak check: one snapshot of the guest's netdev state,
printed as one console line ``<marker> <json>`` for the host to compare
(``napipatch.jobs.results.netstate``).

Runs inside the guest with the host's python3 (copied beside the guest
script, run as ``python3 netsnap.py MARKER``): standard library only, no
napipatch imports. What it records, after NIPA's ``contest/scripts/env_check.py``:
the interfaces (``ip -j -d link``), the network namespaces, for each
interface its channels, rings and features (``ethtool``) and its NAPI
settings in sysfs (``threaded``, ``gro_flush_timeout``,
``napi_defer_hard_irqs``: NIPA sees threaded through napi-get's ``pid``),
the page pools (the tree's YNL CLI, ``$YNL``), and the net sysctls outside
the per-interface directories (``net.core.busy_read``). Nothing is
filtered here: the host drops the noise.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import time


def _out(cmd: list[str]) -> str | None:
    try:
        cp = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return cp.stdout if cp.returncode == 0 else None


def _json(cmd: list[str]):
    text = _out(cmd)
    try:
        return json.loads(text) if text else None
    except ValueError:
        return None


def _current(text: str | None) -> dict | None:
    """``ethtool -l``/``-g`` text: the "Current hardware settings" values
    (ethtool before 6.x has no JSON for these)."""
    if text is None:
        return None
    cur: dict = {}
    on = False
    for line in text.splitlines():
        key, _, val = line.partition(":")
        if not val.strip():
            on = key.strip().lower().startswith("current hardware")
        elif on:
            cur[key.strip()] = val.strip()
    return cur


def _ynl() -> list[str] | None:
    ksrc = os.environ.get("KSRC", "")
    specs = os.environ.get("YNL_SPECS", "")
    spec = os.path.join(specs, "netdev.yaml")
    for cli in (os.environ.get("YNL", ""), os.path.join(ksrc, "tools/net/ynl/pyynl/cli.py")):
        if cli and os.path.isfile(cli) and os.path.isfile(spec):
            return [sys.executable, cli, "--spec", spec, "--no-schema"]
    return None


def _page_pools() -> list | None:
    ynl = _ynl()
    if ynl is None:
        return None
    pools = None
    for _ in range(10):  # a pool detached by the test may take a moment to go (NIPA waits 60 s)
        text = _out(ynl + ["--dump", "page-pool-get"])
        if text is None:
            return None
        try:
            pools = ast.literal_eval(text.strip() or "[]")
        except (ValueError, SyntaxError):
            return None
        if not any("detach-time" in p for p in pools):
            break
        time.sleep(0.5)
    return pools


NAPI_SYSFS = ("threaded", "gro_flush_timeout", "napi_defer_hard_irqs")
# net sysctls: these directories' own files (not conf/, neigh/, route/: per
# interface, or caches)
SYSCTL_DIRS = ("/proc/sys/net/core", "/proc/sys/net/ipv4", "/proc/sys/net/ipv6")


def _read(path: str) -> str | None:
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:  # write-only, or gone
        return None


def _sysctls() -> dict:
    out = {}
    for d in SYSCTL_DIRS:
        try:
            names = sorted(os.listdir(d))
        except OSError:
            continue
        for name in names:
            path = os.path.join(d, name)
            if os.path.isfile(path) and not name.endswith("_key"):  # keys: random, made on use
                val = _read(path)
                if val is not None:
                    out[path[len("/proc/sys/"):].replace("/", ".")] = val
    return out


def snapshot() -> dict:
    links = _json(["ip", "-j", "-d", "link", "show"]) or []
    nics = {}
    for link in links:
        name = link.get("ifname", "")
        feats = _json(["ethtool", "--json", "-k", name])
        nics[name] = {"channels": _current(_out(["ethtool", "-l", name])),
                      "rings": _current(_out(["ethtool", "-g", name])),
                      "features": feats[0] if isinstance(feats, list) and feats else None,
                      "napi": {a: _read(f"/sys/class/net/{name}/{a}") for a in NAPI_SYSFS}}
    netns = sorted(os.listdir("/run/netns")) if os.path.isdir("/run/netns") else []
    return {"links": links, "netns": netns, "nics": nics, "page_pools": _page_pools(),
            "sysctls": _sysctls()}


if __name__ == "__main__":
    print(sys.argv[1], json.dumps(snapshot(), separators=(",", ":")), flush=True)
