"""napipatch bench: the experiment file, the workload, recorded runs shown
as the cover letter's table / JSON / plot, and the cover letter itself.

No kernel is built here (test_bench_run.py does the real run in QEMU):
runs are recorded files as ``bench run`` writes them, and the workload
program is built and run on this host's loopback.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import ROOT, commit_files, small_repo

from napipatch.bench import experiment as expmod
from napipatch.bench import plan as planmod
from napipatch.bench import workload

SERIES = "threaded-busy-poll"
MODES = [("interrupts", "interrupts"), ("busy-poll", "SO_BUSYPOLL"),
         ("threaded-busy-poll", "NAPI Threaded")]
LOADS = [("12K pkt/s + 0us delay", 12000, 0), ("25K pkt/s + 38us delay", 25000, 38)]


def _store(cli) -> Path:
    """The real series record (v3..v5) in the test's store."""
    shutil.copytree(ROOT / "series" / SERIES, cli.store / SERIES)
    shutil.rmtree(cli.store / SERIES / "v5" / "bench", ignore_errors=True)
    return cli.store / SERIES


def _record(store_dir: Path, version: int, run_id: str, base: int, emulated=True) -> dict:
    """A run as `bench run` records it: p50 of mode i, load j, rep r =
    base + 1000*i + 100*j + 10*r (so medians and spreads are known)."""
    cells = []
    for i, (m, _) in enumerate(MODES):
        for j, (ld, _, _) in enumerate(LOADS):
            for r in (1, 2, 3):
                v = base + 1000 * i + 100 * j + 10 * r
                cells.append({"mode": m, "load": ld, "rep": r, "p5": v - 5, "p50": v,
                              "p95": v + 5, "p99": v + 9, "samples": 1000, "sent": 1000})
    run = {"id": run_id, "series": SERIES, "version": version, "tip": "a" * 40, "base": "b" * 40,
           "kernel": "6.12.117-napipatch", "target": "virtio-net", "emulated": emulated,
           "accel": "tcg" if emulated else "none", "host_cpu": "Test CPU",
           "date": "2026-12-01T00:00:00+0000", "napipatch": "0.1.0", "quick": True,
           "percentiles": [5.0, 50.0, 95.0, 99.0], "repetitions": 3, "duration": 2,
           "modes": [{"name": m, "label": lb} for m, lb in MODES],
           "loads": [{"name": n, "rate": r, "delay": d} for n, r, d in LOADS],
           "cells": cells, "notes": ["setup-failed: mode=interrupts :: ethtool :: not found"]}
    d = store_dir / f"v{version}" / "bench"
    d.mkdir(parents=True, exist_ok=True)
    (d / f"{run_id}.json").write_text(json.dumps(run))
    return run


# ---------------------------------------------------------------- experiment

def test_shipped_experiment_has_the_cover_letters_matrix():
    exp = expmod.load(ROOT / "series" / SERIES)
    assert [m.label for m in exp.modes] == ["interrupts", "SO_BUSYPOLL", "SO_BUSYPOLL(separate)",
                                           "SO_PREFER_BUSY_POLL", "NAPI Threaded"]
    assert [(ld.rate, ld.delay) for ld in exp.loads] == [
        (12000, 0), (125000, 6), (25000, 38), (32000, 30), (12000, 78)]
    assert exp.percentiles == [5, 50, 95, 99]
    q = exp.quick()
    assert len(q.modes) == 5 and len(q.loads) == 2 and q.repetitions == 2 and q.cells == 20


@pytest.mark.parametrize("edit, message", [
    (lambda t: t.replace("rate = 125000", "rate = 0"),
     "experiment.toml: loads[1].rate: must be > 0, not 0"),
    (lambda t: t.replace("delay = 38", 'delay = "38us"'),
     "experiment.toml: loads[2].delay: must be an integer, not string '38us'"),
    (lambda t: t.replace('name = "busy-poll"\n', 'name = "interrupts"\n'),
     "experiment.toml: modes[1].name: 'interrupts' used twice"),
    (lambda t: t.replace("-t {duration}", "-t {seconds}"),
     "experiment.toml: workload.client: unknown placeholder {seconds}"),
    (lambda t: t.replace("percentiles = [5, 50, 95, 99]", "percentiles = [5, 150]"),
     "experiment.toml: percentiles[1]: must be <= 100, not 150"),
    (lambda t: t.replace("repetitions = 3", "repetitons = 3"),
     "experiment.toml: repetitons: unknown key (did you mean repetitions?)"),
    (lambda t: t.replace("[workload]\n", "[workload]\nport = 1\n"),
     "experiment.toml: workload.port: unknown key (known: server, client)"),
    (lambda t: t.replace("rate = 125000\n", ""),
     "experiment.toml: loads[1].rate: missing"),
    (lambda t: t.replace('"12K pkt/s + 0us delay", ', '"12K + 0us", '),
     "experiment.toml: quick.loads[0]: '12K + 0us' is not a load point's name"),
    (lambda t: t.replace("[workload]", "[workload"), "experiment.toml: not valid TOML"),
])
def test_bad_experiment_is_one_line_exit_2(cli, tmp_path, edit, message):
    d = _store(cli)
    (d / "experiment.toml").write_text(edit((d / "experiment.toml").read_text()))
    cp = cli("bench", "run", f"{SERIES}@v5", "--tree", tmp_path, "--target", "virtio-net")
    assert cp.returncode == 2, cp.stderr
    assert len(cp.stderr.strip().splitlines()) == 1 and "Traceback" not in cp.stderr
    assert message in cp.stderr


