"""net_cachelines: hot structs changed without their Documentation table.

What it catches:
    A member of a struct documented under
    ``Documentation/networking/net_cachelines/`` (``net_device``,
    ``tcp_sock``, ``inet_sock``, ``inet_connection_sock``, ``netns_ipv4``,
    the LINUX_MIB enum) whose type or bitfield width the patch changes,
    that it adds or removes, or that it moves to another
    ``__cacheline_group``, while the same patch leaves the member's row in
    the ``.rst`` table as it was. A table already out of date before the
    patch is not the patch's fault and is not reported as such.

Why a reviewer cares:
    These structs are laid out by hand for the fast path, the tables are
    how reviewers see that layout, and netdevice.h asks "Please update the
    document when adding new fields." On the threaded busy poll v4 series
    patch 3 turned ``bool threaded`` into ``u8 threaded`` in struct
    net_device and a reviewer asked for the table to follow.

Example:
    ``-	bool			threaded;`` / ``+	u8			threaded;`` in
    struct net_device, and no change to
    ``Documentation/networking/net_cachelines/net_device.rst``.

Fix:
    Update the member's row in the same patch (``u8  threaded  -  -
    napi_poll(napi_enable,dev_set_threaded)``); add a row for a new member,
    drop the row of a removed one. ``napipatch fix`` writes the row of a
    changed type (keeping its fastpath columns and comment), adds the row of
    a new member after the row of the member before it (its cacheline
    group's fastpath columns) and deletes the row of a removed member, in
    the table's own column alignment and without trailing blanks.
"""

from __future__ import annotations

import re

from napipatch.checks import check
from napipatch.kernel.cparse import (
    Field,
    blank_comments,
    parse_enum_entries,
    parse_member,
    parse_struct,
)
from napipatch.kernel.netcachelines import (
    DOCUMENTED,
    Documented,
    Row,
    Table,
    field_type,
    parse_row,
    parse_table,
    row_key,
    row_matches,
)
from napipatch.mails.hunks import hunk_lines
from napipatch.report.findings import edit, fix, not_fixable


_OPEN = re.compile(r"^(struct|union)\s+(\w+)\s*(?:__\w+\s*)*\{")


def _access(group: str | None) -> tuple[str, str]:
    """The fastpath columns a member of ``group`` would have (``net_device_read_tx`` -> tx)."""
    if not group:
        return "", ""
    how = "read_write" if "write" in group else "read_mostly"
    if group.endswith("txrx"):
        return how, how
    if group.endswith("_tx"):
        return how, "-"
    if group.endswith("_rx"):
        return "-", how
    return "", ""


def _row_text(table: Table | None, f: Field, old: Row | None) -> str:
    t = table or Table("aligned")
    name = f.name + f.array
    if old is not None:
        return t.format_row(field_type(f), old.name, old.tx, old.rx, old.comment)
    tx, rx = _access(f.group)
    return t.format_row(field_type(f), name, tx, rx)


class _Finder:
    def __init__(self, ctx, doc: Documented):
        self.ctx, self.doc = ctx, doc

    def warn(self, msg, line, hint, details="", sev="warning", fix=None):
        return self.ctx.finding(sev, msg, file=self.doc.header, line=line, hint=hint,
                                details=details, fix=fix)


# ---------------------------------------------------------------- fixes (with the tree)

def _rewrite_row(doc: Documented, rst: str | None, row: Row, text: str | None, name: str):
    """The fix writing ``row`` as ``text`` (None: deleting it), in the table's
    own alignment (format_row) and without trailing blanks."""
    lines = (rst or "").split("\n")
    if not 0 < row.line <= len(lines):
        return not_fixable(f"{doc.rst} has no line {row.line}")
    old = lines[row.line - 1]
    if text is None:
        return fix(f"deleted the '{name}' row of {doc.rst} (line {row.line})",
                   edit(doc.rst, row.line, [old], []))
    return fix(f"wrote the '{name}' row of {doc.rst} as {text.split()[0]!r} (line {row.line})",
               edit(doc.rst, row.line, [old], [text]))


def _add_row(doc: Documented, rst: str | None, table: Table | None, members: list[Field],
             f: Field):
    """The fix adding a new member's row after the row of the member declared
    before it (its group's fastpath columns), as the table orders them."""
    rows = table.by_name() if table else {}
    k = next((i for i, m in enumerate(members) if m.name == f.name), 0)
    prev = next((rows[m.name] for m in reversed(members[:k]) if m.name in rows), None)
    if rst is None or prev is None:
        return not_fixable(f"no row of a member before '{f.name}' in {doc.rst} to put it after")
    text = _row_text(table, f, None)
    return fix(f"added a '{f.name}' row to {doc.rst} after '{prev.name}'",
               edit(doc.rst, prev.line + 1, [], [text]))


