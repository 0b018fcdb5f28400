"""``napipatch bench run --target idpf``: the SSH path between a client and
a server host, with ssh/scp stand-ins that run the commands on this host.

No idpf host (nor a second machine) exists here; the stand-ins check what
napipatch sends to each host and let the plan, the per-mode servers and
the parsing run for real on loopback. The experiment's setup lines are
harmless ones: the shipped ones would retune this machine.
"""

from __future__ import annotations

import json
import shutil

import pytest

from conftest import ROOT

pytestmark = pytest.mark.tree

SERIES = "threaded-busy-poll"
FAKE_SSH = """#!/bin/sh
# ssh [options] DEST COMMAND: log DEST, run COMMAND here
while [ $# -gt 2 ]; do shift; done
echo "$1" >> "$FAKE_LOG"
exec sh -c "$2"
"""
FAKE_SCP = """#!/bin/sh
# scp [options] FILE DEST:PATH
for a; do src=$dst; dst=$a; done
echo "scp ${dst%%:*}" >> "$FAKE_LOG"
cp "$src" "${dst#*:}"
"""
EXPERIMENT = """
repetitions = 1
duration = 1
[workload]
server = "napi_rr server -H {bind} -p {port} {server_args}"
client = "napi_rr client -H {server} -p {port} -r {rate} -d {delay} -t {duration} -q {percentiles} {client_args}"
[setup]
common = ["echo $DEV $TARGET emulated=$EMULATED > /dev/null", "false"]
[[modes]]
name = "interrupts"
client-args = "-b 0"
[[modes]]
name = "busy-poll"
label = "SO_BUSYPOLL"
client-args = "-b 50"
server-args = "-b 50"
[[loads]]
rate = 2000
delay = 5
"""


def test_idpf_run_goes_over_ssh_to_client_and_server(cli, kernel_tree, tmp_path):
    shutil.copytree(ROOT / "series" / SERIES, cli.store / SERIES)
    shutil.rmtree(cli.store / SERIES / "v5" / "bench", ignore_errors=True)
    (cli.store / SERIES / "experiment.toml").write_text(EXPERIMENT)
    fake = tmp_path / "bin"
    fake.mkdir()
    for name, text in (("ssh", FAKE_SSH), ("scp", FAKE_SCP)):
        (fake / name).write_text(text)
        (fake / name).chmod(0o755)
    log = tmp_path / "ssh.log"
    cfg = {"napipatch.idpf.host": "client.example.org", "napipatch.idpf.iface": "lo",
           "napipatch.idpf.server": "server.example.org",
           "napipatch.idpf.server-addr": "127.0.0.1"}
    env = {"PATH": f"{fake}:/usr/local/bin:/usr/bin:/bin", "FAKE_LOG": str(log),
           "GIT_CONFIG_COUNT": str(len(cfg))}
    for i, (k, v) in enumerate(cfg.items()):
        env[f"GIT_CONFIG_KEY_{i}"], env[f"GIT_CONFIG_VALUE_{i}"] = k, v
    cp = cli("bench", "run", f"{SERIES}@v5", "--tree", kernel_tree, "--target", "idpf",
             "--format", "json", env=env)
    assert cp.returncode == 0, cp.stderr[-2000:]
    (run,) = json.loads(cp.stdout)["runs"]
    assert run["emulated"] is False and run["target"] == "idpf"
    assert [c["mode"] for c in run["cells"]] == ["interrupts", "busy-poll"]
    for c in run["cells"]:
        assert c["samples"] > 500 and 0 < c["p5"] <= c["p50"] <= c["p99"], c
    hosts = log.read_text().split()
    assert {"root@client.example.org", "root@server.example.org"} <= set(hosts)
    assert hosts.count("scp") == 2  # napi_rr to both hosts
    (f,) = (cli.store / SERIES / "v5" / "bench").glob("*-idpf.json")
    rec = json.loads(f.read_text())
    assert rec["accel"] == "none" and rec["host_cpu"]
    assert "setup-failed: mode=interrupts :: false ::" in " ".join(rec["notes"])
    shown = cli("bench", "show", f"{SERIES}@v5", check=0).stdout
    assert "(real hardware)" in shown and "EMULATED" not in shown
