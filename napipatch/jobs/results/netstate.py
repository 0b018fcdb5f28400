"""Host side of the leak check: what a selftest left behind, from the guest's
netdev snapshots before and after it (``jobs/boot/netsnap.py`` prints them).

Like NIPA's ``contest/scripts/env_check.py``, any difference counts, except
the noise: counters and statistics, ifindexes and ids, a link's carrier
(operstate, NO-CARRIER/LOWER_UP), a page pool's in-flight pages. What is
left is one line per difference, naming the interface, namespace or
setting: ``interface dummy0 (dummy) left behind``.
"""

from __future__ import annotations

import json

_LINK_KEYS = ("mtu", "master", "address", "promiscuity", "allmulti", "num_tx_queues",
              "num_rx_queues", "txqlen", "group", "linkmode", "ifalias", "proto_down",
              "gso_max_size", "gso_max_segs", "gro_max_size", "tso_max_size", "tso_max_segs",
              "gso_ipv4_max_size", "gro_ipv4_max_size", "inet6_addr_gen_mode")
_CARRIER = {"NO-CARRIER", "LOWER_UP"}


def parse(line: str, marker: str) -> dict | None:
    """A snapshot line ``<marker> <json>``; None if it is cut or garbled."""
    try:
        snap = json.loads(line[len(marker):].strip())
    except ValueError:
        return None
    return snap if isinstance(snap, dict) else None


def _links(snap: dict) -> dict[str, dict]:
    out = {}
    for link in snap.get("links") or []:
        name = link.get("ifname")
        if not name:
            continue
        kept = {k: link[k] for k in _LINK_KEYS if k in link}
        kept["kind"] = (link.get("linkinfo") or {}).get("info_kind", "")
        kept["flags"] = sorted(set(link.get("flags") or []) - _CARRIER)
        if link.get("xdp"):  # an XDP program left attached: its mode, not its id
            kept["xdp"] = (link["xdp"] or {}).get("mode", "attached")
        out[name] = kept
    return out


def _features(feats: dict | None) -> dict[str, bool]:
    """Active state of each feature the driver lets the user change."""
    return {k: v.get("active") for k, v in (feats or {}).items()
            if isinstance(v, dict) and v.get("fixed") is not True}


def _pools(snap: dict) -> dict[str, int] | None:
    """Page pools per ifindex (detached ones under "detached")."""
    pools = snap.get("page_pools")
    if pools is None:
        return None
    count: dict[str, int] = {}
    for p in pools:
        key = "detached" if "detach-time" in p else f"ifindex {p.get('ifindex', '?')}"
        count[key] = count.get(key, 0) + 1
    return count


def _changed(what: str, old: dict, new: dict) -> list[str]:
    return [f"{what} {k}: {old.get(k)} -> {new.get(k)}"
            for k in sorted(old.keys() | new.keys(), key=str) if old.get(k) != new.get(k)]


def leaks(before: dict | None, after: dict | None) -> list[str]:
    """What differs between two snapshots, one line each (nothing when either is missing)."""
    if not before or not after:
        return []
    out: list[str] = []
    old, new = _links(before), _links(after)
    for name in sorted(new.keys() - old.keys()):
        kind = new[name]["kind"]
        out.append(f"interface {name}{f' ({kind})' if kind else ''} left behind")
    for name in sorted(old.keys() - new.keys()):
        out.append(f"interface {name} removed")
    for name in sorted(old.keys() & new.keys()):
        out += _changed(f"interface {name}", old[name], new[name])
    for ns in sorted(set(after.get("netns") or []) - set(before.get("netns") or [])):
        out.append(f"network namespace {ns} left behind")
    nb, na = before.get("nics") or {}, after.get("nics") or {}
    for nic in sorted(nb.keys() & na.keys()):
        for part in ("channels", "rings"):
            out += _changed(f"{nic} {part}", nb[nic].get(part) or {}, na[nic].get(part) or {})
        out += _changed(f"{nic} feature", _features(nb[nic].get("features")),
                        _features(na[nic].get("features")))
        out += _changed(f"{nic}", nb[nic].get("napi") or {}, na[nic].get("napi") or {})
    sb, sa = before.get("sysctls") or {}, after.get("sysctls") or {}
    out += _changed("sysctl", {k: sb[k] for k in sb.keys() & sa.keys()},
                    {k: sa[k] for k in sb.keys() & sa.keys()})
    pb, pa = _pools(before), _pools(after)
    if pb is not None and pa is not None:
        out += [f"page pools ({k}): {pb.get(k, 0)} -> {pa.get(k, 0)}"
                for k in sorted(pb.keys() | pa.keys()) if pb.get(k, 0) != pa.get(k, 0)]
    return out


def key(test: str, leak: str) -> str:
    """How a leak is named when the tip's leaks are compared with the base's."""
    return f"{test} leaked: {leak}"