# ---------------------------------------------------------------- with the tree

def _members(doc: Documented, text: str | None) -> list[Field] | None:
    if text is None:
        return None
    if doc.kind == "struct":
        return parse_struct(text, doc.name)
    return parse_enum_entries(text, doc.name)


def _by_name(fields: list[Field]) -> dict[str, Field]:
    out: dict[str, Field] = {}
    for f in fields:
        out.setdefault(f.name, f)
    return out


def _removal_anchor(ctx, doc: Documented, name: str) -> int | None:
    for pf in ctx.diff:
        if pf.path != doc.header:
            continue
        for h in pf:
            for ln in hunk_lines(h):
                if ln.kind == "-" and name in {n for n, *_ in parse_member(_decl_text(ln.text) or "")}:
                    return ln.anchor
    return None


def _full(ctx, doc: Documented, pre_h: str, post_h: str, pre_rst: str | None, post_rst: str | None):
    pre_f, post_f = _members(doc, pre_h), _members(doc, post_h)
    if pre_f is None or post_f is None:
        return
    before, after = _by_name(pre_f), _by_name(post_f)
    t0 = parse_table(pre_rst) if pre_rst else None
    t1 = parse_table(post_rst) if post_rst else None
    rows0 = t0.by_name() if t0 else {}
    rows1 = t1.by_name() if t1 else {}
    fx = _Finder(ctx, doc)
    what = doc.label
    for name, f in after.items():
        row0, row1 = rows0.get(name), rows1.get(name)
        changed_row = (row0.cells if row0 else None) != (row1.cells if row1 else None)
        old = before.get(name)
        if old is None:
            if doc.complete and row1 is None:
                yield fx.warn(f"new member '{name}' of {what} has no row in {doc.rst}", f.line,
                              f"add a row to {doc.rst}: {_row_text(t1, f, None)!r}"
                              + (f" (it sits in {f.group})" if f.group else ""),
                              fix=_add_row(doc, post_rst, t1, post_f, f))
            continue
        if doc.kind == "struct" and field_type(old) != field_type(f) \
                and (row1 is None or not row_matches(row1, f)):
            drift = row0 is not None and not row_matches(row0, old)
            details = (f"before this patch the row already said '{row0.type} {row0.name}' for "
                       f"'{field_type(old)}'" if drift else "")
            if row1 is None and row0 is None:
                yield fx.warn(f"'{name}' in {what} changed from '{field_type(old)}' to "
                              f"'{field_type(f)}'; it has no row in {doc.rst} (it had none before "
                              "either)", f.line, f"add a row: {_row_text(t1, f, None)!r}", sev="info")
            elif row1 is None:
                yield fx.warn(f"'{name}' in {what} changed from '{field_type(old)}' to "
                              f"'{field_type(f)}' and its row was dropped from {doc.rst}", f.line,
                              f"keep the row, as {_row_text(t1, f, row0)!r}",
                              fix=not_fixable("the patch deleted the row: putting it back is "
                                              "the author's call"))
            else:
                yield fx.warn(f"'{name}' in {what} changed from '{field_type(old)}' to "
                              f"'{field_type(f)}' but {doc.rst} still says '{row1.type} {row1.name}'",
                              f.line, f"update the row in {doc.rst} to {_row_text(t1, f, row1)!r}",
                              details, fix=_rewrite_row(doc, post_rst, row1,
                                                        _row_text(t1, f, row1), name))
            continue
        if doc.kind == "struct" and old.group != f.group and not changed_row and row1 is not None:
            tx, rx = _access(f.group)
            yield fx.warn(f"'{name}' of {what} moved from cacheline group {old.group or '(none)'} to "
                          f"{f.group or '(none)'} but its row in {doc.rst} is unchanged", f.line,
                          f"update the fastpath columns of its row in {doc.rst}"
                          + (f" (tx {tx}, rx {rx})" if tx or rx else ""))
    for name, old in before.items():
        if name in after:
            continue
        if name in rows1 and name in rows0:
            yield fx.warn(f"member '{name}' was removed from {what} but {doc.rst} still has its row "
                          f"(line {rows1[name].line})", _removal_anchor(ctx, doc, name),
                          f"delete the '{rows1[name].name}' row from {doc.rst}",
                          fix=_rewrite_row(doc, post_rst, rows1[name], None, name))


