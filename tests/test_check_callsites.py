"""The callsites check on the real 6.12 tree.

Fixtures are commits on 6.12 (commit_files/edit), mailed with format_patch
and checked through the CLI. Call-site lines are those of 6.12: the
fixtures replace call lines in place, so driver line numbers do not move.
"""

from __future__ import annotations

import re

import pytest

from conftest import check_json, edit, one_patch

pytestmark = pytest.mark.tree

NETDEVICE = "include/linux/netdevice.h"
DEV_C = "net/core/dev.c"

# dev_set_threaded() callers in 6.12 passing `true` (kernel-tooling.md).
TRUE_CALLERS = {
    "drivers/net/ethernet/atheros/atl1c/atl1c_main.c": (2694, "dev_set_threaded(netdev, true);"),
    "drivers/net/ethernet/mellanox/mlxsw/pci.c": (158, "dev_set_threaded(mlxsw_pci->napi_dev_rx, true);"),
    "drivers/net/ethernet/renesas/ravb_main.c": (3092, "dev_set_threaded(ndev, true);"),
    "drivers/net/wireless/ath/ath10k/snoc.c": (939, "dev_set_threaded(ar->napi_dev, true);"),
}
SYSFS = ("net/core/net-sysfs.c", 632)             # passes `unsigned long val`, range-checked
MT76 = ("drivers/net/wireless/mediatek/mt76/debugfs.c", 37)   # passes `u64 val`, unchecked
# mt76 mapping its u64 to the enum, as v5 of threaded busy poll does
MT76_CALL = "\t\treturn dev_set_threaded(dev->napi_dev, val);"
MT76_MAPPED = ("\t\treturn dev_set_threaded(dev->napi_dev, val ? NETDEV_NAPI_THREADED_ENABLED :\n"
               "\t\t\t\t\t\tNETDEV_NAPI_THREADED_DISABLED);")
MT76_WARNING = ("dev_set_threaded() parameter 2 was bool and is now enum netdev_napi_threaded; "
                "this caller passes its u64 'val', no longer turned into 0 or 1")
ENUM = ("enum netdev_napi_threaded {\n\tNETDEV_NAPI_THREADED_DISABLED,\n"
        "\tNETDEV_NAPI_THREADED_ENABLED,\n};\n\n")


def _check(cli, tree, base, changes, tmp_path, subject):
    d, _c = one_patch(tree, base, tmp_path, changes, subject)
    data = check_json(cli, d, "callsites", "--tree", tree)
    assert [c["id"] for c in data["checks"]] == ["callsites"]
    return data["findings"]


def _summary(findings):
    return sorted((f["severity"], f["file"], f["line"]) for f in findings if f["severity"] != "info")


def _info(findings):
    infos = [f for f in findings if f["severity"] == "info"]
    assert len(infos) == 1, infos
    return infos[0]


def _enum_changes(tree, base, update: list[str], mt76: bool = False) -> dict[str, str]:
    proto = "int dev_set_threaded(struct net_device *dev, bool threaded);\n"
    changes = {
        NETDEVICE: edit(tree, base, NETDEVICE, proto,
                        ENUM + "int dev_set_threaded(struct net_device *dev,\n"
                               "\t\t     enum netdev_napi_threaded threaded);\n"),
        DEV_C: edit(tree, base, DEV_C, "int dev_set_threaded(struct net_device *dev, bool threaded)\n",
                    "int dev_set_threaded(struct net_device *dev, enum netdev_napi_threaded threaded)\n"),
    }
    for path in update:
        _, call = TRUE_CALLERS[path]
        changes[path] = edit(tree, base, path, call, call.replace("true", "NETDEV_NAPI_THREADED_ENABLED"))
    if mt76:
        changes[MT76[0]] = edit(tree, base, MT76[0], MT76_CALL, MT76_MAPPED)
    return changes


def _listed(info, section: str) -> list[str]:
    """file:line entries of one section of the info finding's details."""
    lines = info["details"].splitlines()
    start = lines.index(section) + 1
    out = []
    for ln in lines[start:]:
        if not ln.startswith("  "):
            break
        if ln.strip() != "(none)":
            out.append(ln.strip().split(": ")[0])
    return sorted(out)