def test_bench_run_bad_inputs(cli, tmp_path):
    _store(cli)
    for args, message in [
        ([f"{SERIES}@v9", "--target", "virtio-net"], f"{SERIES}@v9: no v9; stored: v3, v4, v5"),
        ([f"{SERIES}@v5", "--target", "e1000"], "e1000: no such target"),
        ([f"{SERIES}@v5", "--target", "idpf"], "idpf: has no QEMU model: set napipatch.idpf.host"),
        (["nosuch", "--target", "virtio-net"], "nosuch: no such series"),
        ([f"{SERIES}@v5", "--format", "html"], "html: unknown format"),
    ]:
        cp = cli("bench", "run", *args, "--tree", tmp_path)
        assert cp.returncode == 2 and message in cp.stderr, (args, cp.stderr)
        assert len(cp.stderr.strip().splitlines()) == 1
    # idpf runs between two hosts: the client alone is not enough
    tree = small_repo(tmp_path / "tree")
    subprocess.run(["git", "-C", tree, "config", "napipatch.idpf.host", "client.example.org"])
    cp = cli("bench", "run", f"{SERIES}@v5", "--tree", tree, "--target", "idpf")
    assert cp.returncode == 2 and cp.stderr.strip() == "napipatch: error: napipatch.idpf.host: " \
        "no remote host configured for idpf (set napipatch.idpf.host and .iface)", cp.stderr
    subprocess.run(["git", "-C", tree, "config", "napipatch.idpf.iface", "eth1"])
    cp = cli("bench", "run", f"{SERIES}@v5", "--tree", tree, "--target", "idpf")
    assert cp.returncode == 2 and cp.stderr.strip() == "napipatch: error: napipatch.idpf.server: " \
        "no server host configured for the experiment (git config napipatch.idpf.server HOST)"
    (cli.store / SERIES / "experiment.toml").unlink()
    cp = cli("bench", "run", f"{SERIES}@v5", "--tree", tmp_path)
    assert cp.returncode == 2 and "experiment.toml: no experiment for this series" in cp.stderr


# ------------------------------------------------------------------ workload

def test_napi_rr_measures_round_trips_on_loopback(tmp_path):
    """The workload program, built static as for the guest, against its own server."""
    binary = workload.build(tmp_path)
    assert "statically linked" in subprocess.run(["file", binary], capture_output=True,
                                                 text=True).stdout
    exp = expmod.load(ROOT / "series" / SERIES).quick()
    exp.modes = exp.modes[:3]  # interrupts, inline and separate-thread busy poll
    with workload.HostServers(exp, binary) as srv:
        for mode in exp.modes:
            cmd = workload.command(exp.client, workload.values(
                exp, mode, exp.loads[0], "127.0.0.1", srv.ports[mode.name]), str(binary))
            out = subprocess.run(cmd, shell=True, capture_output=True, text=True, timeout=30).stdout
            kv = dict(re.findall(r"(\w+)=(\d+)", out))
            assert int(kv["sent"]) > 1000 and int(kv["samples"]) > 1000, (mode.name, out)
            assert 0 < int(kv["p5"]) <= int(kv["p50"]) <= int(kv["p95"]) <= int(kv["p99"]), out


def test_plan_output_is_parsed_into_cells():
    exp = expmod.load(ROOT / "series" / SERIES).quick()
    console = "\n".join([
        "[    1.0] virtio_net virtio0 eth0: renamed",
        "NAPIPATCH-BENCH kernel 6.12.117-napipatch",
        "NAPIPATCH-BENCH setup-failed mode=interrupts :: echo 0 > /x :: can't create /x",
        "NAPIPATCH-BENCH cell mode=interrupts load=1 rep=2 sent=50000 samples=49990 "
        "clock=tsc p5=100 p50=200 p95=300 p99=400",
        "NAPIPATCH-BENCH cell mode=busy-poll load=0 rep=1 sent=10 samples=0 p5=0 p50=0 p95=0 p99=0",
        "NAPIPATCH-BENCH done"])
    kernel, cells, notes, done = planmod.parse(console, exp)
    assert kernel == "6.12.117-napipatch" and done
    assert cells[0] == {"mode": "interrupts", "load": "25K pkt/s + 38us delay", "rep": 2,
                        "p5": 100, "p50": 200, "p95": 300, "p99": 400, "samples": 49990,
                        "sent": 50000, "clock": "tsc"}
    assert cells[1]["p50"] is None and cells[1]["samples"] == 0  # no replies: no latency
    assert notes == ["setup-failed: mode=interrupts :: echo 0 > /x :: can't create /x"]


