"""The abi check: a new sysfs attribute needs a Documentation/ABI What: entry.

Fixtures are commits on the real 6.12 tree: net-sysfs.c gains a
``busy_poll_budget`` attribute on every net_device (``DEVICE_ATTR_RW`` plus
its ``net_class_attrs`` member), with and without its entry in
Documentation/ABI/testing/sysfs-class-net. Each is checked with the tree
and from the mails alone.
"""

from __future__ import annotations

import pytest

from conftest import ROOT, check_findings, commit_files, edit, format_patch, one_patch
from napipatch.kernel.abidoc import What, covers, parse_whats

SYSFS = "net/core/net-sysfs.c"
ABI = "Documentation/ABI/testing/sysfs-class-net"
QUEUES_ABI = "Documentation/ABI/testing/sysfs-class-net-queues"

ATTR = """static DEVICE_ATTR_RW(threaded);

static ssize_t busy_poll_budget_show(struct device *dev,
				     struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\\n", 8);
}

static ssize_t busy_poll_budget_store(struct device *dev,
				      struct device_attribute *attr,
				      const char *buf, size_t len)
{
	return len;
}
static DEVICE_ATTR_RW(busy_poll_budget);
"""
ENTRY = """
What:		/sys/class/net/<iface>/busy_poll_budget
Date:		Jan 2027
KernelVersion:	6.14
Contact:	netdev@vger.kernel.org
Description:
		Number of packets a threaded busy poll loop polls at once.
"""
QUEUE_ATTR = """static struct netdev_queue_attribute queue_traffic_class __ro_after_init
	= __ATTR_RO(traffic_class);

static struct netdev_queue_attribute queue_tx_budget __ro_after_init
	= __ATTR_RO(tx_budget);
"""


def _sysfs(kernel_tree, base_commit, queue=False):
    text = edit(kernel_tree, base_commit, SYSFS, "static DEVICE_ATTR_RW(threaded);\n", ATTR)
    text = text.replace("\t&dev_attr_threaded.attr,\n",
                        "\t&dev_attr_threaded.attr,\n\t&dev_attr_busy_poll_budget.attr,\n")
    if queue:
        text = text.replace("static struct netdev_queue_attribute queue_traffic_class "
                            "__ro_after_init\n\t= __ATTR_RO(traffic_class);\n", QUEUE_ATTR)
        text = text.replace("\t&queue_traffic_class.attr,\n",
                            "\t&queue_traffic_class.attr,\n\t&queue_tx_budget.attr,\n")
    return text


def _abi(kernel_tree, base_commit):
    return edit(kernel_tree, base_commit, ABI, "		== ==================================\n",
                "		== ==================================\n", 1) + ENTRY


def _patch(kernel_tree, base_commit, tmp_path, changes, name):
    return one_patch(kernel_tree, base_commit, tmp_path, changes,
                     "net: add a busy_poll_budget sysfs attribute\n", name)[0]


pytestmark = pytest.mark.tree


@pytest.fixture
def bad(kernel_tree, base_commit, tmp_path):
    return _patch(kernel_tree, base_commit, tmp_path,
                  {SYSFS: _sysfs(kernel_tree, base_commit)}, "bad")


@pytest.fixture
def good(kernel_tree, base_commit, tmp_path):
    return _patch(kernel_tree, base_commit, tmp_path,
                  {SYSFS: _sysfs(kernel_tree, base_commit),
                   ABI: _abi(kernel_tree, base_commit)}, "good")


@pytest.mark.parametrize("with_tree", [True, False])
def test_new_device_attr_without_abi_entry_warns(cli, kernel_tree, bad, with_tree):
    args = ("--tree", kernel_tree) if with_tree else ()
    fs = check_findings(cli, bad, "abi", *args)
    assert [(f["severity"], f["patch"], f["file"]) for f in fs] == [("warning", 1, SYSFS)]
    f = fs[0]
    assert "'busy_poll_budget'" in f["message"]
    assert "/sys/class/net/<iface>/busy_poll_budget" in f["message"]
    assert ABI in f["hint"]
    post = (bad / next(p.name for p in bad.iterdir())).read_text()
    assert "+static DEVICE_ATTR_RW(busy_poll_budget);" in post
    # DEVICE_ATTR_RW(threaded) is line 643 of 6.12's net-sysfs.c; ours is 14 below.
    assert f["line"] == 657


@pytest.mark.parametrize("with_tree", [True, False])
def test_same_attr_with_its_abi_entry_is_quiet(cli, kernel_tree, good, with_tree):
    args = ("--tree", kernel_tree) if with_tree else ()
    assert check_findings(cli, good, "abi", *args) == []


def test_entry_already_in_the_tree_counts(cli, kernel_tree, base_commit, tmp_path):
    """The ABI entry landed in an earlier commit: the tree's What: lines are read."""
    doc = commit_files(kernel_tree, base_commit, {ABI: _abi(kernel_tree, base_commit)},
                       "doc first\n")
    code = commit_files(kernel_tree, doc, {SYSFS: _sysfs(kernel_tree, doc)}, "code\n")
    out = format_patch(kernel_tree, f"{doc}..{code}", tmp_path / "split")
    assert check_findings(cli, out, "abi", "--tree", kernel_tree) == []
    # From the mails alone the earlier commit is unknown: the entry is missing.
    assert len(check_findings(cli, out, "abi")) == 1


