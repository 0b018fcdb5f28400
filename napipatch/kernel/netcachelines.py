"""Documentation/networking/net_cachelines/: which struct each table documents, and the tables.

Each ``.rst`` there is a table with one row per member of a hot struct:
``Type  Name  fastpath_tx_access  fastpath_rx_access  Comments``. Two
layouts exist: 6.12's column-aligned text (a ``..struct ..net_device``
pseudo-row, ``_`` for the spaces in types: ``struct_list_head``,
``unsigned_long:1``), and newer trees' RST simple tables (``===`` borders,
real spaces). ``parse_table`` reads both into ``Row``s.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from napipatch.kernel.cparse import Field, normalise_type

DOC_DIR = "Documentation/networking/net_cachelines"


@dataclass(frozen=True)
class Documented:
    rst: str
    kind: str            # struct | enum
    name: str            # struct name; for the anonymous snmp enum, the entry it holds
    header: str
    complete: bool = True  # the table lists every member (not a chosen few)

    @property
    def label(self) -> str:
        return f"struct {self.name}" if self.kind == "struct" else "the LINUX_MIB enum"


DOCUMENTED = (
    Documented(f"{DOC_DIR}/net_device.rst", "struct", "net_device", "include/linux/netdevice.h"),
    Documented(f"{DOC_DIR}/tcp_sock.rst", "struct", "tcp_sock", "include/linux/tcp.h"),
    Documented(f"{DOC_DIR}/inet_sock.rst", "struct", "inet_sock", "include/net/inet_sock.h"),
    Documented(f"{DOC_DIR}/inet_connection_sock.rst", "struct", "inet_connection_sock",
               "include/net/inet_connection_sock.h"),
    Documented(f"{DOC_DIR}/netns_ipv4_sysctl.rst", "struct", "netns_ipv4", "include/net/netns/ipv4.h"),
    Documented(f"{DOC_DIR}/snmp.rst", "enum", "LINUX_MIB_NUM", "include/uapi/linux/snmp.h",
               complete=False),
)

ACCESS = frozenset({"read_mostly", "read_write", "write_mostly", "-"})
_BORDER = re.compile(r"^=+(?: +=+)+ *$")
_TYPE_START = frozenset({"const", "volatile"})
_TAGGED = frozenset({"struct", "union", "enum"})
_INT_WORDS = frozenset({"unsigned", "signed", "long", "short", "int", "char"})


@dataclass(frozen=True)
class Row:
    type: str
    name: str
    tx: str
    rx: str
    comment: str
    line: int  # 1-based line in the .rst

    @property
    def key(self) -> str:
        return row_key(self.name)

    @property
    def cells(self) -> tuple[str, str, str, str, str]:
        return (self.type, self.name, self.tx, self.rx, self.comment)


@dataclass
class Table:
    layout: str                      # "aligned" (6.12) | "simple" (=== borders)
    rows: list[Row] = field(default_factory=list)
    columns: list[int] = field(default_factory=list)  # start offsets of the five columns

    def by_name(self) -> dict[str, Row]:
        out: dict[str, Row] = {}
        for r in self.rows:
            out.setdefault(r.key, r)
        return out

    def format_row(self, type_: str, name: str, tx: str = "", rx: str = "", comment: str = "") -> str:
        """A row in this table's layout, aligned to its columns."""
        if self.layout == "aligned":
            type_ = type_.replace(" ", "_")
        cells = [type_, name, tx, rx, comment]
        cols = self.columns or [0, 36, 60, 80, 100]
        out = ""
        for i, c in enumerate(cells):
            if i and out:
                out = out.ljust(max(cols[i], len(out) + 1)) if c else out
            out += c
        return out.rstrip()


def row_key(name: str) -> str:
    """A row's or member's name without its array size: ``name[16]`` -> ``name``."""
    return re.sub(r"\[.*$", "", name.strip().lstrip("*"))


def type_key(t: str) -> str:
    """Compare types across the layouts: drop qualifiers, spaces and underscores."""
    t = re.sub(r"(__rcu|__percpu|__iomem|__user)", " ", t)
    t = re.sub(r"(?:^|[\s_])(const|volatile)(?=[\s_])", " ", " " + t)
    return re.sub(r"[\s_]", "", normalise_type(t))


