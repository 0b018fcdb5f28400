"""The guest kernel's config: the target's fragments plus the selftest dirs'
``config`` fragments (target.toml [selftests] config-dirs), read from the
6.12 tree's base; what they ask for and the merged .config lacks, and why."""

from __future__ import annotations

import pytest

from napipatch.jobs import targets
from napipatch.jobs.build import guestconfig
from napipatch.jobs.executor import TESTS
from napipatch.jobs.results.selftests import CaseResult
from napipatch.kernel import kconfig

DIRS = ["drivers/net", "drivers/net/bonding", "drivers/net/team", "drivers/net/netdevsim"]


def test_a_fragment_and_a_config_parse_alike_and_m_is_met_by_y():
    text = "CONFIG_A=y\n# CONFIG_B is not set\nCONFIG_C=m\nCONFIG_D=\"x y\"\n  CONFIG_A=m\n# c\n"
    assert kconfig.parse(text) == {"CONFIG_A": "m", "CONFIG_B": "n", "CONFIG_C": "m",
                                   "CONFIG_D": '"x y"'}
    assert kconfig.met("m", "y") and kconfig.met("y", "y") and kconfig.met("n", "n")
    assert not kconfig.met("y", "m") and not kconfig.met("y", "n")


def test_lacking_names_each_option_once_with_the_fragment_asking():
    frags = [("a/config", "CONFIG_X=y\nCONFIG_M=m\n"), ("b/config", "CONFIG_X=y\nCONFIG_Z=y\n")]
    found = kconfig.lacking(frags, "CONFIG_M=y\nCONFIG_Z=y\n# CONFIG_X is not set\n")
    assert [(x.option, x.source, x.got) for x in found] == [("CONFIG_X", "a/config", "n")]
    assert found[0].line() == "CONFIG_X=y (a/config) is not set in the guest kernel"


def test_virtio_net_declares_the_dirs_and_its_flavour_merges_none():
    t = targets.load("virtio-net")
    assert list(t.config_dirs) == DIRS
    assert t.options()["CONFIG_NET_SCHED"] == "y"  # the menus the fragments assume open
    assert "bonding.max_bonds=0" in t.boot.append  # a builtin bonding makes no bond0
    assert targets.load("virtio-net", "debug").config_dirs == ()
    assert targets.load("idpf").config_dirs == ()


@pytest.mark.tree
def test_widen_reads_the_dirs_fragments_from_the_base(kernel_tree, base_commit):
    plain = targets.load("virtio-net")
    wide = guestconfig.widen(plain, kernel_tree, base_commit)
    assert [s for s, _t in wide.extra] == [f"{d}/config" for d in DIRS]
    bonding = dict(wide.extra)["drivers/net/bonding/config"]
    assert kconfig.parse(bonding)["CONFIG_BONDING"] == "y"  # the 6.12 file itself
    assert wide.config_hash != plain.config_hash  # another config: configure again
    assert wide.options() == plain.options()  # the target's own must hold, the rest may not
    # the debug flavour, idpf and a boot without a base are left as they are
    debug = targets.load("virtio-net", "debug")
    assert guestconfig.widen(debug, kernel_tree, base_commit).extra == ()
    assert guestconfig.widen(targets.load("idpf"), kernel_tree, base_commit).extra == ()
    assert guestconfig.widen(plain, kernel_tree, None).extra == ()
    # a chosen test's dir whose config is not merged is said; one without config is not
    left = guestconfig.unmerged(wide, kernel_tree, base_commit,
                                ["net", "drivers/net/bonding", "drivers/net/hw"])
    assert left == ["net"]


