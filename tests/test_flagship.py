"""The flagship proven: threaded busy poll v5 boots on 6.12 and busy polls.

Runs last (the ``last`` marker, see tests/conftest.py) because it moves the
shared virtio-net build to the v5 tip. The per-patch builds for both
targets are in README.md ("The flagship"), measured with
`napipatch test run threaded-busy-poll@v5`.
"""

import json
import re

import pytest

from conftest import ROOT

pytestmark = [pytest.mark.build, pytest.mark.tree, pytest.mark.last]


def test_v5_boots_and_threaded_2_busy_polls(cli, kernel_tree, build_dir):
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
