"""The flagship proven: threaded busy poll v5 boots on 6.12, busy polls, and
passes its own selftest (nl_netdev.py napi_threaded_check) in the guest.

Runs last (the ``last`` marker, see tests/conftest.py) because it moves the
shared virtio-net build to the v5 tip. The per-patch builds for both
targets are in benchmarks/README.md ("The flagship"), measured with
`napipatch test run threaded-busy-poll@v5`; the series is docs/flagship.md.
"""

import json
import re

import pytest

from conftest import ROOT

# A build test may pay the first kernel build (pyproject.toml: timeout).
pytestmark = [pytest.mark.build, pytest.mark.tree, pytest.mark.last, pytest.mark.timeout(3600)]


def test_v5_boots_busy_polls_and_passes_napi_threaded_check(cli, kernel_tree, build_dir):
    cp = cli("--store", ROOT / "series", "test", "boot", "threaded-busy-poll@v5",
             "--tree", kernel_tree, "--target", "virtio-net", "--format", "json",
             env={"NAPIPATCH_BUILD_DIR": str(build_dir)})
    assert cp.returncode == 0, (cp.stdout[-3000:], cp.stderr[-3000:])
    data = json.loads(cp.stdout)
    info = [f for f in data["findings"] if f["check"] == "boot" and f["severity"] == "info"][0]
    tap = {m.group(2): m.group(1) for m in
           re.finditer(r"^(ok|not ok|skip)\s+\d+ - (.*?)(?:  \(.*\))?$", info["details"], re.M)}
    assert tap["threaded reads back 1"] == "ok"
    assert tap["threaded reads back 2 (busy poll)"] == "ok"
    polling = [k for k in tap if k.startswith("busy-poll kthread keeps polling with no traffic")]
    assert polling and tap[polling[0]] == "ok", tap
    assert [tap[k] for k in tap if k.startswith("kthread stops polling after threaded=1")] == ["ok"]
    assert tap["threaded reads back 0"] == "ok"
    assert tap["dmesg has no WARN/BUG/Oops/lockdep/KASAN splats"] == "ok"
    assert "not ok" not in tap.values()
    # the YNL CLI in the vng guest sees the new attribute
    assert tap["netlink napi-get reports threaded enabled"] == "ok"
    assert tap["netlink napi-get reports threaded busy-poll"] == "ok"
    # the same boot ran nl_netdev.py from the v5 tip (patch 5 adds the case)
    results = {f["message"] for f in data["findings"] if f["check"] == "selftest"}
    assert "virtio-net: selftest net:nl_netdev.py:napi_threaded_check ok" in results, results
    assert {c["id"]: c["status"] for c in data["checks"]}["selftest/virtio-net"] == "info"
    assert "with vng under " in info["message"] and "selftests: " in info["message"]
    # which tests ran and why: nl_netdev.py for the netdev family v5 changes,
    # stats.py as its other ynl user on netdevsim (queues.py: the target ignores it)
    chosen = [f for f in data["findings"] if f["check"] == "selftest"
              and "selftests chosen" in f["message"]]
    assert chosen and chosen[0]["message"] == \
        "virtio-net: 2 selftests chosen: net:nl_netdev.py, drivers/net:stats.py", chosen
    assert "net:nl_netdev.py: added or changed by the series; exercises netlink family netdev" \
        in chosen[0]["details"]
    # NIPA's contest, forecast on every patch: success
    states = {p["nipa"]["contest"]["state"] for p in data["series"]["patches"]}
    assert states == {"success"}, [p["nipa"]["contest"] for p in data["series"]["patches"]]