@pytest.mark.tree
def test_why_an_option_is_not_set_comes_from_the_trees_kconfig(kernel_tree):
    assert kconfig.why_not(kernel_tree, "CONFIG_PTP_1588_CLOCK_MOCK") == \
        "depends on PTP_1588_CLOCK (drivers/ptp/Kconfig)"
    assert kconfig.why_not(kernel_tree, "CONFIG_NAPIPATCH_NO_SUCH") == \
        "no such option in this tree (removed or renamed)"
    assert kconfig.why_not(kernel_tree, "CONFIG_ARM64_SVE") == "defined only for arm64, not x86"
    assert kconfig.why_not(kernel_tree, "CONFIG_TRACEPOINTS") == \
        "no prompt: set only by an option that selects it (init/Kconfig)"
    # with the .config: only what it lacks of the dependencies (net/config's asks, on virtio-net)
    have = {"CONFIG_SYSFS": "y", "CONFIG_NET": "y", "CONFIG_INET": "y"}
    assert kconfig.why_not(kernel_tree, "CONFIG_RPS", have=have) == \
        "depends on SMP, not set (net/Kconfig)"
    assert kconfig.why_not(kernel_tree, "CONFIG_TEST_BPF", have=have) == \
        "module only (depends on m) and the kernel has no modules (lib/Kconfig.debug)"
    assert kconfig.why_not(kernel_tree, "CONFIG_CGROUP_BPF", have={"CONFIG_BPF_SYSCALL": "y"}) \
        == "the menu or if around it is off (init/Kconfig)"  # inside `if CGROUPS`


def test_the_report_names_the_fragments_and_each_lacking_option():
    t = targets.load("virtio-net")
    t.extra = (("drivers/net/bonding/config", "CONFIG_BONDING=y\n"),
               ("drivers/net/netdevsim/config", "CONFIG_PTP_1588_CLOCK_MOCK=y\n"))
    lack = [kconfig.Lacking("CONFIG_PTP_1588_CLOCK_MOCK", "y", "n", "drivers/net/netdevsim/config",
                            "depends on PTP_1588_CLOCK (drivers/ptp/Kconfig)")]
    out = guestconfig.findings(t, lack, ["net"], 3)
    assert [f.message for f in out] == [
        ("virtio-net: guest kernel config: config.fragment + drivers/net/bonding/config + "
         "drivers/net/netdevsim/config"),
        ("virtio-net: kernel config CONFIG_PTP_1588_CLOCK_MOCK=y (drivers/net/netdevsim/config) "
         "is not set in the guest kernel: depends on PTP_1588_CLOCK (drivers/ptp/Kconfig)")]
    # on the boot job's tests channel, which the selftest check reads (stamped "selftest")
    assert {f.check for f in out} == {TESTS} and {f.patch for f in out} == {3}
    assert "not merged (not in the target's [selftests] config-dirs" in out[0].details
    assert "net/config" in out[0].details
    cases = [CaseResult("drivers/net/netdevsim:x.sh", "skip", reason="exit status 4"),
             CaseResult("net:y.sh", "skip"), CaseResult("drivers/net/netdevsim:z.sh", "ok"),
             CaseResult("drivers/net/team:t.sh", "skip", reason="exit status 4")]
    guestconfig.explain_skips(cases, lack, ["net"])
    assert [c.reason for c in cases] == [
        ("exit status 4 (the guest kernel lacks CONFIG_PTP_1588_CLOCK_MOCK, which "
         "drivers/net/netdevsim/config asks for)"),
        "net/config is not merged into the guest kernel", "", "exit status 4"]


@pytest.mark.tree
def test_the_shipped_idpf_target_configures(kernel_tree, tmp_path, monkeypatch):
    """The suite builds a leaner idpf (tests/fixtures/targets/idpf: what the
    driver needs, half the CPU of a cold build); the shipped target's own
    fragments must still make a .config with every option they ask for.
    Configured as the builder does (tinyconfig, the fragments, olddefconfig)
    from the prepared tree into a directory of the test's own: nothing built."""
    from napipatch.jobs.build.builder import Builder

    monkeypatch.delenv(targets.ENV, raising=False)  # the shipped targets, not the tests'
    shipped = targets.load("idpf")
    assert shipped.options()["CONFIG_IDPF"] == "m" and shipped.options()["CONFIG_VIRTIO_NET"] == "y"
    b = Builder(kernel_tree, shipped, tmp_path / "cache")
    b.dirs.root.mkdir(parents=True)
    b.dirs.src.symlink_to(kernel_tree)  # the tree at its base: make writes only to O=
    b.configure(tmp_path / "config.log")
    assert b.unmet() == []
    cfg = kconfig.parse((b.dirs.obj / ".config").read_text())
    assert (cfg["CONFIG_IDPF"], cfg["CONFIG_MODULES"]) == ("m", "y")
    assert not (b.dirs.obj / "drivers").exists()  # configured (kconfig's own tools), not built
