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
    - nothing for a caller passing a variable (an integer converts to an
      enum silently; it compiles).

    An info finding per changed prototype lists the call sites, and which
    of them the patch updated, so a reviewer sees the whole picture.

Why a reviewer cares:
    A caller left behind is a build break, often only in a config nobody
    built before posting (a wireless driver, an ARM-only Ethernet driver).
    v2 of the threaded busy poll series turned ``dev_set_threaded(dev,
    bool)`` into ``dev_set_threaded(dev, enum netdev_napi_threaded)`` and
    missed the driver callers; v3's changelog says "Fixed calls to
    dev_set_threaded in drivers".

Example:
    ``int dev_set_threaded(struct net_device *dev, enum netdev_napi_threaded
    threaded);`` with ``drivers/net/ethernet/renesas/ravb_main.c`` still
    doing ``dev_set_threaded(ndev, true);``.

Fix:
    Update every caller in the same patch (``git grep -w NAME``), passing
    enum values (``NETDEV_NAPI_THREADED_ENABLED``) rather than booleans.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field

from napipatch.checks import check
from napipatch.kernel.cparse_calls import (
    Occurrence,
    Proto,
    literal,
    occurrences,
    prototypes,
)
from napipatch.tree import treegrep


@dataclass
class Change:
    kind: str                 # changed | removed | renamed
    name: str
    header: str
    old: Proto
    new: Proto | None = None  # the new prototype (for renamed: under new_name)
    new_name: str = ""
    stale_decls: list[tuple[str, Proto]] = field(default_factory=list)

    def describe(self) -> str:
        if self.kind == "changed":
            return f"{self.old.signature()}  ->  {self.new.signature()}"
        if self.kind == "renamed":
            return f"{self.name}() renamed to {self.new_name}()"
        return f"{self.name}() removed"


def _path(p: str) -> str:
    return p[2:] if p[:2] in ("a/", "b/") else p


def _line_sets(ctx) -> tuple[dict[str, set[int]], dict[str, set[int]]]:
    """Per file: post-patch lines the patch adds, pre-patch lines it removes."""
    added: dict[str, set[int]] = {}
    removed: dict[str, set[int]] = {}
    for pf in ctx.diff:
        a = added.setdefault(_path(pf.target_file), set())
        r = removed.setdefault(_path(pf.source_file), set())
        for hunk in pf:
            for ln in hunk:
                if ln.is_added:
                    a.add(ln.target_line_no)
                elif ln.is_removed:
                    r.add(ln.source_line_no)
    return added, removed


def _hits(lines: set[int], first: int, last: int) -> bool:
    return any(first <= n <= last for n in lines)


def _changes(ctx, added, removed) -> list[Change]:
    pre_all: dict[str, list[tuple[str, Proto]]] = {}
    post_all: dict[str, list[tuple[str, Proto]]] = {}
    pre_cand: set[str] = set()
    post_cand: set[str] = set()
    for pf in ctx.diff:
        src, dst = _path(pf.source_file), _path(pf.target_file)
        path = dst if dst != "/dev/null" and not dst.endswith("dev/null") else src
        if not path.endswith(".h"):
            continue
        pre = ctx.pre_text(src) if not pf.is_added_file else None
        post = ctx.post_text(dst) if not pf.is_removed_file else None
        for p in prototypes(pre) if pre else []:
            pre_all.setdefault(p.name, []).append((src, p))
            if _hits(removed.get(src, set()), p.line, p.end_line):
                pre_cand.add(p.name)
        for p in prototypes(post) if post else []:
            post_all.setdefault(p.name, []).append((dst, p))
            if _hits(added.get(dst, set()), p.line, p.end_line):
                post_cand.add(p.name)

    def pick(entries, lines_by_file):
        for path, p in entries:
            if _hits(lines_by_file.get(path, set()), p.line, p.end_line):
                return path, p
        return entries[0]

    out: list[Change] = []
    gone, fresh = [], []
    for name in sorted(pre_cand | post_cand):
        before, after = pre_all.get(name), post_all.get(name)
        if before and after:
            if {p.key for _, p in before} == {p.key for _, p in after}:
                continue
            _, old = pick(before, removed)
            header, new = pick(after, added)
            if old.key == new.key:
                continue
            ch = Change("changed", name, header, old, new)
            # Another declaration (a !CONFIG stub) left with the old prototype.
            ch.stale_decls = [(h, p) for h, p in after
                              if p.key == old.key and p.key != new.key]
            out.append(ch)
        elif before:
            gone.append(pick(before, removed))
        elif after and name in post_cand:
            fresh.append(pick(after, added))
    for header, old in gone:
        same = [(h, p) for h, p in fresh if (p.kind, p.ret, tuple(x.type for x in p.params),
                                              p.variadic) == (old.kind, old.ret,
                                                              tuple(x.type for x in old.params),
                                                              old.variadic)]
        same.sort(key=lambda hp: hp[0] != header)
        if same:
            h, p = same[0]
            fresh.remove(same[0])
            out.append(Change("renamed", old.name, h, old, p, new_name=p.name))
        else:
            out.append(Change("removed", old.name, header, old))
    return out


