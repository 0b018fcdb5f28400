"""The cachelines check: struct changes vs Documentation/networking/net_cachelines/.

Fixtures are commits on the real 6.12 tree (``bool threaded`` is line 2371
of include/linux/netdevice.h there, and the table's row, line 166 of
net_device.rst, already says ``unsigned:1 threaded``: drift that predates
any patch).
"""

from __future__ import annotations

import json
import subprocess

import pytest

from conftest import ROOT, check_findings, edit, one_patch
from napipatch.kernel.cparse import parse_struct
from napipatch.kernel.netcachelines import parse_table, row_matches

ND = "include/linux/netdevice.h"
RST = "Documentation/networking/net_cachelines/net_device.rst"
THREADED_ROW = ("unsigned:1                          threaded                -                   -"
                "                   napi_poll(napi_enable,dev_set_threaded)")


def show(repo, rev, path) -> str:
    return subprocess.run(["git", "-C", str(repo), "cat-file", "blob", f"{rev}:{path}"],
                          capture_output=True, text=True, check=True).stdout


def series(kernel_tree, base_commit, tmp_path, changes, name="p"):
    return one_patch(kernel_tree, base_commit, tmp_path, changes, "net: cachelines fixture\n", name)[0]


def findings(cli, target, *args, check="cachelines"):
    return check_findings(cli, target, check, *args)


def where(fs):
    return [(f["patch"], f["severity"], f["file"], f["line"]) for f in fs]


# ---------------------------------------------------------------- parsers

@pytest.mark.tree
def test_parse_612_net_device_table(kernel_tree, base_commit):
    t = parse_table(show(kernel_tree, base_commit, RST))
    assert t.layout == "aligned"
    assert t.columns == [0, 36, 60, 80, 100]
    rows = t.by_name()
    assert len(t.rows) == 176
    thr = rows["threaded"]
    assert (thr.type, thr.name, thr.tx, thr.rx, thr.line) == ("unsigned:1", "threaded", "-", "-", 166)
    assert thr.comment == "napi_poll(napi_enable,dev_set_threaded)"
    ps = rows["ptype_specific"]
    assert (ps.type, ps.tx, ps.rx) == ("struct_list_head", "", "read_mostly")
    assert rows["page_pools"].type == "struct hlist_head"    # 6.12 writes a few with real spaces
    assert rows["adj_list"].type == "struct"                 # the unnamed nested struct
    assert rows["name"].name == "name[16]"
    assert "net_device" not in rows                          # the ..struct pseudo-row


SIMPLE = """\
===================================
net_device struct fast path usage breakdown
===================================

=================================== =========================== =================== =================== ==========================================
Type                                Name                        fastpath_tx_access  fastpath_rx_access  Comments
=================================== =========================== =================== =================== ==========================================
unsigned long:32                    priv_flags                  read_mostly                             __dev_queue_xmit(tx)
struct list_head                    ptype_specific                                  read_mostly         deliver_ptype_list_skb(rx)
u8                                  threaded                    -                   -                   napi_poll(napi_enable,netif_set_threaded)
=================================== =========================== =================== =================== ==========================================
"""


def test_parse_simple_table():
    t = parse_table(SIMPLE)
    assert t.layout == "simple"
    assert [(r.type, r.name, r.tx, r.rx, r.line) for r in t.rows] == [
        ("unsigned long:32", "priv_flags", "read_mostly", "", 8),
        ("struct list_head", "ptype_specific", "", "read_mostly", 9),
        ("u8", "threaded", "-", "-", 10),
    ]
    assert t.rows[2].comment == "napi_poll(napi_enable,netif_set_threaded)"
    assert t.format_row("u8", "threaded", "-", "-").split() == ["u8", "threaded", "-", "-"]


@pytest.mark.tree
def test_parse_612_net_device_struct(kernel_tree, base_commit):
    fields = {f.name: f for f in parse_struct(show(kernel_tree, base_commit, ND), "net_device")}
    thr = fields["threaded"]
    assert (thr.type, thr.width, thr.group, thr.line) == ("bool", None, None, 2371)
    lltx = fields["lltx"]   # inside struct_group(priv_flags_fast, ...)
    assert (lltx.type, lltx.width, lltx.group, lltx.line) == ("unsigned long", "1", "net_device_read_tx", 2034)
    assert fields["tstats"].group == "net_device_read_txrx"   # inside an anonymous union
    assert (fields["ifindex"].group, fields["ifindex"].line) == ("net_device_read_rx", 2083)
    assert fields["name"].array == "[IFNAMSIZ]"
    rows = parse_table(show(kernel_tree, base_commit, RST)).by_name()
    assert row_matches(rows["lltx"], lltx)
    assert not row_matches(rows["threaded"], thr)             # the 6.12 drift


# ---------------------------------------------------------------- with the tree

@pytest.mark.tree
def test_type_change_without_rst_update(kernel_tree, base_commit, tmp_path, cli):
    nd = edit(kernel_tree, base_commit, ND, "\tbool\t\t\tthreaded;", "\tu8\t\t\tthreaded;")
    d = series(kernel_tree, base_commit, tmp_path, {ND: nd})
    fs = findings(cli, d, "--tree", kernel_tree)
    assert where(fs) == [(1, "warning", ND, 2371)]
    f = fs[0]
    assert f["message"] == ("'threaded' in struct net_device changed from 'bool' to 'u8' but "
                            f"{RST} still says 'unsigned:1 threaded'")
    assert "u8                                  threaded                -                   -" \
           "                   napi_poll(napi_enable,dev_set_threaded)" in f["hint"]
    assert "already said 'unsigned:1 threaded' for 'bool'" in f["details"]

    # The same patch without a tree: found from the -/+ pair under "@@ struct net_device {".
    fs = findings(cli, d)
    assert where(fs) == [(1, "warning", ND, 2371)]
    assert "'threaded' in struct net_device changed from 'bool' to 'u8'" in fs[0]["message"]
    assert RST in fs[0]["message"]