# ---------------------------------------------------------------- from the diff alone

def _decl_text(line: str) -> str | None:
    """The member declared on one diff line (without ';'), or None."""
    if not line[:1].isspace():
        return None
    s = blank_comments(line).strip()
    if not s.endswith(";") or s.startswith(("#", "*", "}", "return", "(")) or "(" in s and not s.startswith("DECLARE_"):
        return None
    return s[:-1]


def _diff_members(ctx, doc: Documented):
    """{name: (Field, "-"|"+")} of members removed and added in ``doc``'s struct."""
    removed: dict[str, Field] = {}
    added: dict[str, Field] = {}
    for pf in ctx.diff:
        if pf.path != doc.header:
            continue
        for h in pf:
            m = _OPEN.match(h.section_header or "")
            cur = m.group(2) if m else None
            for ln in hunk_lines(h):
                mo = _OPEN.match(ln.text)
                if mo:
                    cur = mo.group(2)
                    continue
                if ln.text.startswith("}"):
                    cur = None
                    continue
                if cur != doc.name or ln.kind == " ":
                    continue
                decl = _decl_text(ln.text)
                if decl is None:
                    continue
                for name, typ, w, arr in parse_member(decl):
                    f = Field(name, typ, w, None, ln.anchor, arr)
                    (removed if ln.kind == "-" else added).setdefault(name, f)
    return removed, added


def _diff_rows(ctx, doc: Documented) -> tuple[dict[str, Row], dict[str, Row], bool]:
    gone: dict[str, Row] = {}
    new: dict[str, Row] = {}
    touched = False
    for pf in ctx.diff:
        if pf.path != doc.rst:
            continue
        touched = True
        for h in pf:
            for ln in hunk_lines(h):
                if ln.kind == " ":
                    continue
                r = parse_row(ln.text, ln.new or ln.anchor)
                if r:
                    (gone if ln.kind == "-" else new).setdefault(row_key(r.name), r)
    return gone, new, touched


def _diff_only(ctx, doc: Documented):
    if doc.kind != "struct":
        return
    removed, added = _diff_members(ctx, doc)
    if not removed and not added:
        return
    gone, new, _touched = _diff_rows(ctx, doc)
    fx = _Finder(ctx, doc)
    what = doc.label
    for name, f in added.items():
        old = removed.get(name)
        row = new.get(name)
        if old is None:
            if row is None:
                yield fx.warn(f"new member '{name}' of {what} has no row in {doc.rst}", f.line,
                              f"add a row to {doc.rst}: {_row_text(None, f, None)!r}")
            continue
        if field_type(old) == field_type(f):
            continue  # moved or reformatted; groups need the tree
        if row is not None and row_matches(row, f):
            continue
        if row is not None:
            yield fx.warn(f"'{name}' in {what} changed from '{field_type(old)}' to '{field_type(f)}' "
                          f"but the updated row in {doc.rst} says '{row.type} {row.name}'", f.line,
                          f"make the row {_row_text(None, f, row)!r}")
            continue
        yield fx.warn(f"'{name}' in {what} changed from '{field_type(old)}' to '{field_type(f)}' "
                      f"but {doc.rst} was not updated", f.line,
                      f"update the '{name}' row in {doc.rst} in this patch: "
                      f"{_row_text(None, f, None)!r}, keeping its fastpath columns and comment")
    for name, f in removed.items():
        if name in added or (name in gone and name not in new):
            continue
        yield fx.warn(f"member '{name}' was removed from {what} but the patch does not delete its "
                      f"row from {doc.rst}", f.line, f"delete the '{name}' row from {doc.rst}")


@check(id="cachelines",
       summary="net_cachelines tables follow type, width, member and group changes of hot structs",
       scope="patch",
       needs="diff",
       version=2,
       fixes="writes, adds or deletes the member's row in the table's own alignment")
def run(ctx):
    paths = {pf.path for pf in ctx.diff}
    full = ctx.tree is not None and ctx.applied
    for doc in DOCUMENTED:
        if doc.header not in paths:
            continue
        if full:
            pre_h, post_h = ctx.pre_text(doc.header), ctx.post_text(doc.header)
            if pre_h is not None and post_h is not None:
                yield from _full(ctx, doc, pre_h, post_h, ctx.pre_text(doc.rst), ctx.post_text(doc.rst))
                continue
        yield from _diff_only(ctx, doc)

