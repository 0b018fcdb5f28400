"""Which selftests a boot runs and why: on the real 6.12 tree with v5
applied (napipatch.jobs.results.choose), and with a sysctl added."""

from __future__ import annotations

import pytest
from conftest import ROOT, commit_files, git

from napipatch.jobs.results.choose import choose, finding
from napipatch.store.inputs import resolve
from napipatch.store.store import Store
from napipatch.tree.apply import apply_in_index

pytestmark = pytest.mark.tree

V5 = ROOT / "series" / "threaded-busy-poll" / "v5"


def test_v5_runs_the_netdev_family_tests_and_says_why(kernel_tree, tmp_path):
    applied = apply_in_index(kernel_tree, resolve(str(V5), Store(tmp_path / "store"), kernel_tree))
    tip = applied.good[-1]
    got = choose(kernel_tree, applied.base, tip, ["net:nl_netdev.py"])
    why = got.why()
    # patch 5 changes nl_netdev.py: the series' own test, first
    assert list(why)[0] == "net:nl_netdev.py"
    # ... which also uses the sysfs attribute v5's ABI entry changes
    # (/sys/class/net/<iface>/threaded), and is the target's list
    assert why["net:nl_netdev.py"] == (
        "added or changed by the series; exercises netlink family netdev "
        "(Documentation/netlink/specs/netdev.yaml changed); uses sysfs threaded "
        "(Documentation/ABI/testing/sysfs-class-net changed); the target's list")
    # the netdev family changed: its other ynl users (NetdevFamily), net/ first, hw/ last
    fam = [n for n, r in why.items() if r.startswith("exercises netlink family netdev (")]
    assert fam == ["drivers/net:queues.py", "drivers/net:stats.py"], why
    # the hw/ users need a real NIC (in the guest: "does not work on netdevsim"): said, not run
    assert [(c.name, c.reason.split(";")[0]) for c in got.left_out] == [
        ("drivers/net/hw:pp_alloc_fail.py", "it needs a real NIC"),
        ("drivers/net/hw:rss_ctx.py", "it needs a real NIC")]
    # with a real NIC they may run, at most 3 for one family
    real = choose(kernel_tree, applied.base, tip, [], hw=True)
    assert [n for n, r in real.why().items() if r.startswith("exercises")] == [
        "drivers/net:queues.py", "drivers/net:stats.py", "drivers/net/hw:pp_alloc_fail.py"]
    assert [c.name for c in real.left_out] == ["drivers/net/hw:rss_ctx.py"]
    assert got.unmatched == []
    # a test the target ignores (its kernel fails it) is said, not run
    ign = choose(kernel_tree, applied.base, tip, ["net:nl_netdev.py"],
                 ignore=("drivers/net:queues.py",))
    assert "drivers/net:queues.py" not in ign.why()
    assert [c.name for c in ign.left_out] == ["drivers/net:queues.py",
                                              "drivers/net/hw:pp_alloc_fail.py",
                                              "drivers/net/hw:rss_ctx.py"]
    assert ign.left_out[0].reason.startswith("the target ignores it; exercises netlink family")
    f = finding("virtio-net", ign, 5)
    assert f.message == "virtio-net: 2 selftests chosen: net:nl_netdev.py, drivers/net:stats.py"
    assert "drivers/net:queues.py: not run, the target ignores it (exercises netlink family " \
        "netdev" in f.details


def test_without_a_series_only_the_target_list(kernel_tree, base_commit):
    got = choose(kernel_tree, base_commit, base_commit, ["net:nl_netdev.py"])
    assert got.why() == {"net:nl_netdev.py": "the target's list"} and not got.left_out


def test_a_changed_sysctl_leads_to_the_tests_using_it(kernel_tree, base_commit):
    src = "net/core/sysctl_net_core.c"
    text = git(kernel_tree, "show", f"{base_commit}:{src}")
    old = '.procname\t= "optmem_max",'
    assert old in text
    # the name on a changed line: the programs reading net.core.optmem_max, with the reason
    tip = commit_files(kernel_tree, base_commit, {src: text.replace(old, old + " /* ! */", 1)},
                       "net: optmem_max")
    reason = f"uses sysctl optmem_max ({src} changed)"
    assert choose(kernel_tree, base_commit, tip, ["net:nl_netdev.py"]).why() == {
        "net:io_uring_zerocopy_tx.sh": reason, "net:msg_zerocopy.sh": reason,
        "net:nl_netdev.py": "the target's list"}


def test_a_change_no_program_greps_for_runs_the_programs_named_after_it(kernel_tree,
                                                                         base_commit):
    """A WARN_ON_ONCE in ethtool's ring set path (tests/fixtures/contest/
    warn-ethtool-rings.mbox): no program names a string of it, but
    netdevsim's ethtool-ring.sh is named after it (ethtool, ring); a driver
    change no program is named after adds nothing (virtio_net.c)."""
    src = "net/ethtool/rings.c"
    text = git(kernel_tree, "show", f"{base_commit}:{src}")
    old = "\tret = dev->ethtool_ops->set_ringparam(dev, &ringparam,\n"
    tip = commit_files(kernel_tree, base_commit, {
        src: text.replace(old, "\tWARN_ON_ONCE(ringparam.rx_pending != ringparam.tx_pending);\n"
                          + old, 1)}, "ethtool: rings: warn")
    got = choose(kernel_tree, base_commit, tip, ["net:nl_netdev.py"])
    assert got.why() == {
        "drivers/net/netdevsim:ethtool-ring.sh": f"named after {src} (ethnl, ethtool, ring)",
        "net:nl_netdev.py": "the target's list"}
    assert got.unmatched == []  # a file no program is named after is not news
    drv = "drivers/net/virtio_net.c"
    text = git(kernel_tree, "show", f"{base_commit}:{drv}")
    old = "static int virtnet_probe(struct virtio_device *vdev)\n{\n"
    tip = commit_files(kernel_tree, base_commit, {drv: text.replace(old, old + "\t/* x */\n", 1)},
                       "virtio_net: comment")
    assert choose(kernel_tree, base_commit, tip, ["net:nl_netdev.py"]).why() == {
        "net:nl_netdev.py": "the target's list"}
