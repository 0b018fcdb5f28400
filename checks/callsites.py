"""Every caller of a function whose prototype the patch changes still fits it.

What it catches:
    For each function or function-like macro declared in a header
    (``include/`` or a driver's local ``.h``) whose prototype the patch
    changes (parameter count, a parameter's or the return type, a rename,
    a removal), every call site in the tree after the patch (``drivers/``,
    ``net/``, ``tools/testing/`` ...), found with ``git grep -w`` (of the
    base once, then of the files the series changed: ``napipatch.tree.treegrep``)
    and read with a real C parse (tree-sitter), is checked. A function
    declared in a driver's own header (not under an ``include/``
    directory) is looked for only where that header is seen: its
    directory and below, and files including it by a relative path from
    within the directory above (drivers each have their own ``rd32()``;
    renaming idpf's breaks nothing in igb):

    - error: a caller passing the wrong number of arguments, or still
      calling (or referencing) a removed or renamed function;
    - warning: a caller passing ``true``/``false`` or a literal ``0``/``1``
      to a parameter that is now an enum;
    - warning: a caller passing its own integer variable (a parameter or
      local declared ``u64``, ``int`` ...) to a parameter that was ``bool``
      and is now an enum, without comparing it with a number or an
      UPPER_CASE constant first: the value used to become 0 or 1 on the
      way in and now goes in unchanged (``2`` picks another mode, ``7``
      none);
    - nothing for a caller passing anything else (an integer converts to an
      enum silently; it compiles), or a variable it range-checks.

    An info finding per changed prototype lists the call sites, and which
    of them the patch updated, so a reviewer sees the whole picture.

Why a reviewer cares:
    A caller left behind is a build break, often only in a config nobody
    built before posting (a wireless driver, an ARM-only Ethernet driver).
    v2 of the threaded busy poll series turned ``dev_set_threaded(dev,
    bool)`` into ``dev_set_threaded(dev, enum netdev_napi_threaded)`` and
    missed the driver callers; v3's changelog says "Fixed calls to
    dev_set_threaded in drivers". v4 still left mt76's debugfs knob
    passing its ``u64 val``, which now selects busy polling on 2.

Example:
    ``int dev_set_threaded(struct net_device *dev, enum netdev_napi_threaded
    threaded);`` with ``drivers/net/ethernet/renesas/ravb_main.c`` still
    doing ``dev_set_threaded(ndev, true);``, and
    ``drivers/net/wireless/mediatek/mt76/debugfs.c`` doing
    ``dev_set_threaded(dev->napi_dev, val);`` with ``u64 val``.

Fix:
    Update every caller in the same patch (``git grep -w NAME``), passing
    enum values (``NETDEV_NAPI_THREADED_ENABLED``) rather than booleans,
    and mapping an integer that meant true/false to them (``val ?
    NETDEV_NAPI_THREADED_ENABLED : NETDEV_NAPI_THREADED_DISABLED``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from napipatch.checks import check
from napipatch.kernel import protodiff
from napipatch.kernel.cparse_calls import Occurrence, literal, local_at, occurrences
from napipatch.kernel.includers import Sight, own_copy, reach
from napipatch.kernel.protodiff import Change, diff_path, hits
from napipatch.tree import treegrep


def _grep(ctx, changes: list[Change]) -> dict[str, list[int]]:
    """Files (post-patch) mentioning the changed names as words, with the lines.

    Each name is looked for where its header can be seen
    (``kernel.includers.reach``): the whole tree for a header under
    ``include/``, the directory above a driver's own header: on a
    86,000-file tree that is the difference between reading the tree and
    reading a driver.
    """
    by_dir: dict[str, set[str]] = {}
    for c in changes:
        by_dir.setdefault(reach(c.header), set()).update(n for n in (c.name, c.new_name) if n)
    everywhere = by_dir.pop("", set())
    out = {p: set(ls) for p, ls in ctx.tree.grep.grep(
        ctx.post, treegrep.words(everywhere)).items()} if everywhere else {}
    for d, names in sorted(by_dir.items()):
        if names - everywhere:
            pat = treegrep.words(names - everywhere, (f"{d}/*.c", f"{d}/*.h"))
            for p, ls in ctx.tree.grep.grep(ctx.post, pat).items():
                out.setdefault(p, set()).update(ls)
    return {p: sorted(ls) for p, ls in out.items()}


def _call_text(o: Occurrence) -> str:
    args = ", ".join(" ".join(a.split()) for a in o.args)
    return f"{o.name}({args})"


@check(id="callsites",
       summary="callers of functions whose prototype changes (count, types, rename, removal)",
       scope="patch",
       needs="tree",
       version=3)
def run(ctx):
    if not ctx.applied:
        return []
    added, removed = protodiff.line_sets(ctx.diff)
    changes = protodiff.changes(ctx.diff, ctx.pre_text, ctx.post_text, added, removed)
    if not changes:
        return []
    names = {c.name for c in changes} | {c.new_name for c in changes if c.new_name}
    if len(names) > treegrep.MAX_WORDS:
        # Not a prototype change a reviewer can follow (a header emptied or
        # replaced by a symlink): say so rather than grep for minutes.
        headers = sorted({c.header for c in changes})
        return [ctx.finding(
            "warning", f"the patch changes {len(names)} prototypes in "
                       f"{', '.join(headers[:3])}{' ...' if len(headers) > 3 else ''}; callers "
                       f"not checked (at most {treegrep.MAX_WORDS} functions at a time)",
            file=headers[0] if headers else None,
            hint="split the patch, or check the callers by hand")]
    files = _grep(ctx, changes)
    occ: dict[str, list[Occurrence]] = {}
    for path in sorted(files):
        text = ctx.post_text(path)
        sight = Sight(path, text) if text is not None else None
        seen = {n for c in changes if sight.sees(c.header)
                for n in (c.name, c.new_name) if n} if sight is not None else set()
        if seen:
            occ[path] = occurrences(text, seen)

    headers = {diff_path(pf.target_file) for pf in ctx.diff if pf.target_file.endswith(".h")}
    findings = []
    for ch in changes:
        findings += _report(ctx, ch, occ, added, headers)
    return findings


def _report(ctx, ch: Change, occ: dict[str, list[Occurrence]], added,
            headers: set[str]) -> list:
    """Findings for one changed prototype: each use of it, stale declarations, a summary."""
    if ch.kind == "removed" and _still_declared(ch.name, occ):
        return []
    tally = _Tally()
    for path, mine, defined_here in _uses(ch, occ):
        plus = added.get(path, set())
        for o in mine:
            if o.kind in ("decl", "def"):
                _check_definition(ctx, ch, path, o, headers, tally)
                continue
            touched = hits(plus, o.line, o.end_line)
            if ch.kind in ("removed", "renamed"):
                _check_gone_use(ctx, ch, path, o, touched, defined_here, tally)
            elif o.kind == "call":
                _check_call(ctx, ch, path, o, touched, tally)
    tally.findings += _stale_decls(ctx, ch)
    tally.findings.append(_summary(ctx, ch, tally))
    return tally.findings


@dataclass
class _Tally:
    """What the report of one changed prototype collects while walking its uses."""
    findings: list = field(default_factory=list)
    updated: list[str] = field(default_factory=list)  # call sites the patch touches
    left: list[str] = field(default_factory=list)     # call sites it leaves alone


def _still_declared(name: str, occ: dict[str, list[Occurrence]]) -> bool:
    """A "removed" function still declared in some header was moved, not removed."""
    return any(o.kind in ("decl", "def") and o.name == name and path.endswith(".h")
               for path, os_ in occ.items() for o in os_)


def _uses(ch: Change, occ: dict[str, list[Occurrence]]):
    """Per file, the occurrences of ch's function (old or new name), and whether
    the file defines it; skipping tools/ copies and file-local namesakes."""
    for path, os_ in occ.items():
        if own_copy(path, ch.header):
            continue
        mine = [o for o in os_ if o.name in (ch.name, ch.new_name)]
        local_static = any(o.kind in ("decl", "def") and o.static and o.name == ch.name
                           for o in mine)
        if local_static and path != ch.header:
            continue   # a file-local function of the same name
        defined_here = any(o.kind == "def" and o.name == ch.name for o in mine)
        yield path, mine, defined_here


def _check_definition(ctx, ch: Change, path: str, o: Occurrence, headers: set[str],
                      tally: _Tally) -> None:
    """A definition (or declaration outside the changed headers) that kept the old
    parameter count: the header and the code no longer agree."""
    if (ch.kind == "changed" and o.name == ch.name and o.proto is not None
            and path not in headers and o.proto.kind == ch.new.kind
            and len(o.proto.params) != len(ch.new.params)):
        tally.findings.append(ctx.finding(
            "error", f"this {'definition' if o.kind == 'def' else 'declaration'} of "
                     f"{ch.name}() takes {len(o.proto.params)} parameters; the new "
                     f"prototype in {ch.header} takes {len(ch.new.params)}",
            file=path, line=o.line,
            details=f"here: {o.proto.signature()}\nnew:  {ch.new.signature()}",
            hint="change the definition with the prototype"))


def _check_gone_use(ctx, ch: Change, path: str, o: Occurrence, touched: bool,
                    defined_here: bool, tally: _Tally) -> None:
    """A use of a removed or renamed function: fine on the new name, a build
    break on the old one (unless the file still defines the removed function)."""
    name = ch.name
    where = f"{path}:{o.line}"
    if o.name == ch.new_name:
        if touched and o.kind == "call":
            tally.updated.append(f"{where}: {_call_text(o)}")
        return
    if ch.kind == "removed" and defined_here:
        return
    what = "called" if o.kind == "call" else "referenced"
    msg = (f"{name}() is renamed to {ch.new_name}() by this patch but still {what} here"
           if ch.kind == "renamed" else
           f"{name}() is removed by this patch but still {what} here")
    tally.findings.append(ctx.finding(
        "error", msg, file=path, line=o.line,
        hint=(f"use {ch.new_name}() here too" if ch.kind == "renamed"
              else "update this caller in the same patch")
        + " (this breaks the build of every config compiling the file)"))
    tally.left.append(f"{where}: {_call_text(o) if o.kind == 'call' else name} (error)")


def _check_call(ctx, ch: Change, path: str, o: Occurrence, touched: bool,
                tally: _Tally) -> None:
    """A call of a changed prototype: a wrong argument count breaks the build; a
    literal passed to a new enum parameter compiles but is likely a leftover."""
    new = ch.new
    status = ""
    if not new.accepts(o.nargs):
        want = (f"at least {len(new.params)}" if new.variadic else str(len(new.params)))
        tally.findings.append(ctx.finding(
            "error", f"{ch.name}() takes {want} argument{'s' if want != '1' else ''} after "
                     f"this patch; this call passes {o.nargs}",
            file=path, line=o.line, details=f"now: {new.signature()}",
            hint="update this caller in the same patch (this breaks the build of "
                 "every config compiling the file)"))
        status = "error"
    else:
        warnings = _enum_literals(ctx, ch, path, o)
        tally.findings += warnings
        if warnings:
            status = "warning"
    line = f"{path}:{o.line}: {_call_text(o)}" + (f" ({status})" if status else "")
    (tally.updated if touched else tally.left).append(line)


def _enum_literals(ctx, ch: Change, path: str, o: Occurrence) -> list:
    """Warnings for boolean or integer literals passed to parameters that became
    enums, and for integer variables passed to a bool that became an enum."""
    new = ch.new
    out = []
    for i, p in enumerate(new.params):
        if not p.type.startswith("enum ") or i >= o.nargs:
            continue
        was = ch.old.params[i].type if i < len(ch.old.params) else None
        lit = literal(o.args[i])
        if was != p.type and lit is not None:
            out.append(ctx.finding(
                "warning", f"{ch.name}() parameter {i + 1} is now {p.type}; "
                           f"this caller still passes '{lit}'",
                file=path, line=o.line, details=f"now: {new.signature()}",
                hint=f"pass a value of {p.type} instead of a boolean or "
                     "integer literal"))
        elif was in ("bool", "_Bool") and lit is None:
            out += _widened(ctx, ch, path, o, i)
    return out


def _widened(ctx, ch: Change, path: str, o: Occurrence, i: int) -> list:
    """A warning when argument ``i`` is the caller's own integer variable, not
    range-checked: it was converted to bool and now reaches the enum as it is."""
    arg = " ".join(o.args[i].split())
    if not re.fullmatch(r"[A-Za-z_]\w*", arg) or re.fullmatch(r"[A-Z][A-Z0-9_]*", arg):
        return []
    local = local_at(ctx.post_text(path) or "", o.line, arg)
    if local is None or not local.integer or local.bounded:
        return []
    enum = ch.new.params[i].type
    return [ctx.finding(
        "warning", f"{ch.name}() parameter {i + 1} was bool and is now {enum}; this caller "
                   f"passes its {local.type} '{arg}', no longer turned into 0 or 1",
        file=path, line=o.line,
        details=f"now: {ch.new.signature()}\n'{arg}' is declared {local.type} here and not "
                "compared with a constant before this call",
        hint=f"map '{arg}' to a value of {enum} in this patch (e.g. '{arg} ? ... : ...'), "
             "or check its range before the call")]


def _stale_decls(ctx, ch: Change) -> list:
    """Errors for other declarations (often !CONFIG stubs) left with the old prototype."""
    return [ctx.finding(
        "error", f"this declaration of {ch.name}() still has the old prototype",
        file=h, line=p.line, details=f"old: {p.signature()}\nnew: {ch.new.signature()}",
        hint="update the other declaration (often a !CONFIG stub) too")
        for h, p in ch.stale_decls]


def _summary(ctx, ch: Change, tally: _Tally):
    """The info finding listing every call site, so a reviewer sees the whole picture."""
    name = ch.name
    updated, left = tally.updated, tally.left
    line = ch.new.line if ch.new is not None else None
    file = ch.header if ch.new is not None else None
    if ch.kind == "changed":
        msg = (f"{name}() prototype changed: {len(updated) + len(left)} call sites in the tree, "
               f"{len(updated)} updated by this patch")
    elif ch.kind == "renamed":
        msg = (f"{name}() renamed to {ch.new_name}(): {len(updated)} callers updated by this "
               f"patch, {len(left)} left on the old name")
    else:
        msg = f"{name}() removed: {len(left)} callers left"
    details = [ch.describe(), "", "updated by this patch:"]
    details += [f"  {u}" for u in sorted(updated)] or ["  (none)"]
    details += ["not changed by this patch:"]
    details += [f"  {u}" for u in sorted(left)] or ["  (none)"]
    return ctx.finding("info", msg, file=file, line=line, details="\n".join(details))
