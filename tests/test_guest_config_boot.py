"""The guest kernel carries the config its chosen selftests need (issue 45),
on the 6.12 tree, through ``napipatch test run`` as a user runs it.

A clean series touching net/core/dev_addr_lists.c (a comment, then a KUnit
expectation written the other way round) leads the chooser to both
``dev_addr_lists.sh`` (bonding and team, named after the file): they need
CONFIG_BONDING and CONFIG_NET_TEAM, which the virtio-net kernel has only
through the merged fragments of drivers/net/bonding and team. They run and
pass, and contest is success on every patch. A second series dropping
dev_uc_unsync()'s unsync (the macvlan address stays on the bond's lowers)
fails them at the tip; the base's copies pass in a guest of the base; the
forecast is contest fail with the failing case named. It reuses the first
series' build: only what its patch changes is compiled.

A base whose team fragment asks for an option the tree lost configures to
the same kernel (nothing compiled), is said as an info line, and the team
test skipping there names it.

Guests: one for the clean series, two for the broken one (tip, base), one
for the lost option. The
target's own list (net:nl_netdev.py, whose page_pool_check has a 2 s
deadline a loaded 2-core machine can miss) is left out through a copy of
the shipped targets with ``run = []``: same fragments, same build directory.
"""

from __future__ import annotations

import json
import re
import shutil

import pytest
from conftest import ROOT, commit_files, edit, format_patch, nipa_states

pytestmark = [pytest.mark.build, pytest.mark.tree, pytest.mark.timeout(3600)]

F = "net/core/dev_addr_lists.c"
KT = "net/core/dev_addr_lists_test.c"
UNSYNC = "void dev_uc_unsync(struct net_device *to, struct net_device *from)\n{\n"
DROP = "\t__hw_addr_unsync(&to->uc, &from->uc, to->addr_len);\n\t__dev_set_rx_mode(to);\n"
TESTS = ["drivers/net/bonding:dev_addr_lists.sh", "drivers/net/team:dev_addr_lists.sh"]
FRAGMENTS = ("virtio-net: guest kernel config: config.fragment + drivers/net/config + "
             "drivers/net/bonding/config + drivers/net/team/config + drivers/net/netdevsim/config")


@pytest.fixture
def targets_dir(tmp_path):
    """The shipped targets, virtio-net without its own list; idpf left out."""
    d = tmp_path / "targets"
    shutil.copytree(ROOT / "targets" / "virtio-net", d / "virtio-net")
    toml = d / "virtio-net" / "target.toml"
    text = toml.read_text()
    assert 'run = ["net:nl_netdev.py"]' in text
    toml.write_text(text.replace('run = ["net:nl_netdev.py"]', "run = []"))
    return d


def _run(cli, series, kernel_tree, build_dir, targets_dir) -> tuple[dict, int]:
    cp = cli("test", "run", series, "--tree", kernel_tree, "--only", "build,boot,selftest",
             "--format", "json", env={"NAPIPATCH_BUILD_DIR": str(build_dir),
                                      "NAPIPATCH_TARGETS_DIR": str(targets_dir)})
    assert cp.returncode in (0, 1), (cp.stdout[-3000:], cp.stderr[-3000:])
    return json.loads(cp.stdout), cp.returncode


def _change(repo, parent: str, path: str, old: str, new: str, message: str) -> str:
    """A commit on ``parent`` replacing ``old`` by ``new`` in ``path``."""
    return commit_files(repo, parent, {path: edit(repo, parent, path, old, new)}, message)


def _compiled(data: dict) -> list[int]:
    """Objects compiled at each build step (base, patch 1, ...), from the build's summary."""
    (built,) = [f for f in data["findings"] if f["check"] == "build"
                and f["message"].startswith("built virtio-net")]
    return [int(n) for n in re.findall(r"(\d+) compiled", built["details"])]