def test_queue_attribute_path_and_file(cli, kernel_tree, base_commit, tmp_path):
    p = _patch(kernel_tree, base_commit, tmp_path,
               {SYSFS: _sysfs(kernel_tree, base_commit, queue=True),
                ABI: _abi(kernel_tree, base_commit)}, "queue")
    fs = check_findings(cli, p, "abi", "--tree", kernel_tree)
    assert [f["message"] for f in fs] == [
        "new sysfs attribute 'tx_budget' (/sys/class/net/<iface>/queues/tx-<queue>/tx_budget) "
        "has no Documentation/ABI entry"]
    assert QUEUES_ABI in fs[0]["hint"]


def test_touching_an_existing_attribute_is_quiet(cli, kernel_tree, base_commit, tmp_path):
    text = edit(kernel_tree, base_commit, SYSFS, "static DEVICE_ATTR_RW(threaded);\n",
                "static DEVICE_ATTR_RW(threaded); /* napi threaded mode */\n")
    p = _patch(kernel_tree, base_commit, tmp_path, {SYSFS: text}, "touch")
    assert check_findings(cli, p, "abi", "--tree", kernel_tree) == []
    assert check_findings(cli, p, "abi") == []


@pytest.mark.parametrize("version", ["v4", "v5"])
def test_shipped_series_are_quiet(cli, kernel_tree, version):
    target = ROOT / "series" / "threaded-busy-poll" / version
    assert check_findings(cli, target, "abi") == []
    assert check_findings(cli, target, "abi", "--tree", kernel_tree) == []


def test_what_lines_and_placeholders():
    ws = parse_whats("What:\t\t/sys/class/net/<iface>/queues/rx-<queue>/rps_cpus\n"
                     "\t\t/sys/class/net/<iface>/queues/rx-<queue>/rps_flow_cnt\n"
                     "Date:\t\tMarch 2010\n\t\t/sys/not/a/what\n", "f")
    assert [(w.path, w.line) for w in ws] == [
        ("/sys/class/net/<iface>/queues/rx-<queue>/rps_cpus", 1),
        ("/sys/class/net/<iface>/queues/rx-<queue>/rps_flow_cnt", 2)]
    w = What("/sys/class/net/<iface>/threaded", "f", 1)
    assert covers(w, "/sys/class/net/<iface>/threaded", "threaded")
    assert not covers(w, "/sys/class/net/<iface>/queues/tx-<queue>/threaded", "threaded")
    assert not covers(w, "/sys/class/net/<iface>/threaded_mode", "threaded_mode")


def test_documented_name_at_another_path_still_warns(cli, kernel_tree, base_commit, tmp_path):
    """sysfs-class-net documents <iface>/threaded; a tx queue's threaded file is new ABI."""
    text = edit(kernel_tree, base_commit, SYSFS,
                "static struct netdev_queue_attribute queue_traffic_class __ro_after_init\n"
                "\t= __ATTR_RO(traffic_class);\n",
                QUEUE_ATTR.replace("tx_budget", "threaded").replace("queue_tx_", "queue_"))
    text = text.replace("\t&queue_traffic_class.attr,\n",
                        "\t&queue_traffic_class.attr,\n\t&queue_threaded.attr,\n")
    p = _patch(kernel_tree, base_commit, tmp_path, {SYSFS: text}, "qthreaded")
    fs = check_findings(cli, p, "abi", "--tree", kernel_tree)
    assert [f["message"] for f in fs] == [
        "new sysfs attribute 'threaded' (/sys/class/net/<iface>/queues/tx-<queue>/threaded) "
        "has no Documentation/ABI entry"]


def test_driver_attribute_outside_net_sysfs(cli, kernel_tree, base_commit, tmp_path):
    """Outside net-sysfs.c the path is unknown: any What: ending in the name counts."""
    drv = "drivers/net/dummy.c"
    anchor = "MODULE_LICENSE("
    new = ("static ssize_t xmit_count_show(struct device *d, struct device_attribute *a,\n"
           "\t\t\t       char *buf)\n{\n\treturn sysfs_emit(buf, \"0\\n\");\n}\n"
           "static DEVICE_ATTR_RO(xmit_count);\n\n")
    p = _patch(kernel_tree, base_commit, tmp_path,
               {drv: edit(kernel_tree, base_commit, drv, anchor, new + anchor)}, "drv")
    fs = check_findings(cli, p, "abi", "--tree", kernel_tree)
    assert [(f["file"], f["message"]) for f in fs] == [
        (drv, "new sysfs attribute 'xmit_count' (a sysfs file named 'xmit_count') has no "
              "Documentation/ABI entry")]
    # 'carrier' is documented (as /sys/class/net/<iface>/carrier): taken as documented.
    q = _patch(kernel_tree, base_commit, tmp_path,
               {drv: edit(kernel_tree, base_commit, drv, anchor,
                          new.replace("xmit_count", "carrier") + anchor)}, "drv2")
    assert check_findings(cli, q, "abi", "--tree", kernel_tree) == []