@pytest.mark.parametrize("update", ["all", "some", "none", "all and mt76"])
def test_bool_parameter_becomes_enum(cli, kernel_tree, base_commit, tmp_path, update):
    drivers = sorted(TRUE_CALLERS)
    updated = {"all": drivers, "some": drivers[:2], "none": [], "all and mt76": drivers}[update]
    mt76 = update == "all and mt76"
    findings = _check(cli, kernel_tree, base_commit,
                      _enum_changes(kernel_tree, base_commit, updated, mt76=mt76),
                      tmp_path, "net: make dev_set_threaded() take an enum")
    # Warnings exactly on the drivers still passing `true`, and on mt76 passing
    # its u64 unchecked (it meant true for any non-zero value; 2 is now another
    # mode); nothing on the updated ones, nor on net-sysfs.c, which checks the
    # range of its `unsigned long val` before the call.
    left = [p for p in drivers if p not in updated]
    want = [("warning", p, TRUE_CALLERS[p][0]) for p in left]
    if not mt76:
        want.append(("warning", *MT76))
    assert _summary(findings) == sorted(want)
    for f in findings:
        if f["severity"] == "warning" and f["file"] != MT76[0]:
            assert f["message"] == ("dev_set_threaded() parameter 2 is now enum netdev_napi_threaded; "
                                    "this caller still passes 'true'")
        elif f["severity"] == "warning":
            assert f["message"] == MT76_WARNING
            assert "'val' is declared u64 here and not compared with a constant" in f["details"]
    info = _info(findings)
    assert info["file"] == NETDEVICE and info["line"] == 563
    assert info["message"] == (f"dev_set_threaded() prototype changed: 6 call sites in the tree, "
                               f"{len(updated) + mt76} updated by this patch")
    assert "int dev_set_threaded(struct net_device *dev, bool threaded)  ->  " \
           "int dev_set_threaded(struct net_device *dev, enum netdev_napi_threaded threaded)" \
           in info["details"]
    mapped = [f"{MT76[0]}:{MT76[1]}"] if mt76 else []
    assert _listed(info, "updated by this patch:") == sorted(
        [f"{p}:{TRUE_CALLERS[p][0]}" for p in updated] + mapped)
    assert _listed(info, "not changed by this patch:") == sorted(
        [f"{p}:{TRUE_CALLERS[p][0]}" for p in left] + [f"{SYSFS[0]}:{SYSFS[1]}"]
        + ([] if mt76 else [f"{MT76[0]}:{MT76[1]}"]))


SET_IRQ_CALLERS = {  # netif_napi_set_irq() in 6.12
    "net/core/dev.c": ("netif_napi_set_irq(napi, -1);", 6856),
    "drivers/net/ethernet/broadcom/bnxt/bnxt.c": ("netif_napi_set_irq(&bp->bnapi[i]->napi, irq->vector);", 11229),
    "drivers/net/ethernet/intel/ice/ice_lib.c": ("netif_napi_set_irq(&q_vector->napi, q_vector->irq.virq);", 2746),
    "drivers/net/ethernet/mellanox/mlx5/core/en_main.c": ("netif_napi_set_irq(&c->napi, irq);", 2682),
    "drivers/net/ethernet/meta/fbnic/fbnic_txrx.c": ("nv->v_idx));", 1069),
}
MLX4 = "drivers/net/ethernet/mellanox/mlx4/en_cq.c"


