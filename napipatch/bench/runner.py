"""``napipatch bench run``: build the version's tip, run the matrix, record it.

Where the virtio-net experiment runs, and why: guest <-> host over the
guest's virtio-net NIC. The client (napi_rr) runs in the QEMU guest and
the echo servers on this host behind QEMU user networking (the guest
sends to 10.0.2.2, QEMU hands the datagrams to 127.0.0.1). Every reply
then enters the guest through virtio-net's RX NAPI: a real NAPI instance
of a real driver, which honours ``threaded`` (0/1/2), busy_read/busy_poll
and SO_BUSY_POLL (the socket learns the NAPI id from the skb),
SO_PREFER_BUSY_POLL, ``napi_defer_hard_irqs`` and ``gro_flush_timeout``.
A veth pair between two namespaces was the other choice, but veth only
has a NAPI with GRO or XDP switched on (so threaded busy poll would test
veth's optional NAPI, not a NIC's) and the target's tinyconfig kernel has
neither veth nor network namespaces. The host side is not under test.

Under TCG the numbers are those of an emulated CPU and NIC, not latencies
of real hardware: runs are recorded ``emulated: true`` and every view says
so. On idpf the same matrix runs over SSH (napipatch.bench.remote).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from napipatch import __version__, fileio
from napipatch.bench import record
from napipatch.bench import remote as remotemod
from napipatch.bench.experiment import Experiment
from napipatch.bench.experiment import load as load_experiment
from napipatch.bench.plan import parse, script
from napipatch.bench.workload import HostServers
from napipatch.bench.workload import build as build_workload
from napipatch.pipeline.run import apply as apply_series
from napipatch.errors import NapipatchError
from napipatch.jobs import targets
from napipatch.jobs.build import guestconfig
from napipatch.jobs.boot import qemu as bootmod
from napipatch.jobs.build.builder import Builder
from napipatch.store.store import Store

GUEST_PROGRAM = "bin/napi_rr"


@dataclass
class Tip:
    name: str
    version: int
    tip: str
    base: str
    repo: Path


def resolve_tip(store: Store, cfg, spec: str, tree: Path, base: str | None) -> Tip:
    """NAME[@vN] applied on its base in ``tree``: the commit to build."""
    name, version = record.parse_spec(store, spec)
    series = store.load(f"{name}@v{version}")
    if not series.patches:
        raise NapipatchError(spec, "has no patches to build (a cover-letter-only version)")
    applied = apply_series(series, cfg, tree, base)
    if applied.failure:
        raise NapipatchError(spec, f"patch {applied.failure.patch} does not apply on "
                                   f"{applied.base[:12]}: nothing to benchmark")
    return Tip(name, version, applied.tip or applied.base, applied.base, applied.repo)


def guest_timeout(exp: Experiment) -> float:
    """Boot, setup and every cell with room for a slow TCG guest."""
    return 120 + len(exp.modes) * 15 + exp.cells * (exp.duration * 1.5 + 5)


def run_guest(cfg, exp: Experiment, tip: Tip, target, jobs: int, progress) -> tuple[dict, str]:
    """Build the tip for ``target``, boot it in QEMU, run the matrix there.

    Returns the measured part of a record and the console.
    """
    t0 = time.monotonic()
    with Builder(tip.repo, target, cfg.cache, jobs=jobs, progress=progress) as b:
        progress(f"{target.name}: building {tip.tip[:12]} (incremental)")
        step = b.step(0, tip.tip, "bench")
        if not step.ok:
            raise NapipatchError(f"{tip.name}@v{tip.version}", f"{tip.tip[:12]} does not build "
                                 f"for {target.name} (log: {step.log})")
        kernel = b.dirs.obj / target.image
        built = time.monotonic() - t0
        binary = build_workload(cfg.cache)
        work = cfg.cache / "bench" / "guest"
        with HostServers(exp, binary) as srv:
            plan = work / "plan.sh"
            plan.parent.mkdir(parents=True, exist_ok=True)
            fileio.atomic_write(plan, script(exp, target.name, True, "10.0.2.2", srv.ports))
            progress(f"{target.name}: booting {tip.tip[:12]} in QEMU (TCG) for {exp.cells} cells")
            res = bootmod.boot(kernel, target, work, timeout=guest_timeout(exp), progress=progress,
                               plan=plan, extra={GUEST_PROGRAM: binary})
    kernel_rel, cells, notes, done = parse(res.console, exp)
    if not done:
        why = "timed out" if res.timed_out else "stopped"
        raise NapipatchError(f"bench on {target.name}", f"the guest {why} after {len(cells)} of "
                             f"{exp.cells} cells (console: {res.console_log})")
    return {"kernel": kernel_rel, "cells": cells, "notes": notes, "emulated": True,
            "accel": "tcg", "build_seconds": round(built, 1),
            "bench_seconds": res.seconds}, res.console


def run(store: Store, cfg, spec: str, tree: Path, target_name: str, quick: bool = False,
        jobs: int = 2, base: str | None = None, progress=lambda _m: None) -> tuple[dict, Path]:
    """Run the experiment of NAME[@vN] on ``target_name``; record and return the run."""
    t0 = time.monotonic()
    name, _ = record.parse_spec(store, spec)
    exp = load_experiment(store.path(name))
    if quick:
        exp = exp.quick()
    target = targets.load(target_name)
    remote_host = cfg.get(f"napipatch.{target_name}.host")
    if target.boot is None and not remote_host:
        raise NapipatchError(target_name, f"has no QEMU model: set napipatch.{target_name}.host "
                             f"and .server to run the experiment on real hosts")
    if target.boot is None:
        remotemod.hosts(cfg, target_name)  # all host settings there before anything is built
    tip = resolve_tip(store, cfg, spec, tree, base)
    run_id = record.new_id(target_name)
    if target.boot is not None:
        # built as `test` builds it (guestconfig): the same build directory, no reconfigure
        target = guestconfig.widen(target, tip.repo, tip.base)
        measured, _ = run_guest(cfg, exp, tip, target, jobs, progress)
    else:
        measured = remotemod.run_hosts(cfg, exp, target_name, build_workload(cfg.cache), progress)
    rec = {"id": run_id, "series": tip.name, "version": tip.version, "tip": tip.tip,
           "base": tip.base, "target": target_name,
           "host_cpu": record.host_cpu() if measured["emulated"] else measured.pop("host_cpu", "?"),
           "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "napipatch": __version__,
           "quick": quick, "percentiles": exp.percentiles, "repetitions": exp.repetitions,
           "duration": exp.duration,
           "modes": [{"name": m.name, "label": m.label} for m in exp.modes],
           "loads": [{"name": ld.name, "rate": ld.rate, "delay": ld.delay} for ld in exp.loads]}
    rec.update(measured)
    rec["seconds"] = round(time.monotonic() - t0, 1)
    return rec, record.save(store, rec)
