"""The README's first command: v4 carried onto 6.12, checked with the tree.

series/threaded-busy-poll-6.12 holds the threaded busy poll v4 posting
carried onto Linux 6.12 with its review defects kept (series.toml says
which are v4's and which the carry added): the posting itself applies to
no released tree, so the checks that need a tree could not read it. Run
from the repository root as the README shows it (the store is series/
there), with an empty result cache, it prints the four findings napipatch
was designed around at their FILE:LINE: kdoc (the /* look-alike, patch 1),
cachelines (the u8 without its row, patch 3), ynl (the stale tools/ uapi
copy, patch 3) and callsites (mt76's u64 into the new enum, patch 3).

No kernel build: `napipatch test build` of this series is measured in the
issue's note and builds in the flagship's shared build directory.
"""

import json
import re

import pytest

from conftest import ROOT, Cli, own_cache

pytestmark = pytest.mark.tree

TARGET = "series/threaded-busy-poll-6.12@v4"
FOUR = [
    "include/linux/netdevice.h:560: warning: PATCH 1/4 [kdoc] [*] comment above napi_set_threaded() "
    "is shaped like kernel-doc but opens with /*, so kernel-doc never reads it",
    "include/linux/netdevice.h:2390: warning: PATCH 3/4 [cachelines] [*] 'threaded' in struct "
    "net_device changed from 'bool' to 'u8' but "
    "Documentation/networking/net_cachelines/net_device.rst still says 'unsigned:1 threaded'",
    "tools/include/uapi/linux/netdev.h:77: error: PATCH 3/4 [ynl] [*] "
    "tools/include/uapi/linux/netdev.h is not what the YNL generator makes from "
    "Documentation/netlink/specs/netdev.yaml (not regenerated after the spec change)",
    "drivers/net/wireless/mediatek/mt76/debugfs.c:37: warning: PATCH 3/4 [callsites] "
    "dev_set_threaded() parameter 2 was bool and is now enum netdev_napi_threaded; this caller "
    "passes its u64 'val', no longer turned into 0 or 1",
]


@pytest.fixture(scope="module")
def at_root(tmp_path_factory, shared_base_cache) -> Cli:
    """napipatch run in the repository root (its series/ store), with a result
    cache of its own: every check runs once here, no result comes from another
    test (the base's trusted scripts and grep are the run's, as for `cli`)."""
    return Cli(ROOT, ROOT / "series",
               own_cache(tmp_path_factory.mktemp("carry") / "cache", shared_base_cache))


@pytest.fixture(scope="module")
def text(at_root, kernel_tree):
    """The first command as the README gives it, with an empty cache."""
    return at_root("check", TARGET, "--tree", kernel_tree)


def test_the_first_command_prints_the_four_findings_at_file_line(text):
    assert text.returncode == 1, text.stderr  # errors (ynl, yamllint); every check completed
    assert "Traceback" not in text.stderr
    lines = text.stdout.splitlines()
    assert lines[0] == ("napipatch: threaded-busy-poll-6.12 v4: Add support to do threaded napi "
                        "busy poll (4 patches)")
    assert lines[1].endswith("base: e738e549a014 (base-commit e738e549a014)")
    for want in FOUR:
        assert want in lines, want
    # The ynl finding says how to fix it, and its twin compares the two uapi copies.
    ynl = lines.index(FOUR[2])
    assert lines[ynl + 1] == "    hint: tools/net/ynl/ynl-regen.sh -f"
    assert ("tools/include/uapi/linux/netdev.h:77: error: PATCH 3/4 [ynl] [*] "
            "tools/include/uapi/linux/netdev.h differs from include/uapi/linux/netdev.h "
            "after this patch") in lines
    # The caller that converts (net-sysfs.c range-checks its value) is listed, not flagged.
    assert "    |   net/core/net-sysfs.c:632: dev_set_threaded(dev, val)" in lines
    assert ("    |   drivers/net/wireless/mediatek/mt76/debugfs.c:37: "
            "dev_set_threaded(dev->napi_dev, val) (warning)") in lines
    # Its history is the posting's: v4's own missing link to v3, as for the posting.
    assert ("SERIES: warning: [version-link] the changelog of the cover letter has no lore link "
            "to v3 <20250205001000.0-skhawaja@reconstructed.invalid>") in lines
    total = lines[-1]
    # [*]: napipatch fix fixes them (the kdoc, cachelines and the two ynl findings)
    assert re.fullmatch(r"total: \d+ errors, \d+ warnings, \d+ info; 4 fixable \[\*\] "
                        r"\(napipatch fix\); (\d+) of \1 checks completed", total), total


def test_the_same_findings_in_json_and_leftover_read_the_helper(at_root, text, kernel_tree):
    # After the text run: the same results, from the cache.
    cp = at_root("check", TARGET, "--tree", kernel_tree, "--format", "json")
    data = json.loads(cp.stdout)
    got = {(f["check"], f["patch"], f["severity"], f["file"], f["line"]) for f in data["findings"]
           if f["severity"] != "info"}
    assert {("kdoc", 1, "warning", "include/linux/netdevice.h", 560),
            ("cachelines", 3, "warning", "include/linux/netdevice.h", 2390),
            ("ynl", 3, "error", "tools/include/uapi/linux/netdev.h", 77),
            ("callsites", 3, "warning", "drivers/net/wireless/mediatek/mt76/debugfs.c", 37)} <= got
    status = {c["id"]: c["status"] for c in data["checks"]}
    assert status["apply"] == "pass"  # carried: every patch applies on 6.12
    # v4's helper flushes HZ >= 1000 and napi_complete_done() !!timeout: not a
    # copy of its body, so leftover completes without a finding (series.toml).
    assert status["leftover"] == "pass"
    assert data["summary"]["exit_status"] == cp.returncode == 1


def test_series_show_says_it_is_a_carry(at_root):
    out = at_root("series", "show", TARGET.removeprefix("series/"), check=0).stdout
    assert ("  carried from: threaded-busy-poll@v4 (not a posting; its history is that one's; "
            "series.toml says what the carry changed)") in out.splitlines()