def test_parameter_added(cli, kernel_tree, base_commit, tmp_path):
    changes = {NETDEVICE: edit(kernel_tree, base_commit, NETDEVICE,
                               "static inline void netif_napi_set_irq(struct napi_struct *napi, int irq)\n",
                               "static inline void netif_napi_set_irq(struct napi_struct *napi, int irq,\n"
                               "\t\t\t\t      unsigned long flags)\n")}
    for path, (call, _) in SET_IRQ_CALLERS.items():
        changes[path] = edit(kernel_tree, base_commit, path, call, call.replace(");", ", 0);"))
    findings = _check(cli, kernel_tree, base_commit, changes, tmp_path,
                      "net: add flags to netif_napi_set_irq()")
    # mlx4 calls it twice and was not updated: two build breaks.
    assert _summary(findings) == [("error", MLX4, 153), ("error", MLX4, 160)]
    for f in findings:
        if f["severity"] == "error":
            assert f["message"] == "netif_napi_set_irq() takes 3 arguments after this patch; this call passes 2"
    info = _info(findings)
    assert info["message"] == "netif_napi_set_irq() prototype changed: 7 call sites in the tree, 5 updated by this patch"
    assert _listed(info, "updated by this patch:") == sorted(f"{p}:{n}" for p, (_, n) in SET_IRQ_CALLERS.items())
    assert _listed(info, "not changed by this patch:") == [f"{MLX4}:153", f"{MLX4}:160"]


TX_WEIGHT_CALLERS = {  # netif_napi_add_tx_weight() in 6.12
    "drivers/crypto/caam/caamalg_qi2.c": 5130,
    "drivers/crypto/caam/qi.c": 781,
    "drivers/net/ethernet/freescale/gianfar.c": 3245,
    "drivers/net/ethernet/microchip/lan743x_main.c": 2307,
}
VIRTIO = ("drivers/net/virtio_net.c", 6281)


def test_renamed_function_with_one_caller_left(cli, kernel_tree, base_commit, tmp_path):
    old, new = "netif_napi_add_tx_weight(", "netif_napi_add_tx_weighted("
    changes = {NETDEVICE: edit(kernel_tree, base_commit, NETDEVICE, old, new, count=2)}
    for path in TX_WEIGHT_CALLERS:
        changes[path] = edit(kernel_tree, base_commit, path, old, new)
    findings = _check(cli, kernel_tree, base_commit, changes, tmp_path,
                      "net: rename netif_napi_add_tx_weight()")
    assert _summary(findings) == [("error", *VIRTIO)]
    err = next(f for f in findings if f["severity"] == "error")
    assert err["message"] == ("netif_napi_add_tx_weight() is renamed to netif_napi_add_tx_weighted() "
                              "by this patch but still called here")
    info = _info(findings)
    assert info["message"] == ("netif_napi_add_tx_weight() renamed to netif_napi_add_tx_weighted(): "
                               "5 callers updated by this patch, 1 left on the old name")
    # the four drivers and netif_napi_add_tx() in the header itself
    assert _listed(info, "updated by this patch:") == sorted(
        [f"{p}:{n}" for p, n in TX_WEIGHT_CALLERS.items()] + [f"{NETDEVICE}:2681"])
    assert _listed(info, "not changed by this patch:") == [f"{VIRTIO[0]}:{VIRTIO[1]}"]


def test_removed_function_and_macro_arity(cli, kernel_tree, base_commit, tmp_path):
    # dev_set_threaded() removed outright (definition and export too), and
    # a function-like macro losing a parameter.
    proto = "int dev_set_threaded(struct net_device *dev, bool threaded);\n"
    text = edit(kernel_tree, base_commit, NETDEVICE, proto, "")
    text = text.replace("#define alloc_netdev(sizeof_priv, name, name_assign_type, setup) \\\n",
                        "#define alloc_netdev(sizeof_priv, name, setup) \\\n", 1)
    assert "#define alloc_netdev(sizeof_priv, name, setup)" in text
    findings = _check(cli, kernel_tree, base_commit, {NETDEVICE: text}, tmp_path,
                      "net: drop dev_set_threaded()")
    errors = [f for f in findings if f["severity"] == "error"]
    removed = sorted((f["file"], f["line"]) for f in errors if "dev_set_threaded" in f["message"])
    assert removed == sorted([(p, n) for p, (n, _) in TRUE_CALLERS.items()] + [SYSFS, MT76])
    assert all(f["message"] == "dev_set_threaded() is removed by this patch but still called here"
               for f in errors if "dev_set_threaded" in f["message"])
    arity = [f for f in errors if "alloc_netdev" in f["message"]]
    # every alloc_netdev() user passes four arguments
    assert len(arity) > 50
    assert {f["message"] for f in arity} == {"alloc_netdev() takes 3 arguments after this patch; this call passes 4"}
    assert ("drivers/net/dummy.c", 152) in {(f["file"], f["line"]) for f in arity}
    assert not any(f["severity"] == "warning" for f in findings)
    msgs = sorted(f["message"] for f in findings if f["severity"] == "info")
    assert msgs[0].startswith("alloc_netdev() prototype changed: ")
    assert msgs[1] == "dev_set_threaded() removed: 6 callers left"