@pytest.mark.tree
def test_type_change_with_rst_update(kernel_tree, base_commit, tmp_path, cli):
    nd = edit(kernel_tree, base_commit, ND, "\tbool\t\t\tthreaded;", "\tu8\t\t\tthreaded;")
    rst = edit(kernel_tree, base_commit, RST, THREADED_ROW, THREADED_ROW.replace("unsigned:1", "u8        "))
    d = series(kernel_tree, base_commit, tmp_path, {ND: nd, RST: rst})
    assert findings(cli, d, "--tree", kernel_tree) == []
    assert findings(cli, d) == []


@pytest.mark.tree
def test_predating_drift_is_not_blamed(kernel_tree, base_commit, tmp_path, cli):
    # Touch the struct (a comment) without changing 'threaded': the table's stale
    # 'unsigned:1 threaded' row is not this patch's doing.
    nd = edit(kernel_tree, base_commit, ND, "\tbool\t\t\tthreaded;", "\tbool\t\t\tthreaded; /* napi */")
    d = series(kernel_tree, base_commit, tmp_path, {ND: nd})
    assert findings(cli, d, "--tree", kernel_tree) == []
    assert findings(cli, d) == []


NEW_FIELD = "\tint\t\t\tifindex;\n"


@pytest.mark.tree
def test_field_added_to_group(kernel_tree, base_commit, tmp_path, cli):
    nd = edit(kernel_tree, base_commit, ND, NEW_FIELD, NEW_FIELD + "\tu32\t\t\trx_hot_count;\n")
    d = series(kernel_tree, base_commit, tmp_path, {ND: nd}, "undoc")
    fs = findings(cli, d, "--tree", kernel_tree)
    assert where(fs) == [(1, "warning", ND, 2084)]
    assert fs[0]["message"] == f"new member 'rx_hot_count' of struct net_device has no row in {RST}"
    assert "u32                                 rx_hot_count            -                   read_mostly" \
        in fs[0]["hint"]
    assert "net_device_read_rx" in fs[0]["hint"]
    assert where(findings(cli, d)) == [(1, "warning", ND, 2084)]

    row = ("u32                                 rx_hot_count            -                   read_mostly"
           "         netif_receive_skb(rx)\n")
    rst = edit(kernel_tree, base_commit, RST, THREADED_ROW + "\n", THREADED_ROW + "\n" + row)
    d = series(kernel_tree, base_commit, tmp_path, {ND: nd, RST: rst}, "doc")
    assert findings(cli, d, "--tree", kernel_tree) == []
    assert findings(cli, d) == []


@pytest.mark.tree
def test_field_moved_between_groups(kernel_tree, base_commit, tmp_path, cli):
    # 'ifindex' leaves net_device_read_rx for the TX group; its row still says rx-only.
    nd = edit(kernel_tree, base_commit, ND, NEW_FIELD, "")
    nd = nd.replace("\ts16\t\t\tnum_tc;\n", "\ts16\t\t\tnum_tc;\n" + NEW_FIELD, 1)
    d = series(kernel_tree, base_commit, tmp_path, {ND: nd})
    fs = findings(cli, d, "--tree", kernel_tree)
    assert where(fs) == [(1, "warning", ND, 2045)]
    assert fs[0]["message"] == ("'ifindex' of struct net_device moved from cacheline group "
                                f"net_device_read_rx to net_device_read_tx but its row in {RST} is unchanged")


@pytest.mark.tree
def test_field_removed(kernel_tree, base_commit, tmp_path, cli):
    nd = edit(kernel_tree, base_commit, ND, "\tbool\t\t\tthreaded;\n", "")
    d = series(kernel_tree, base_commit, tmp_path, {ND: nd})
    fs = findings(cli, d, "--tree", kernel_tree)
    assert where(fs) == [(1, "warning", ND, 2371)]
    assert fs[0]["message"] == (f"member 'threaded' was removed from struct net_device but {RST} "
                                "still has its row (line 166)")
    assert where(findings(cli, d)) == [(1, "warning", ND, 2371)]


# ---------------------------------------------------------------- the real v4 series

def test_v4_series_without_tree(cli):
    cp = cli("--store", ROOT / "series", "check", "threaded-busy-poll@v4", "--only", "cachelines",
             "--format", "json")
    fs = [f for f in json.loads(cp.stdout)["findings"] if f["check"] == "cachelines"]
    assert where(fs) == [(3, "warning", ND, 2445)]
    assert fs[0]["message"] == ("'threaded' in struct net_device changed from 'bool' to 'u8' but "
                                f"{RST} was not updated")


@pytest.mark.parametrize("text, ok", [("u8", True), ("unsigned:1", False), ("u8:1", False)])
def test_row_matches_spelling(text, ok):
    from napipatch.kernel.cparse import Field
    from napipatch.kernel.netcachelines import Row
    assert row_matches(Row(text, "threaded", "", "", "", 1), Field("threaded", "u8", None, None, 1)) is ok
