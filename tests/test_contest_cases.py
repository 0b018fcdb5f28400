"""The contest before posting, as a grader would test it (issue #35): the
boot cases of tests/fixtures/contest/ in one series, one guest.

boot-cases.mbox is warn-ethtool-rings.mbox, flaky-ktap-case.mbox,
leak-threaded-setting.mbox and leak-veth-netns.mbox together: a
WARN_ON_ONCE in ethtool's ring set path that netdevsim's ethtool-ring.sh
reaches while it passes (chosen because it is named after the changed
file), a Python case that fails once and passes on the retry (its mark
file beside itself: the exported tree is writable in the guest), a test
leaving eth0 threaded with a GRO flush timeout, and one leaving a veth
pair and a network namespace. Every line the findings name is the
series' own, so the base is not booted: one incremental step
(net/ethtool/rings.c) and one guest.
"""

import json
import re

import pytest
from conftest import ROOT

# A build test may pay the first kernel build (pyproject.toml: timeout).
pytestmark = [pytest.mark.build, pytest.mark.tree, pytest.mark.timeout(3600)]

SERIES = ROOT / "tests" / "fixtures" / "contest" / "boot-cases.mbox"


def test_the_contest_cases_are_caught_in_one_guest(cli, kernel_tree, build_dir):
    cp = cli("test", "boot", SERIES, "--tree", kernel_tree, "--target", "virtio-net",
             "--format", "json", env={"NAPIPATCH_BUILD_DIR": str(build_dir)})
    assert cp.returncode == 1, (cp.stdout[-3000:], cp.stderr[-3000:])
    data = json.loads(cp.stdout)
    found = [f for f in data["findings"] if f["check"] == "selftest"]

    def said(f):  # the message without the tip's commit id
        return re.sub(r" at patch 2 \([0-9a-f]{12}\)", " at patch 2", f["message"])

    errors = sorted(said(f) for f in found if f["severity"] == "error")
    assert len(errors) == 3, errors
    assert errors[0].startswith(
        "virtio-net: kernel WARNING splat during selftest drivers/net/netdevsim:ethtool-ring.sh "
        "at patch 2: WARNING: CPU: 0 PID: "), errors
    assert "at net/ethtool/rings.c:254 ethnl_set_rings+" in errors[0]
    assert errors[0].endswith("(first frame ethnl_set_rings at net/ethtool/rings.c:254) "
                              "(a line this series adds)")
    assert errors[1:] == [
        "virtio-net: selftest net:napi_threaded_toggle.sh left netdev state changed at patch 2: "
        "eth0 gro_flush_timeout: 0 -> 20000; eth0 threaded: 0 -> 1",
        "virtio-net: selftest net:veth_peer.sh left netdev state changed at patch 2: "
        "interface vp0 (veth) left behind; network namespace vpeer-ns left behind"]
    splat = next(f for f in found if "splat" in f["message"])
    assert (splat["file"], splat["line"]) == ("net/ethtool/rings.c", 254)
    # the flaky case: an info, a warning for NIPA's contest
    flaky = [f for f in found if " flaky at " in f["message"]]
    assert [said(f) for f in flaky] == [
        "virtio-net: selftest net:lo_settle.py:lo_settle_check flaky at patch 2: failed on "
        "the first run, ok on the retry"]
    assert flaky[0]["severity"] == "info" and flaky[0]["nipa"] == {"contest": "warning"}
    infos = [f["message"] for f in found if f["severity"] == "info"]
    # why each ran: the series' own three, the ring test by its name, the target's
    assert "virtio-net: 5 selftests chosen: net:lo_settle.py, net:napi_threaded_toggle.sh, " \
        "net:veth_peer.sh, drivers/net/netdevsim:ethtool-ring.sh, net:nl_netdev.py" in infos
    assert "virtio-net: selftest drivers/net/netdevsim:ethtool-ring.sh ok" in infos
    assert "virtio-net: selftest net:veth_peer.sh ok" in infos
    # NIPA's contest: a failure, posted as pending on both patches
    assert {p["nipa"]["contest"]["state"] for p in data["series"]["patches"]} == {"fail"}
    assert "building the base" not in cp.stderr
