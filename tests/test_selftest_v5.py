"""The v5 series' own selftest catches a broken patch 4.

Patch 4 is changed so that napi-get reports a NAPI in busy-poll mode as
``enabled``: it still compiles and boots, the plan's sysfs checks pass,
but nl_netdev.py's napi_threaded_check (added by patch 5) fails in the vng
guest, and ``napipatch test boot`` says so with a ``selftest`` error.

Runs after the flagship (marker ``last``, then file order), from its v5 build: only
net/core/netdev-genl.c is rebuilt for the tip. The base's nl_netdev.py has
no napi_threaded_check, so the failure is new without booting the base.
"""

import json
import shutil

import pytest

from conftest import ROOT

# A build test may pay the first kernel build (pyproject.toml: timeout).
pytestmark = [pytest.mark.build, pytest.mark.tree, pytest.mark.last, pytest.mark.timeout(3600)]

V5 = ROOT / "series" / "threaded-busy-poll" / "v5"
GOOD = "+\tif (state & NAPIF_STATE_THREADED_BUSY_POLL)\n+\t\treturn NETDEV_NAPI_THREADED_BUSY_POLL;\n"
BAD = "+\tif (state & NAPIF_STATE_THREADED_BUSY_POLL)\n+\t\treturn NETDEV_NAPI_THREADED_ENABLED;\n"


def test_busy_poll_reported_as_enabled_fails_napi_threaded_check(cli, kernel_tree, build_dir,
                                                                  tmp_path):
    series = tmp_path / "v5-bad"
    shutil.copytree(V5, series)
    p4 = next(series.glob("0004-*.patch"))
    text = p4.read_text()
    assert GOOD in text
    p4.write_text(text.replace(GOOD, BAD))
    cp = cli("test", "boot", series, "--tree", kernel_tree, "--target", "virtio-net",
             "--format", "json", env={"NAPIPATCH_BUILD_DIR": str(build_dir)})
    assert cp.returncode == 1, (cp.stdout[-3000:], cp.stderr[-3000:])
    data = json.loads(cp.stdout)
    errors = [f for f in data["findings"] if f["check"] == "selftest" and f["severity"] == "error"]
    assert [f["message"].split(" failed")[0] for f in errors] == \
        ["virtio-net: selftest net:nl_netdev.py:napi_threaded_check"], errors
    err = errors[0]
    assert err["patch"] == 5 and "failed at patch 5 (" in err["message"]
    # the excerpt is the test's own KTAP: the failed check and its case line
    assert "busy-poll" in err["details"] and "not ok" in err["details"], err["details"]
    assert "napi_threaded_check" in err["details"]
    # the other cases still pass
    others = {f["message"] for f in data["findings"] if f["check"] == "selftest"
              and f["severity"] == "info"}
    assert "virtio-net: selftest net:nl_netdev.py:empty_check ok" in others, others
    checks = {c["id"]: c["status"] for c in data["checks"]}
    assert checks["selftest/virtio-net"] == "fail"
    # it still compiles and boots: no build errors, the kernel came up
    assert not [f for f in data["findings"] if f["check"] == "build" and f["severity"] == "error"]
    assert any(f["check"] == "boot" and f["message"].startswith("booted virtio-net")
               for f in data["findings"])