def field_type(f: Field) -> str:
    """The Type cell for a member, in C spelling (``unsigned long:1``, ``struct list_head*``)."""
    t = f.type
    if t.endswith(" (*)()"):
        t = t[:-6] + "*"
    return f"{t}:{f.width}" if f.width else t


def row_matches(row: Row, f: Field) -> bool:
    return type_key(row.type) == type_key(field_type(f))


def split_row_tokens(line: str) -> tuple[str, str, list[tuple[int, str]]] | None:
    """``(type, name, rest)`` of a row read by C type grammar, not by columns.

    For the 6.12 layout (where a long type pushes the name out of its
    column, and a few types are written with real spaces) and for rows
    seen in a diff without the table's header.
    """
    toks = [(m.start(), m.group(0)) for m in re.finditer(r"\S+", line)]
    if len(toks) < 2:
        return None
    words = [t for _, t in toks]
    i = 0
    while i < len(words) - 1 and words[i] in _TYPE_START:
        i += 1
    head = words[i].split(":")[0]
    if head in _TAGGED:
        # "struct  adj_list" (an unnamed struct member) vs "struct hlist_head  page_pools"
        if i + 2 < len(words) and words[i + 2] not in ACCESS:
            i += 2
        else:
            i += 1
    elif head in _INT_WORDS:
        i += 1
        while i < len(words) - 1 and words[i].split(":")[0].rstrip("*") in _INT_WORDS:
            i += 1
    else:
        i += 1
    while i < len(words) - 1 and set(words[i]) <= {"*"}:
        i += 1
    if i >= len(words):
        return None
    type_ = line[:toks[i][0]].strip()
    return type_, words[i], toks[i + 1:]


def parse_row(line: str, lineno: int, columns: list[int] | None = None) -> Row | None:
    """One table row, or None for pseudo-rows (``..struct``), headers and blanks."""
    if not line.strip() or line.startswith(("..", "Type ", "=")):
        return None
    got = split_row_tokens(line)
    if got is None:
        return None
    type_, name, rest = got
    tx = rx = ""
    comment_parts = []
    for pos, tok in rest:
        if columns and len(columns) >= 5:
            if pos < columns[3] - 1 and not tx and tok in ACCESS:
                tx = tok
                continue
            if pos < columns[4] - 1 and not rx and tok in ACCESS:
                rx = tok
                continue
        elif tok in ACCESS and not comment_parts and (not tx or not rx):
            if not tx:
                tx = tok
            else:
                rx = tok
            continue
        comment_parts.append(tok)
    return Row(type_, name, tx, rx, " ".join(comment_parts), lineno)


def parse_table(text: str) -> Table:
    """Every row of a net_cachelines .rst, in either layout."""
    lines = text.split("\n")
    borders = [i for i, ln in enumerate(lines) if _BORDER.match(ln)]
    if len(borders) >= 2:
        cols = [m.start() for m in re.finditer(r"=+", lines[borders[0]])]
        table = Table("simple", columns=cols)
        body_from = borders[1] + 1
        for i in range(body_from, len(lines)):
            ln = lines[i]
            if i in borders or not ln.strip() or ln.startswith(".."):
                continue
            cells = []
            for k, c in enumerate(cols):
                end = cols[k + 1] if k + 1 < len(cols) else len(ln)
                cells.append(ln[c:end].strip() if c < len(ln) else "")
            cells += [""] * (5 - len(cells))
            if not cells[1]:
                continue
            tx, rx = cells[2], cells[3]
            table.rows.append(Row(cells[0], cells[1], tx, rx, " ".join(cells[4:]).strip(), i + 1))
        return table
    table = Table("aligned")
    for i, ln in enumerate(lines):
        if ln.startswith("Type ") and "Name" in ln:
            heads = [m.start() for m in re.finditer(r"\S+", ln)]
            table.columns = heads[:5]
            continue
        if not table.columns:
            continue
        row = parse_row(ln, i + 1, table.columns)
        if row:
            table.rows.append(row)
    return table
