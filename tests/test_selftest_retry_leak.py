"""NIPA's retry and leak check for the kernel selftests in the vng guest:
the guest script's markers, how the host reads them, and the findings
(no guest here; the real-guest test is in test_build_boot.py)."""

from __future__ import annotations

import json

from napipatch.engine.registry import discover
from napipatch.jobs.boot import netsnap, vng
from napipatch.jobs.executor import JobResult
from napipatch.jobs.results import netstate, selftests
from napipatch.jobs.results.selftests import ProgramRun, Selftest
from napipatch.jobs.results.verdicts import selftest_findings
from napipatch.pipeline.jobchecks import results_of

FAIL = ["KTAP version 1", "1..2", "ok 1 t.a", "# Check failed 1 != 2", "not ok 2 t.b"]
PASS = ["KTAP version 1", "1..2", "ok 1 t.a", "ok 2 t.b"]


def _link(name, idx, kind="", **kw):
    link = {"ifindex": idx, "ifname": name, "flags": ["BROADCAST", "UP", "LOWER_UP"], "mtu": 1500,
            "operstate": "UP", "stats64": {"rx": {"bytes": idx}}}
    if kind:
        link["linkinfo"] = {"info_kind": kind}
    link.update(kw)
    return link


def _feats(**on):
    return {"ifname": "eth0", "tx-checksumming": {"active": True, "fixed": True},
            **{k: {"active": v, "fixed": False} for k, v in on.items()}}


BEFORE = {"links": [_link("lo", 1), _link("eth0", 2)], "netns": [],
          "nics": {"eth0": {"channels": {"Combined": "1"}, "rings": {"RX": "256"},
                            "features": _feats(**{"generic-receive-offload": True}),
                            "napi": {"threaded": "0", "gro_flush_timeout": "0"}},
                   "lo": {"channels": None, "rings": None,
                          "features": _feats(**{"generic-receive-offload": True})}},
          "page_pools": [{"id": 1, "ifindex": 2, "inflight": 3}],
          "sysctls": {"net.core.busy_read": "0", "net.core.busy_poll": "0"}}


def _state(**changes) -> str:
    snap = json.loads(json.dumps(BEFORE))
    snap.update(changes)
    return "NAPIPATCH-NETSTATE " + json.dumps(snap)


def test_the_guest_retries_a_failed_program_and_snapshots_around_each_run(tmp_path):
    text = vng.guest_script(None, tmp_path / "src", [Selftest("net", "t.py", 60)],
                            tmp_path / "netsnap.py")
    snap = f"python3 {tmp_path}/netsnap.py NAPIPATCH-NETSTATE"
    begin, end = text.index("NAPIPATCH-SELFTEST-BEGIN net:t.py"), text.index("NAPIPATCH-SELFTEST-END")
    # one snapshot before the first test, one after each run
    assert text.index(snap) < begin and text.index(snap, end) > end
    assert "case $rc in 0|4) ;; *)\n  echo NAPIPATCH-SELFTEST-RETRY net:t.py\n" \
           "  timeout -k 10 60 ./t.py 2>&1\n" in text
    # no selftests, no snapshots
    assert snap not in vng.guest_script(None, tmp_path / "src", [], tmp_path / "netsnap.py")


def test_the_host_attaches_the_retry_and_each_runs_snapshots():
    console = "\n".join([
        _state(), "NAPIPATCH-SELFTEST-BEGIN net:t.py", *FAIL, "NAPIPATCH-SELFTEST-END net:t.py rc=1",
        _state(netns=["ns1"]), "NAPIPATCH-SELFTEST-RETRY net:t.py", *PASS,
        "NAPIPATCH-SELFTEST-END net:t.py rc=0", _state(netns=["ns1"]),
        "NAPIPATCH-SELFTEST-BEGIN net:u.sh", "hi", "NAPIPATCH-SELFTEST-END net:u.sh rc=0",
        "NAPIPATCH-NETSTATE {cut"])  # a garbled snapshot: no comparison, no finding
    runs, not_run = vng.split_runs(console, [Selftest("net", "t.py"), Selftest("net", "u.sh")])
    assert [(r.test, r.rc) for r in runs] == [("net:t.py", 1), ("net:u.sh", 0)] and not not_run
    t = runs[0]
    assert t.output == FAIL and t.retry.output == PASS and t.retry.rc == 0
    assert t.leaks == ["network namespace ns1 left behind"]  # by the first run; the retry left none
    assert runs[1].before["netns"] == ["ns1"] and runs[1].after is None and runs[1].leaks == []


