"""sysfs attributes a C file defines or lists, and the path they appear at.

A sysfs file comes from one of a few macro families (``DEVICE_ATTR*``,
``__ATTR*``, ``CLASS_ATTR*``, net-sysfs.c's ``NETDEVICE_SHOW_RO/RW``,
``NETSTAT_ENTRY``, ``BQL_ATTR``) and is exposed by listing it in a
``struct attribute *NAME[]`` array (``&dev_attr_threaded.attr,``). These
are line-shaped in kernel code, so a regex per line (with a look at the
lines above for the variable's type) reads them from a diff as well as
from a whole file. The path is known for net/core/net-sysfs.c, where the
array (or the attribute's type) says which directory the file lands in.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

NET_SYSFS = "net/core/net-sysfs.c"
NET = "/sys/class/net/<iface>"
QUEUES = f"{NET}/queues"
ABI = "Documentation/ABI/testing/"

# kind -> (directory of the file, ABI file documenting that directory)
NET_PATHS = {
    "device": (NET, ABI + "sysfs-class-net"),
    "netstat": (f"{NET}/statistics", ABI + "sysfs-class-net-statistics"),
    "rx-queue": (f"{QUEUES}/rx-<queue>", ABI + "sysfs-class-net-queues"),
    "tx-queue": (f"{QUEUES}/tx-<queue>", ABI + "sysfs-class-net-queues"),
    "bql": (f"{QUEUES}/tx-<queue>/byte_queue_limits", ABI + "sysfs-class-net-queues"),
    "wireless": (f"{NET}/wireless", ABI + "sysfs-class-net"),
}
# net-sysfs.c's attribute arrays and the directory their members land in.
NET_ARRAYS = {"net_class_attrs": "device", "netstat_attrs": "netstat",
              "rx_queue_default_attrs": "rx-queue", "netdev_queue_default_attrs": "tx-queue",
              "dql_attrs": "bql", "wireless_attrs": "wireless"}

_DEFS = [
    (re.compile(r"\bDEVICE_ATTR(?:_RO|_RW|_WO|_ADMIN_RO|_ADMIN_RW|_IGNORE_LOCKDEP)?\s*\(\s*(\w+)"),
     "device"),
    (re.compile(r"\bNETDEVICE_SHOW_R[OW]\s*\(\s*(\w+)"), "device"),
    (re.compile(r"\bNETSTAT_ENTRY\s*\(\s*(\w+)"), "netstat"),
    (re.compile(r"\bCLASS_ATTR(?:_RO|_RW|_WO|_STRING)?\s*\(\s*(\w+)"), "class"),
    (re.compile(r"\bBQL_ATTR\s*\(\s*(\w+)"), "bql"),
    (re.compile(r"(?<!\w)__ATTR(?:_RO|_RW|_WO|_RO_MODE|_RW_MODE|_WO_MODE|_PREALLOC)?\s*\(\s*(\w+)"),
     "attr"),
]
_VAR = re.compile(r"\bstruct\s+(\w*attribute)\s+(\w+)")
_MEMBER = re.compile(r"^\s*&(\w+)\.attr(?:\.attr)?\s*,?\s*(?:/\*.*)?$")
_ARRAY = re.compile(r"\bstruct\s+attribute\s*\*\s*(\w+)\s*\[")
_TYPE_KIND = {"rx_queue_attribute": "rx-queue", "netdev_queue_attribute": "tx-queue",
              "device_attribute": "device", "class_attribute": "class"}


@dataclass(frozen=True)
class Attr:
    name: str    # the sysfs file name
    kind: str    # device | netstat | class | bql | rx-queue | tx-queue | wireless | attr
    line: int
    how: str     # "defined" or "listed in ARRAY"


def _in_macro(lines: dict[int, str], n: int) -> bool:
    """Is line ``n`` part of a #define (a macro body names no real attribute)?"""
    if lines.get(n, "").lstrip().startswith("#") or lines.get(n, "").rstrip().endswith("\\"):
        return True
    return lines.get(n - 1, "").rstrip().endswith("\\")


def _var_kind(lines: dict[int, str], n: int) -> tuple[str, str] | None:
    """(type kind, variable) of an ``__ATTR`` initialiser on line n or the two above."""
    for k in (n, n - 1, n - 2):
        m = _VAR.search(lines.get(k, ""))
        if m:
            kind = _TYPE_KIND.get(m.group(1), "attr")
            if kind == "tx-queue" and m.group(2).startswith("bql_"):
                kind = "bql"
            return kind, m.group(2)
    return None


def defined_at(lines: dict[int, str], n: int) -> Attr | None:
    """The attribute line ``n`` defines, if any."""
    text = lines.get(n, "")
    if _in_macro(lines, n):
        return None
    for rx, kind in _DEFS:
        m = rx.search(text)
        if not m:
            continue
        if kind == "attr":
            vk = _var_kind(lines, n)
            kind = vk[0] if vk else "attr"
        return Attr(m.group(1), kind, n, "defined")
    return None


def mentions_attr(line: str) -> bool:
    """Could ``line`` define or list an attribute? (cheap, to skip files early)"""
    return "ATTR" in line or "NETDEVICE_SHOW" in line or "NETSTAT_ENTRY" in line \
        or _MEMBER.match(line) is not None


def defined_names(text: str) -> set[str]:
    """Every attribute name a whole file defines."""
    lines = dict(enumerate(text.split("\n"), 1))
    return {a.name for n in lines if (a := defined_at(lines, n))}


def _array_at(lines: dict[int, str], n: int) -> str | None:
    for k in range(n - 1, max(n - 200, 0), -1):
        t = lines.get(k)
        if t is None:
            return None
        m = _ARRAY.search(t)
        if m:
            return m.group(1)
        if t.startswith("}"):
            return None
    return None


def member_at(lines: dict[int, str], n: int) -> tuple[str, str | None] | None:
    """(variable, array) of an ``&VAR.attr,`` array member on line n."""
    m = _MEMBER.match(lines.get(n, ""))
    if not m:
        return None
    return m.group(1), _array_at(lines, n)


def resolve(var: str, text: str | None) -> tuple[str, str] | None:
    """(name, kind) of the attribute variable ``var``, from its name or its definition."""
    for prefix, kind in (("dev_attr_", "device"), ("class_attr_", "class")):
        if var.startswith(prefix):
            return var[len(prefix):], kind
    if text is None:
        return None
    m = re.search(rf"\bstruct\s+(\w*attribute)\s+{re.escape(var)}\b[^;]*?"
                  rf"__ATTR\w*\s*\(\s*(\w+)", text)
    if m:
        kind = _TYPE_KIND.get(m.group(1), "attr")
        return m.group(2), ("bql" if kind == "tx-queue" and var.startswith("bql_") else kind)
    m = re.fullmatch(r"bql_(\w+)_attribute", var)
    if m and re.search(rf"\bBQL_ATTR\s*\(\s*{m.group(1)}\b", text):
        return m.group(1), "bql"
    return None


def sysfs_path(file: str, attr: Attr) -> tuple[str | None, str]:
    """The likely path of ``attr`` (None: unknown) and the ABI file to document it in."""
    kind = attr.kind
    if attr.how.startswith("listed in "):
        kind = NET_ARRAYS.get(attr.how.removeprefix("listed in "), kind)
    if file == NET_SYSFS and kind in NET_PATHS:
        where, abi = NET_PATHS[kind]
        return f"{where}/{attr.name}", abi
    if kind == "class":
        return None, ABI + "sysfs-class-<class>"
    return None, ABI + "sysfs-<bus or class>-<device>"