# ---------------------------------------------------------------------- show

def test_show_markdown_is_the_cover_letters_table(cli):
    d = _store(cli)
    _record(d, 5, "20261201-000000-virtio-net", 10000)
    cp = cli("bench", "show", f"{SERIES}@v5", "--format", "markdown", check=0)
    lines = cp.stdout.splitlines()
    assert "EMULATED (QEMU TCG)" in cp.stdout and "not latencies of real hardware" in cp.stdout
    assert lines[0].startswith(f"Ran on: {SERIES} v5 (aaaaaaaaaaaa on bbbbbbbbbbbb), "
                               "kernel 6.12.117-napipatch, target virtio-net (QEMU TCG guest, EMULATED")
    i = lines.index("| Experiment | interrupts | SO_BUSYPOLL | NAPI Threaded |")
    assert lines[i + 1] == "|---|---|---|---|"
    assert lines[i + 2] == "| 12K pkt/s + 0us delay | | | |"
    # median of reps 10/20/30 above base, spread ±10; modes +1000 each
    assert lines[i + 4] == "| | p50: 10020 ±10 | p50: 11020 ±10 | p50: 12020 ±10 |"
    assert lines[i + 3].startswith("| | p5: 10015 ±10 |")
    assert lines[i + 7] == "| 25K pkt/s + 38us delay | | | |"
    assert lines[i + 11] == "| | p99: 10129 ±10 | p99: 11129 ±10 | p99: 12129 ±10 |"
    assert "note: setup-failed: mode=interrupts :: ethtool :: not found" in cp.stdout
    text = cli("bench", "show", SERIES, check=0).stdout  # newest version with runs
    assert re.search(r"^\s+p50: 10020 ±10\s+p50: 11020 ±10\s+p50: 12020 ±10$", text, re.M), text


def test_show_json_has_the_issue_shape(cli):
    d = _store(cli)
    _record(d, 5, "20261201-000000-virtio-net", 10000)
    _record(d, 5, "20261202-000000-virtio-net", 20000, emulated=False)
    data = json.loads(cli("bench", "show", f"{SERIES}@v5", "--run", "20261201-000000-virtio-net",
                          "--format", "json", check=0).stdout)
    (run,) = data["runs"]
    assert list(run) == ["id", "series", "version", "tip", "base", "kernel", "target",
                         "emulated", "date", "modes", "loads", "cells"]
    assert run["emulated"] is True and run["modes"] == [m for m, _ in MODES]
    assert run["cells"][0] == {"mode": "interrupts", "load": "12K pkt/s + 0us delay", "rep": 1,
                               "p5": 10005, "p50": 10010, "p95": 10015, "p99": 10019,
                               "samples": 1000}
    newest = json.loads(cli("bench", "show", f"{SERIES}@v5", "--format", "json", check=0).stdout)
    assert newest["runs"][0]["id"] == "20261202-000000-virtio-net"
    assert newest["runs"][0]["emulated"] is False
    listed = cli("bench", "list", SERIES, check=0).stdout.splitlines()
    assert [ln.split()[:3] for ln in listed] == [
        ["20261201-000000-virtio-net", "v5", "virtio-net"],
        ["20261202-000000-virtio-net", "v5", "virtio-net"]]
    assert "emulated" in listed[0] and "hardware" in listed[1]


def test_show_against_and_plot(cli, tmp_path):
    d = _store(cli)
    _record(d, 4, "20261101-000000-virtio-net", 10000)
    _record(d, 5, "20261201-000000-virtio-net", 9000)
    png = tmp_path / "lat.png"
    cp = cli("bench", "show", f"{SERIES}@v5", "--against", f"{SERIES}@v4", "--format", "markdown",
             "--plot", png, check=0)
    assert "Compared: threaded-busy-poll v4 (run 20261101-000000-virtio-net) -> v5" in cp.stdout
    assert "| | p50: 10020 -> 9020 (-10.0%) | p50: 11020 -> 10020 (-9.1%) |" in cp.stdout
    assert "EMULATED" in cp.stdout
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10000
    other = _record(d, 4, "20261102-000000-virtio-net", 10000)
    for ld in other["loads"]:
        ld["name"] += " (other)"
    (d / "v4" / "bench" / "20261102-000000-virtio-net.json").write_text(json.dumps(other))
    cp = cli("bench", "show", f"{SERIES}@v5", "--against", f"{SERIES}@v4")
    assert cp.returncode == 2 and cp.stderr.strip() == (
        "napipatch: error: --against: run 20261102-000000-virtio-net and run "
        "20261201-000000-virtio-net have no load points in common")