def test_fail_then_pass_is_flaky_an_info_naming_both_runs_and_a_warning_for_nipa():
    run = ProgramRun("net:t.py", 1, FAIL, retry=ProgramRun("net:t.py", 0, PASS))
    cases = selftests.case_results(run)
    assert [(c.name, c.status, bool(c.flaky)) for c in cases] == [
        ("net:t.py:a", "ok", False), ("net:t.py:b", "ok", True)]
    assert "--- first run ---" in cases[1].excerpt and "1 != 2" in cases[1].excerpt
    out = selftest_findings("virtio-net", cases, 2, "a" * 40, None, "/x.log")
    assert not [f for f in out if f.severity.value == "error"]
    flaky = [f for f in out if "flaky" in f.message]
    assert [f.message for f in flaky] == [
        "virtio-net: selftest net:t.py:b flaky at patch 2 (aaaaaaaaaaaa): "
        "failed on the first run, ok on the retry"]
    # a warning for NIPA's contest, which the selftest check answers for
    ((_, mine),) = results_of([discover()["selftest"]], JobResult("boot", "virtio-net", "pass", out))
    flaky = [f for f in mine if "flaky" in f.message]
    assert (flaky[0].check, flaky[0].severity.value, flaky[0].nipa) == \
        ("selftest", "info", {"contest": "warning"})
    # a program without KTAP: its exit status fails the first run only
    plain = selftests.case_results(ProgramRun("net:u.sh", 1, ["no"], retry=ProgramRun("net:u.sh", 0, [])))
    assert [(c.name, c.status, c.flaky) for c in plain] == [
        ("net:u.sh", "ok", "failed on the first run: exit status 1, ok on the retry")]


def test_fail_twice_is_the_failure_as_without_a_retry():
    run = ProgramRun("net:t.py", 1, FAIL, retry=ProgramRun("net:t.py", 1, FAIL))
    cases = selftests.case_results(run)
    assert [(c.name, c.status) for c in cases] == [("net:t.py:a", "ok"), ("net:t.py:b", "not ok")]
    errors = [f for f in selftest_findings("virtio-net", cases, 2, "a" * 40, set(), "/x.log")
              if f.severity.value == "error"]
    assert [f.message for f in errors] == [
        "virtio-net: selftest net:t.py:b failed at patch 2 (aaaaaaaaaaaa): failed again on the retry"]


def test_leaks_name_what_was_left_and_ignore_the_noise():
    after = json.loads(_state()[len("NAPIPATCH-NETSTATE "):])
    # noise: counters, carrier, ifindex of an unrelated link, page pool ids and in-flight pages
    after["links"][1].update(stats64={"rx": {"bytes": 99}}, operstate="DOWN",
                             flags=["BROADCAST", "UP", "NO-CARRIER"])
    after["links"][0]["ifindex"] = 7
    after["page_pools"] = [{"id": 9, "ifindex": 2, "inflight": 0}]
    assert netstate.leaks(BEFORE, after) == []
    # what a test leaves behind
    after["links"].append(_link("dummy0", 3, "dummy"))
    after["netns"] = ["ns-x"]
    after["nics"]["eth0"]["channels"] = {"Combined": "2"}
    after["nics"]["eth0"]["features"] = _feats(**{"generic-receive-offload": False})
    after["links"][1]["mtu"] = 9000
    after["page_pools"].append({"id": 10, "ifindex": 2, "detach-time": 5})
    # settings NIPA's env check sees too: threaded NAPI (napi-get's pid), the
    # loopback's features, a link's GSO size; and a net sysctl
    after["nics"]["eth0"]["napi"]["threaded"] = "1"
    after["nics"]["lo"]["features"] = _feats(**{"generic-receive-offload": False})
    after["links"][0]["gso_max_size"] = 16384
    after["sysctls"]["net.core.busy_read"] = "50"
    after["sysctls"]["net.core.new_knob"] = "1"  # only after: not compared
    assert netstate.leaks(BEFORE, after) == [
        "interface dummy0 (dummy) left behind",
        "interface eth0 mtu: 1500 -> 9000",
        "interface lo gso_max_size: None -> 16384",
        "network namespace ns-x left behind",
        "eth0 channels Combined: 1 -> 2",
        "eth0 feature generic-receive-offload: True -> False",
        "eth0 threaded: 0 -> 1",
        "lo feature generic-receive-offload: True -> False",
        "sysctl net.core.busy_read: 0 -> 50",
        "page pools (detached): 0 -> 1"]
    assert netstate.leaks(BEFORE, None) == []


def test_a_leak_is_an_error_on_its_test_unless_the_base_leaks_the_same():
    leaks = {"net:l.sh": ["interface eth1 left behind"]}
    new = selftest_findings("virtio-net", [], 3, "b" * 40, None, "/x.log", leaks=leaks)
    assert [(f.severity.value, f.message) for f in new] == [
        ("error", "virtio-net: selftest net:l.sh left netdev state changed at patch 3 "
                  "(bbbbbbbbbbbb): interface eth1 left behind")]
    old = selftest_findings("virtio-net", [], 3, "b" * 40,
                            {netstate.key("net:l.sh", "interface eth1 left behind")}, "/x.log",
                            leaks=leaks)
    assert [f.severity.value for f in old] == ["info"] and "already so on base" in old[0].message


def test_the_guest_snapshot_reads_ethtools_current_settings():
    text = ("Channel parameters for eth0:\nPre-set maximums:\nRX:\t\tn/a\nCombined:\t4\n"
            "Current hardware settings:\nRX:\t\tn/a\nCombined:\t2\n")
    assert netsnap._current(text) == {"RX": "n/a", "Combined": "2"}
    assert netsnap._current(None) is None
