"""``napipatch bench run --quick`` for real: the v5 tip built for virtio-net,
booted in QEMU (TCG), the experiment's 5 modes x 2 load points x 2
repetitions run in the guest against napi_rr servers on this host.

Shares the build directory with the other build tests, and runs among the
``last`` ones (tests/conftest.py) beside the flagship, which boots the same
v5 tip: the tip's ~225 netdevice.h objects are compiled once for the three
of them (test_selftest_v5 then changes one file), instead of here first
and again after every test that went back to the base. It asserts what the
run recorded, not how long it took: the timings are in benchmarks/README.md
("The latency experiment").
"""

from __future__ import annotations

import json
import shutil

import pytest

from conftest import ROOT

# A build test may pay the first kernel build (pyproject.toml: timeout).
pytestmark = [pytest.mark.build, pytest.mark.tree, pytest.mark.last, pytest.mark.timeout(3600)]

SERIES = "threaded-busy-poll"


def test_quick_run_is_recorded_and_shown(cli, kernel_tree, build_dir, tmp_path):
    shutil.copytree(ROOT / "series" / SERIES, cli.store / SERIES)
    shutil.rmtree(cli.store / SERIES / "v5" / "bench", ignore_errors=True)
    env = {"NAPIPATCH_BUILD_DIR": str(build_dir)}
    cp = cli("bench", "run", f"{SERIES}@v5", "--tree", kernel_tree, "--target", "virtio-net",
             "--quick", "--format", "json", env=env)
    assert cp.returncode == 0, cp.stderr[-3000:]
    (run,) = json.loads(cp.stdout)["runs"]
    assert run["emulated"] is True and run["target"] == "virtio-net"
    assert run["kernel"].startswith("6.12"), run["kernel"]
    assert run["modes"] == ["interrupts", "busy-poll", "busy-poll-thread", "prefer-busy-poll",
                            "threaded-busy-poll"]
    assert run["loads"] == ["12K pkt/s + 0us delay", "25K pkt/s + 38us delay"]
    assert len(run["cells"]) == 20
    for c in run["cells"]:
        assert c["samples"] > 0, c
        assert 0 < c["p5"] <= c["p50"] <= c["p95"] <= c["p99"], c
    # the record beside the series, with its metadata
    (f,) = (cli.store / SERIES / "v5" / "bench").glob("*.json")
    rec = json.loads(f.read_text())
    assert rec["id"] == run["id"] == f.stem and rec["accel"] == "tcg" and rec["quick"] is True
    assert rec["host_cpu"] and rec["napipatch"] and rec["date"]
    # the quick experiment: 2 repetitions of 2 s a cell, and where the time went
    assert (rec["repetitions"], rec["duration"]) == (2, 2)
    assert rec["build_seconds"] > 0
    assert rec["bench_seconds"] >= len(rec["cells"]) * rec["duration"]  # every cell ran its 2 s
    assert rec["seconds"] >= rec["build_seconds"] + rec["bench_seconds"] - 0.2  # 0.1 s rounding
    assert len(rec["tip"]) == 40 and rec["base"] == "e738e549a0149a76249c12c6132a8372d6e0add2"
    # the sysfs knobs of every mode were really set in the guest
    assert not [n for n in rec["notes"] if "threaded" in n or "napi_defer_hard_irqs" in n
                or "gro_flush_timeout" in n], rec["notes"]
    shown = cli("bench", "show", f"{SERIES}@v5", "--format", "markdown", "--plot",
                tmp_path / "q.png", check=0).stdout
    assert "EMULATED (QEMU TCG)" in shown
    assert "| Experiment | interrupts | SO_BUSYPOLL | SO_BUSYPOLL(separate) | " \
           "SO_PREFER_BUSY_POLL | NAPI Threaded |" in shown
    assert (tmp_path / "q.png").read_bytes()[:4] == b"\x89PNG"
