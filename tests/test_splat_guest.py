"""A kernel splat during a selftest that still passes fails the series.

The one-patch series in tests/fixtures/splat adds a WARN_ON_ONCE to the
netdev family's dev-get doit, which nl_netdev.py's lo_check reaches
(dev-get of ifindex 1): the kernel warns, the test prints ok. ``napipatch
test boot`` exits 1 with a ``selftest`` error naming the splat and its
first frame at the FILE:LINE decode_stacktrace.sh gives. The warning's
line is one the series adds, so the base is not booted: one guest boot,
and one incremental step of the shared build (net/core/netdev-genl.c).
"""

import json
import re

import pytest
from conftest import ROOT

# A build test may pay the first kernel build (pyproject.toml: timeout).
pytestmark = [pytest.mark.build, pytest.mark.tree, pytest.mark.timeout(3600)]

SERIES = ROOT / "tests" / "fixtures" / "splat"


def test_a_warn_on_in_the_dev_get_doit_is_a_selftest_error_at_its_line(cli, kernel_tree,
                                                                        build_dir):
    cp = cli("test", "boot", SERIES, "--tree", kernel_tree, "--target", "virtio-net",
             "--format", "json", env={"NAPIPATCH_BUILD_DIR": str(build_dir)})
    assert cp.returncode == 1, (cp.stdout[-3000:], cp.stderr[-3000:])
    data = json.loads(cp.stdout)
    errors = [f for f in data["findings"] if f["severity"] == "error"]
    assert [(f["check"], f["file"], f["line"]) for f in errors] == \
        [("selftest", "net/core/netdev-genl.c", 118)], errors
    err = errors[0]
    assert err["message"].startswith("virtio-net: kernel WARNING splat during selftest "
                                     "net:nl_netdev.py at patch 1 ("), err["message"]
    assert "(first frame netdev_nl_dev_get_doit at net/core/netdev-genl.c:118)" in err["message"]
    assert err["message"].endswith("(a line this series adds)")
    # the details are the decoded block: frames as FILE:LINE, not offsets
    assert "netdev_nl_dev_get_doit (net/core/netdev-genl.c:118" in err["details"], err["details"]
    # (constprop'd or not, as the kernel's config has it: with NET_NS it is not)
    assert re.search(r"\? genl_family_rcv_msg_doit(\.constprop\.\d+)? \(net/netlink/genetlink\.c:",
                     err["details"]), err["details"]
    # the test itself passed: its cases are info, lo_check among them
    infos = {f["message"] for f in data["findings"] if f["check"] == "selftest"
             and f["severity"] == "info"}
    assert "virtio-net: selftest net:nl_netdev.py:lo_check ok" in infos, infos
    checks = {c["id"]: c["status"] for c in data["checks"]}
    assert checks["selftest/virtio-net"] == "fail"
    assert checks["boot/virtio-net"] == "info"  # booted, the plan passed: no splat there
    # the base was not booted: the warning's line is the series' own
    assert "building the base" not in cp.stderr