CSUM_CALLERS = {  # netdev_rx_csum_fault() in 6.12
    "net/core/datagram.c": [874],
    "net/core/gro.c": [809],
    "net/core/skbuff.c": [3698, 3733],
    "net/sunrpc/socklib.c": [195],
}


def test_config_stub_and_definition_left_behind(cli, kernel_tree, base_commit, tmp_path):
    # The CONFIG_BUG prototype gains a parameter; the !CONFIG_BUG stub right
    # below it and the definition in net/core/dev.c are left as they were.
    proto = "void netdev_rx_csum_fault(struct net_device *dev, struct sk_buff *skb);\n"
    changes = {NETDEVICE: edit(kernel_tree, base_commit, NETDEVICE, proto,
                               proto.replace("skb);", "skb,\n\t\t\t  const char *why);"))}
    for path, lines in CSUM_CALLERS.items():
        text = edit(kernel_tree, base_commit, path, "netdev_rx_csum_fault(", "netdev_rx_csum_fault(")
        text, n = re.subn(r"(netdev_rx_csum_fault\((?:NULL|skb->dev), skb)\);", r'\1, "csum");', text)
        assert n == len(lines)
        changes[path] = text
    findings = _check(cli, kernel_tree, base_commit, changes, tmp_path,
                      "net: say why in netdev_rx_csum_fault()")
    assert _summary(findings) == [("error", NETDEVICE, 4968), ("error", DEV_C, 3501)]
    msgs = {f["file"]: f["message"] for f in findings if f["severity"] == "error"}
    assert msgs[NETDEVICE] == "this declaration of netdev_rx_csum_fault() still has the old prototype"
    assert msgs[DEV_C] == ("this definition of netdev_rx_csum_fault() takes 2 parameters; "
                           "the new prototype in include/linux/netdevice.h takes 3")
    info = _info(findings)
    assert _listed(info, "updated by this patch:") == sorted(
        f"{p}:{n}" for p, lines in CSUM_CALLERS.items() for n in lines)


IDPF_MEM = "drivers/net/ethernet/intel/idpf/idpf_mem.h"
IDPF_CQ = "drivers/net/ethernet/intel/idpf/idpf_controlq.c"


@pytest.mark.parametrize("leave", [None, 331])
def test_driver_local_macro_is_looked_for_in_its_driver(cli, kernel_tree, base_commit, tmp_path,
                                                        leave):
    """idpf renames its own wr32() (upstream did, after 6.12): igb, igc, i40e,
    ice, fbnic... keep calling their own wr32() macros, about 1,300 calls
    that are none of this patch's business. Only idpf's callers count."""
    header = edit(kernel_tree, base_commit, IDPF_MEM, "#define wr32(a, reg, value)",
                  "#define idpf_mbx_wr32(a, reg, value)")
    cq = edit(kernel_tree, base_commit, IDPF_CQ, "", "")
    lines = cq.split("\n")
    for i, ln in enumerate(lines):
        if re.search(r"\bwr32\(", ln) and i + 1 != leave:
            lines[i] = ln.replace("wr32(", "idpf_mbx_wr32(")
    findings = _check(cli, kernel_tree, base_commit, {IDPF_MEM: header, IDPF_CQ: "\n".join(lines)},
                      tmp_path, "idpf: name the mailbox register accessors\n")
    assert _summary(findings) == ([] if leave is None else [("error", IDPF_CQ, leave)])
    info = _info(findings)
    assert info["message"] == ("wr32() renamed to idpf_mbx_wr32(): "
                               f"{7 if leave is None else 6} callers updated by this patch, "
                               f"{0 if leave is None else 1} left on the old name")