def _grep(ctx, changes: list[Change]) -> dict[str, list[int]]:
    """Files (post-patch) mentioning the changed names as words, with the lines.

    A name from a header under ``include/`` is looked for in the whole
    tree; one from a driver's own header under the directory above that
    header's (siblings include each other's headers as ``../wlcore/x.h``):
    on a 86,000-file tree that is the difference between reading the
    tree and reading a driver.
    """
    by_dir: dict[str, set[str]] = {}
    for c in changes:
        where = "" if _global(c.header) else posixpath.dirname(posixpath.dirname(c.header))
        by_dir.setdefault(where, set()).update(n for n in (c.name, c.new_name) if n)
    everywhere = by_dir.pop("", set())
    out = {p: set(ls) for p, ls in ctx.tree.grep.grep(
        ctx.post, treegrep.words(everywhere)).items()} if everywhere else {}
    for d, names in sorted(by_dir.items()):
        if names - everywhere:
            pat = treegrep.words(names - everywhere, (f"{d}/*.c", f"{d}/*.h"))
            for p, ls in ctx.tree.grep.grep(ctx.post, pat).items():
                out.setdefault(p, set()).update(ls)
    return {p: sorted(ls) for p, ls in out.items()}


def _global(header: str) -> bool:
    """A header any file of the tree may include (under an ``include/`` directory)."""
    return header.startswith("include/") or "/include/" in header


def _foreign(path: str, header: str) -> bool:
    """tools/ (outside tools/testing) has its own copies of kernel helpers."""
    return (path.startswith("tools/") and not path.startswith("tools/testing/")
            and not header.startswith("tools/"))


_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*"([^"]+)"', re.M)


def _sees(path: str, text: str, header: str, includes: list[str]) -> bool:
    """Can ``path`` see what ``header`` declares?

    A header under an ``include/`` directory: every file. A driver's own
    header (``drivers/net/ethernet/intel/idpf/idpf_mem.h``): the files of its
    directory and below, and the files that include it by a relative path.
    Drivers have their own ``rd32()`` macros; renaming idpf's is not a
    build break in igb, which calls its own.
    """
    if _global(header):
        return True
    if path == header or path.startswith(posixpath.dirname(header) + "/"):
        return True
    if not includes:
        here = posixpath.dirname(path)
        includes += [posixpath.normpath(posixpath.join(here, m)) for m in _INCLUDE.findall(text)]
        includes.append("")     # read, even when there are none
    return header in includes


def _call_text(o: Occurrence) -> str:
    args = ", ".join(" ".join(a.split()) for a in o.args)
    return f"{o.name}({args})"


@check(id="callsites",
       summary="callers of functions whose prototype changes (count, types, rename, removal)",
       scope="patch",
       needs="tree",
       version=2)
def run(ctx):
    if not ctx.applied:
        return []
    added, removed = _line_sets(ctx)
    changes = _changes(ctx, added, removed)
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
        includes: list[str] = []     # read once per file, only if a driver header asks
        seen = {n for c in changes if _sees(path, text, c.header, includes)
                for n in (c.name, c.new_name) if n} if text is not None else set()
        if seen:
            occ[path] = occurrences(text, seen)

    headers = {_path(pf.target_file) for pf in ctx.diff if pf.target_file.endswith(".h")}
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
            touched = _hits(plus, o.line, o.end_line)
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
        if _foreign(path, ch.header):
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
    """Warnings for boolean or integer literals passed to parameters that became enums."""
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
    return out


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
