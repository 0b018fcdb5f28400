"""Recorded runs: ``series/NAME/vN/bench/<run-id>.json``.

A run is a plain dict (what ``json.load`` gives back), so old runs stay
readable as the code changes:

    id, series, version, tip, base, kernel (guest ``uname -r``), target,
    emulated, accel, host_cpu, date, napipatch, quick, seconds,
    percentiles, repetitions, duration,
    modes: [{name, label}], loads: [{name, rate, delay}],
    cells: [{mode, load, rep, p5, p50, p95, p99, samples, sent}],
    notes: [setup commands that failed, cells that failed]

Latencies are round-trip times in ns.
"""

from __future__ import annotations

import json
import platform
import re
import time
from pathlib import Path

from napipatch import fileio
from napipatch.errors import NapipatchError
from napipatch.store.store import Store

_RUN_ID = re.compile(r"^[0-9]{8}-[0-9]{6}-[A-Za-z0-9._-]+$")


def new_id(target: str) -> str:
    return f"{time.strftime('%Y%m%d-%H%M%S')}-{target}"


def host_cpu() -> str:
    """The host's CPU model, from /proc/cpuinfo."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def bench_dir(store: Store, name: str, version: int) -> Path:
    return store.path(name) / f"v{version}" / "bench"


def save(store: Store, run: dict) -> Path:
    d = bench_dir(store, run["series"], run["version"])
    d.mkdir(parents=True, exist_ok=True)
    return fileio.atomic_write(d / f"{run['id']}.json", json.dumps(run, indent=1) + "\n")


def _read(f: Path) -> dict:
    try:
        run = json.loads(f.read_text())
    except (OSError, ValueError) as exc:
        raise NapipatchError(f, f"not a readable run record ({exc})") from None
    if not isinstance(run, dict) or "cells" not in run or "modes" not in run:
        raise NapipatchError(f, "not a run record (no modes/cells)")
    return run


def runs(store: Store, name: str, version: int) -> list[dict]:
    """Every recorded run of NAME@vN, oldest first (run ids sort by date)."""
    d = bench_dir(store, name, version)
    return [_read(f) for f in sorted(d.glob("*.json"))] if d.is_dir() else []


def parse_spec(store: Store, spec: str) -> tuple[str, int]:
    """``NAME[@vN]`` -> (name, version); the newest version without @vN."""
    name, _, ver = spec.partition("@")
    vs = store.versions(name)
    if not ver:
        if not vs:
            raise NapipatchError(spec, "has no versions")
        return name, vs[-1]
    m = re.fullmatch(r"v?(\d+)", ver)
    if not m:
        raise NapipatchError(spec, "bad version: use NAME@vN")
    if int(m.group(1)) not in vs:
        raise NapipatchError(spec, f"no v{m.group(1)}; stored: {', '.join(f'v{x}' for x in vs)}")
    return name, int(m.group(1))


def find(store: Store, spec: str, run_id: str | None = None) -> dict:
    """The run ``run_id`` of NAME[@vN] (the newest when not given).

    Without @vN the run is looked for in every version, newest first.
    """
    name, version = parse_spec(store, spec)
    versions = [version] if "@" in spec else list(reversed(store.versions(name)))
    if run_id is not None and not _RUN_ID.match(run_id):
        raise NapipatchError(run_id, "not a run id (YYYYMMDD-HHMMSS-TARGET)")
    for v in versions:
        rs = runs(store, name, v)
        if run_id is None and rs:
            return rs[-1]
        for r in rs:
            if r.get("id") == run_id:
                return r
    where = spec if "@" in spec else f"{name} (any version)"
    if run_id:
        raise NapipatchError(run_id, f"no such run of {where}")
    raise NapipatchError(spec, f"no recorded runs of {where} (napipatch bench run {spec} ...)")


def ran_on(run: dict) -> str:
    """One line saying what a run ran on, for the table and the cover letter."""
    how = (f"QEMU {run.get('accel', 'tcg').upper()} guest, EMULATED: not real-hardware latencies"
           if run.get("emulated") else "real hardware")
    return (f"{run['series']} v{run['version']} ({run['tip'][:12]} on {run['base'][:12]}), "
            f"kernel {run.get('kernel', '?')}, target {run['target']} ({how}), "
            f"host CPU {run.get('host_cpu', '?')}, {run.get('date', '?')}, "
            f"napipatch {run.get('napipatch', '?')}, run {run['id']}")