def test_show_bad_inputs(cli, tmp_path):
    d = _store(cli)
    _record(d, 5, "20261201-000000-virtio-net", 10000)
    for args, message in [
        ([f"{SERIES}@v4"], f"{SERIES}@v4: no recorded runs of {SERIES}@v4"),
        ([f"{SERIES}@v5", "--run", "20991231-000000-virtio-net"],
         f"20991231-000000-virtio-net: no such run of {SERIES}@v5"),
        ([f"{SERIES}@v5", "--run", "../../etc"], "../../etc: not a run id"),
        ([f"{SERIES}@v5", "--plot", tmp_path / "x.svg"], "--plot writes PNG"),
        ([f"{SERIES}@v5", "--plot", tmp_path / "no" / "x.png"], "x.png: No such file or directory"),
        ([f"{SERIES}@v5", "--against", f"{SERIES}@v3"], f"no recorded runs of {SERIES}@v3"),
    ]:
        cp = cli("bench", "show", *args)
        assert cp.returncode == 2 and message in cp.stderr, (args, cp.stderr)
        assert len(cp.stderr.strip().splitlines()) == 1
    (d / "v5" / "bench" / "20261202-000000-virtio-net.json").write_text("{not json")
    cp = cli("bench", "show", f"{SERIES}@v5")
    assert cp.returncode == 2 and "20261202-000000-virtio-net.json: not a readable run record" in cp.stderr


# -------------------------------------------------------------- cover letter

def _export(cli, tmp_path, *extra):
    repo = small_repo(tmp_path / "repo")
    base = _root_commit(repo)
    tip = commit_files(repo, base, {"a.c": "int a = 1;\n"}, "net: set a")
    return cli("series", "export", f"{base}..{tip}", "--name", SERIES, "--version", "6",
               "--repo", repo, "--base", base, *extra)


def _root_commit(repo: Path) -> str:
    tree = subprocess.run(["git", "-C", repo, "mktree"], input="", capture_output=True,
                          text=True).stdout.strip()
    return subprocess.run(["git", "-C", repo, "commit-tree", tree, "-m", "root"],
                          capture_output=True, text=True, check=True).stdout.strip()


def test_export_puts_a_run_in_the_cover_letter(cli, tmp_path):
    d = _store(cli)
    _record(d, 5, "20261201-000000-virtio-net", 10000)
    cp = _export(cli, tmp_path, "--bench", "latest")
    assert cp.returncode == 2, cp.stderr
    assert cp.stderr.strip() == (
        "napipatch: error: --bench 20261201-000000-virtio-net: is an emulated run (QEMU TCG): "
        "its numbers are not real-hardware latencies; pass --allow-emulated to use it anyway "
        "(it is labelled emulated)")
    assert not (d / "v6").exists()
    cp = _export(cli, tmp_path / "2", "--bench", "20261201-000000-virtio-net", "--allow-emulated")
    assert cp.returncode == 0, cp.stderr
    cover = (d / "v6" / "0000-cover-letter.patch").read_text()
    assert "EMULATED (QEMU TCG): these numbers are from an emulated CPU and NIC" in cover
    assert "Ran on: threaded-busy-poll v5 (aaaaaaaaaaaa on bbbbbbbbbbbb), kernel " \
           "6.12.117-napipatch, target virtio-net (QEMU TCG guest, EMULATED" in cover
    assert "| Experiment | interrupts | SO_BUSYPOLL | NAPI Threaded |\n|---|---|---|---|\n" \
           "| 12K pkt/s + 0us delay | | | |\n| | p5: 10015 ±10 |" in cover
    # still before the changelog
    assert cover.index("| Experiment |") < cover.index("v5:\n")


def test_export_of_a_hardware_run_needs_no_flag(cli, tmp_path):
    d = _store(cli)
    _record(d, 5, "20261201-000000-idpf", 10000, emulated=False)
    assert _export(cli, tmp_path, "--bench", "latest").returncode == 0
    cover = (d / "v6" / "0000-cover-letter.patch").read_text()
    assert "(real hardware)" in cover and "EMULATED" not in cover
    assert "| | p50: 10020 ±10 | p50: 11020 ±10 | p50: 12020 ±10 |" in cover