def test_the_bonding_and_team_selftests_run_in_the_guest_and_forecast_contest(
        cli, kernel_tree, base_commit, build_dir, targets_dir, tmp_path):
    comment = "\t/* a lower device of another type has a list of its own */\n"
    p1 = _change(kernel_tree, base_commit, F, UNSYNC, UNSYNC + comment,
                 "net: core: say why dev_uc_unsync() returns early\n\nA comment.\n")
    p2 = _change(kernel_tree, p1, KT, "KUNIT_EXPECT_EQ(test, 2, datp->addr_seen);",
                 "KUNIT_EXPECT_EQ(test, datp->addr_seen, 2);",
                 "net: core: dev_addr_lists_test: actual value first\n\nAs the others.\n")
    data, rc = _run(cli, format_patch(kernel_tree, f"{base_commit}..{p2}", tmp_path / "clean"),
                    kernel_tree, build_dir, targets_dir)
    found = [f for f in data["findings"] if f["check"] == "selftest"]
    said = [f["message"] for f in found]
    assert rc == 0, [f for f in found if f["severity"] != "info"]
    assert FRAGMENTS in said
    # on 6.12 every option the four fragments ask for is set: no line lacking one
    assert not [m for m in said if "kernel config CONFIG_" in m], said
    assert "virtio-net: 2 selftests chosen: " + ", ".join(TESTS) in said
    for t in TESTS:
        assert f"virtio-net: selftest {t} ok" in said, said
    assert nipa_states(data, "contest") == ["success", "success"]
    checks = {c["id"]: c["status"] for c in data["checks"]}
    assert checks["selftest/virtio-net"] == "info" and checks["boot/virtio-net"] == "info"

    # the same dirs, the same kernel config: only the changed file is compiled
    bad = _change(kernel_tree, base_commit, F, DROP, "\t__dev_set_rx_mode(to);\n",
                  "net: core: dev_uc_unsync() leaves the lower's list alone\n\nBroken.\n")
    data, rc = _run(cli, format_patch(kernel_tree, f"{base_commit}..{bad}", tmp_path / "bad"),
                    kernel_tree, build_dir, targets_dir)
    base_step, patch_step = _compiled(data)
    assert 0 < patch_step <= 15, patch_step  # a cold build of this config compiles ~1,100
    assert base_step <= 15, base_step
    errors = [f for f in data["findings"] if f["check"] == "selftest" and f["severity"] == "error"]
    assert rc == 1 and sorted(f["message"].split(" failed")[0] for f in errors) == \
        [f"virtio-net: selftest {t}" for t in TESTS], errors
    bond = next(f for f in errors if "bonding" in f["message"])
    assert "failed at patch 1 (" in bond["message"] and "already failing" not in bond["message"]
    # the failing case, as the test's log names it
    assert re.search(r"TEST: bonding cleanup mode active-backup\s+\[FAIL\]", bond["details"]), \
        bond["details"]
    assert "macvlan unicast address still present on a slave" in bond["details"]
    assert nipa_states(data, "contest") == ["fail"]


def test_an_option_a_fragment_asks_for_and_the_kernel_lacks_is_said_and_names_the_skip(
        cli, kernel_tree, base_commit, build_dir, targets_dir, tmp_path):
    """A base whose drivers/net/team/config asks for an option the tree no
    longer has (a fragment outliving a Kconfig rename): the kernel is the
    same (the reconfigure compiles nothing), the report names the option
    and why, and the team test, which then skips, says which it lacked."""
    cfg = "tools/testing/selftests/drivers/net/team/config"
    base = _change(kernel_tree, base_commit, cfg, "CONFIG_NET_TEAM=y\n",
                   "CONFIG_NET_TEAM=y\nCONFIG_NET_TEAM_MODE_NOSUCH=y\n",
                   "selftests: team: a mode the tree lost\n\nA fixture.\n")
    prog = "tools/testing/selftests/drivers/net/team/dev_addr_lists.sh"
    tip = _change(kernel_tree, base, prog, "require_command teamd\n",
                  "require_command teamd_nosuch\n",
                  "selftests: team: need the lost mode's daemon\n\nA fixture.\n")
    data, _rc = _run(cli, format_patch(kernel_tree, f"{base}..{tip}", tmp_path / "lost"),
                     kernel_tree, build_dir, targets_dir)
    said = [f["message"] for f in data["findings"] if f["check"] == "selftest"]
    assert _compiled(data)[0] <= 15  # the same .config: the reconfigure rebuilt nothing
    assert [m for m in said if "kernel config CONFIG_" in m] == [
        ("virtio-net: kernel config CONFIG_NET_TEAM_MODE_NOSUCH=y (drivers/net/team/config) is "
         "not set in the guest kernel: no such option in this tree (removed or renamed)")], said
    (skip,) = [m for m in said if m.startswith("virtio-net: selftest drivers/net/team:")]
    assert " skip" in skip and skip.endswith(
        "(the guest kernel lacks CONFIG_NET_TEAM_MODE_NOSUCH, which drivers/net/team/config "
        "asks for)"), skip
