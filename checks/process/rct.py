"""Local variables a patch adds out of reverse xmas tree (RCT) order.

What it catches:
    In ``.c`` files under ``net/`` and ``drivers/net/``, the block of local
    declarations at the top of each function body the patch adds to or
    changes (the lines after a ``{`` alone on its line, one tab in; without
    a tree, a hunk that starts inside such a block counts from its first
    line). A blank line or a comment ends a group and each group is ordered
    on its own, as netdev accepts; a preprocessor line (``#ifdef``) ends the
    block. A declaration is one statement: ``struct foo *a = ...;``,
    arrays, ``__maybe_unused``, ``DECLARE_BITMAP()``. A multi-line one is
    as long as its first line or as its longest: where those disagree
    about an order, it is not flagged.
    An added declaration (its first line is a ``+``
    line) is out of order when a longer one follows a shorter one and the
    longer one's initializer does not use the shorter one's variable
    (directly or through another; that order is forced). Lines the patch
    did not add never count against it: a block it does not touch is not
    looked at, and an added line in an already unordered group is flagged
    only when some place in that group would be in order for it. One
    warning per group, at the first out-of-order added line; the hint
    gives the order. With a tree the whole post-image is read, without one
    the hunks.

Why a reviewer cares:
    Documentation/process/maintainer-netdev.rst, "Local variable ordering
    ('reverse xmas tree', 'RCT')": "Netdev has a convention for ordering
    local variables in functions. Order the variable declaration lines
    longest to shortest, e.g.::

        struct scatterlist *sg;
        struct sk_buff *skb;
        int err, i;

    If there are dependencies between the variables preventing the
    ordering move the initialization out of line." netdev maintainers ask
    for a new version for it; no NIPA test checks it (group "netdev
    process").

    Measured on real code (benchmarks/README.md, "rct on real networking
    code"; 2026-12-03, commit b1a7eeb, 2 cores, diff-only): the .c files
    of the 6.12 tree's drivers/net/ethernet/intel/ice posted as new files
    (62,426 added lines) give 5 findings, all real RCT breaks; bnxt, mlx5
    en and net/core (71,771 lines) give 103, of which 37 read by hand
    were 36 real and 1 arguable (two parallel get_unaligned() lines 2
    characters apart). On a real upstream diff, 6.12 -> 7.2 in net/core,
    net/ipv4, net/ipv6 + mptcp, fbnic, bnxt and idpf (benchmarks/
    large_diff.py --upstream; 82,379 changed lines; 2026-12-03, commit
    788c5ce): 26 findings, all read: 2 false (two bool lines one
    character apart; a multi-line DEFINE_RAW_FLEX() misread), 2 real breaks
    made by a tree-wide rename (timer_container_of()) that no maintainer
    would ask the rename to fix, 22 real breaks in new or changed code.
    Goal: under 20 false findings per 60k lines.

Example:
    ``+	int err;`` then ``+	struct mlx5e_priv *priv = netdev_priv(dev);``
    at the top of a new function in drivers/net/ethernet/.../en_main.c.

Fix:
    Reorder the lines longest first; where an initializer needs a variable
    declared on a shorter line, move that initialization into the body.
    ``napipatch fix`` reorders a block of one-line declarations as the hint
    says (with the tree, on the whole function), unless an initializer
    reads another local of the block; then it says so and leaves it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from napipatch.checks import check
from napipatch.report.findings import edit_between, fix, not_fixable

_DIRS = ("net/", "drivers/net/")
_KEYWORDS = {"return", "goto", "break", "continue", "case", "default", "else", "do", "if",
             "while", "for", "switch", "sizeof", "asm", "typeof", "__typeof__"}
_ATTR = r"__\w+(?:\([^()]*(?:\([^()]*\)[^()]*)*\))?"
# One tab, then (qualifiers) type, pointer stars or a space, a name, array
# dimensions and attributes, then =, ; or , (another name follows).
_DECL = re.compile(
    rf"^\t(?:(?:{_ATTR}|const|static|volatile|register|unsigned|signed|struct|union|enum|"
    rf"long|short)\s+)*[A-Za-z_]\w*(?:\s+(?:const|{_ATTR}))*"
    rf"(?:\s*\*+\s*(?:const\s+)?\**\s*|\s+)[A-Za-z_]\w*\s*(?:\[[^\]]*\]\s*)*"
    rf"(?:{_ATTR}\s*)*(?:=|;|,)")
# Macros that declare a variable: DECLARE_BITMAP(name, n), LIST_HEAD(name).
_MACRO = re.compile(r"^\t(?:DECLARE|DEFINE)_[A-Z0-9_]+\(\s*(\w+)|^\t(?:H?LIST_HEAD)\(\s*(\w+)")
_IDENT = re.compile(r"[A-Za-z_]\w*")
_MAX_LINES = 40   # a "declaration" longer than this is something else


@dataclass
class Decl:
    line: int                      # post-image number of its first line
    text: str                      # its first line, without the newline
    added: bool                    # the patch added its first line
    names: set[str] = field(default_factory=set)
    uses: str = ""                 # its initializers' text
    short: int = 0                 # its first line's width (tabs expanded, no comment)
    long: int = 0                  # its longest line's: the same for a one-line one


def _widths(statement: str) -> tuple[int, int]:
    w = [len(_strip_comment(ln).rstrip().expandtabs(8)) for ln in statement.split("\n")]
    return w[0], max(w)


def _shorter(a: Decl, b: Decl) -> bool:
    """``a`` is shorter than ``b`` however a multi-line one is measured
    (its first line or its longest): where that is ambiguous, neither is."""
    return a.long < b.short


def _strip_comment(s: str) -> str:
    s = re.sub(r"/\*.*?\*/", "", s)
    return s.split("//", 1)[0]


def _depth(s: str) -> int:
    s = re.sub(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'', "", _strip_comment(s))
    return sum(s.count(c) for c in "([{") - sum(s.count(c) for c in ")]}")


def _split_top(s: str, sep: str) -> list[str]:
    out, depth, cur = [], 0, ""
    for ch in s:
        depth += ch in "([{"
        depth -= ch in ")]}"
        if ch == sep and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    return out + [cur]


def _parse(statement: str, macro: re.Match | None) -> tuple[set[str], str]:
    """The names a declaration statement declares, and its initializers' text."""
    if macro:
        return {macro.group(1) or macro.group(2)}, ""
    names, uses = set(), []
    for part in _split_top(_strip_comment(statement).strip().rstrip(";"), ","):
        left, *right = _split_top(part, "=")
        uses.append("=".join(right))
        left = re.sub(_ATTR, " ", re.sub(r"\[[^\]]*\]", " ", left))
        idents = _IDENT.findall(left)
        if idents:
            names.add(idents[-1])
    return names, " ".join(uses)


def _is_decl(text: str) -> re.Match | bool | None:
    first = _IDENT.match(text.lstrip("\t"))
    if not text.startswith("\t") or text.startswith(("\t\t", "\t ")):
        return None
    if first and first.group() in _KEYWORDS:
        return None
    return _MACRO.match(text) or bool(_DECL.match(text))


def groups(lines: list[tuple[int, str, bool]], start: int) -> list[list[Decl]]:
    """The groups of declarations in the block starting at ``lines[start]``
    (post-image (number, text, added) lines), up to the first line that is
    not a declaration, a comment or a blank line, or a preprocessor line."""
    out: list[list[Decl]] = [[]]
    i = start
    while i < len(lines):
        _n, text, _a = lines[i]
        bare = text.strip()
        if not bare:
            out.append([])
            i += 1
            continue
        if bare.startswith(("/*", "//", "*")):
            out.append([])
            while "*/" not in text and bare.startswith("/*") and i + 1 < len(lines):
                i += 1
                text = lines[i][1]
            i += 1
            continue
        hit = _is_decl(text)
        if not hit:     # a statement, or a preprocessor line (#ifdef): the block ends
            break
        # the whole statement: to the ';' that closes it at depth 0
        j, statement = i, text
        while not (_depth(statement) <= 0 and _strip_comment(statement).rstrip().endswith(";")):
            j += 1
            if j >= len(lines) or j - i > _MAX_LINES or lines[j][1].startswith("#"):
                return [g for g in out if g]    # cut off: not a declaration we can read
            statement += "\n" + lines[j][1]
        names, uses = _parse(statement, hit if isinstance(hit, re.Match) else None)
        out[-1].append(Decl(lines[i][0], text, lines[i][2], names, uses, *_widths(statement)))
        i = j + 1
    return [g for g in out if g]


def _needs(group: list[Decl]) -> list[set[int]]:
    """For each declaration, the earlier ones it must follow (its
    initializer uses their names, directly or through another)."""
    after: list[set[int]] = []
    for k, d in enumerate(group):
        direct = {i for i in range(k) if any(re.search(rf"\b{re.escape(n)}\b", d.uses)
                                            for n in group[i].names)}
        for i in list(direct):
            direct |= after[i]
        after.append(direct)
    return after


def _bad(order: list[Decl], needs: dict[int, set[int]], ids: dict[int, int], x: int) -> bool:
    """Whether ``order[x]`` is out of order with any other declaration."""
    d = order[x]
    for y, e in enumerate(order):
        if y == x:
            continue
        first, second = (e, d) if y < x else (d, e)
        if _shorter(first, second) and ids[id(first)] not in needs[ids[id(second)]]:
            return True
        if ids[id(second)] in needs[ids[id(first)]]:
            return True          # a name used above its declaration
    return False


def verdict(group: list[Decl]) -> tuple[Decl, list[Decl]] | None:
    """None when the added declarations of ``group`` are in RCT order (or
    have no place that would be); else the first misplaced added one and
    the order to use."""
    if not any(d.added for d in group):
        return None
    ids = {id(d): k for k, d in enumerate(group)}
    needs = dict(enumerate(_needs(group)))
    order = list(group)
    wrong = [d for x, d in enumerate(order) if d.added and _bad(order, needs, ids, x)]
    if not wrong:
        return None
    moved = []
    rest = [d for d in order if d not in wrong]
    for d in sorted(wrong, key=lambda d: (-d.long, ids[id(d)])):
        for pos in range(len(rest) + 1):
            trial = rest[:pos] + [d] + rest[pos:]
            if not _bad(trial, needs, ids, pos):
                rest = trial
                moved.append(d)
                break
        else:   # no place in order for it (the lines around it are not): leave it
            rest.insert(min((k for k, e in enumerate(rest) if ids[id(e)] > ids[id(d)]),
                            default=len(rest)), d)
    if not moved or rest == order:
        return None
    # Where to point: the first moved line that is longer than one above it
    # (where the tree's outline breaks), else the first moved line.
    sticks = [d for d in moved if any(_shorter(e, d) and ids[id(e)] not in needs[ids[id(d)]]
                                      for e in order[:order.index(d)])]
    return min(sticks or moved, key=lambda d: d.line), rest


def _segments(ctx, pf) -> tuple[list[list[tuple[int, str, bool]]], bool, list[bool]]:
    """The post-image as (number, text, added) runs, whether it is the
    whole file (with a tree the patch applied to), else each hunk's context
    and added lines, and for each whether it opens inside a function."""
    added = {ln.target_line_no for h in pf for ln in h if ln.is_added}
    text = ctx.post_text(pf.path) if ctx.tree is not None and ctx.applied else None
    if text is not None:
        return [[(n, t, n in added) for n, t in enumerate(text.split("\n"), 1)]], True, [False]
    # A hunk that starts inside a body continues a function only where git's
    # hunk header (the enclosing definition) is a function's signature: one
    # inside a struct, union or initializer lists members, not locals.
    return [[(ln.target_line_no, ln.value.rstrip("\n"), ln.is_added) for ln in h
             if not ln.is_removed] for h in pf], False, \
        [_in_function(h.section_header) for h in pf]


def _in_function(header: str) -> bool:
    h = header.strip()
    return "(" in h and "=" not in h and not h.endswith("{")


def starts(segment: list[tuple[int, str, bool]], whole: bool,
           in_function: bool = True) -> list[int]:
    """Where declaration blocks begin: after each ``{`` alone on its line;
    in a hunk that opens inside a function, also its first line when that
    is a declaration."""
    out = [k + 1 for k, (_n, t, _a) in enumerate(segment) if t.rstrip() == "{"]
    if not whole and in_function and segment and _is_decl(segment[0][1]) and 0 not in out:
        out.insert(0, 0)
    return out


def findings_of(segment: list[tuple[int, str, bool]], whole: bool, in_function: bool = True):
    """(declaration, order) for each group out of order in ``segment``."""
    for decl, order, _group in _out_of_order(segment, whole, in_function):
        yield decl, order


def _out_of_order(segment, whole: bool, in_function: bool):
    for s in starts(segment, whole, in_function):
        for group in groups(segment, s):
            got = verdict(group)
            if got:
                yield got[0], got[1], group


def _reordered(path: str, group: list[Decl], order: list[Decl], whole: bool) -> dict:
    """The fix: the group's lines in ``order``, when each declaration is one
    line, the group's lines follow each other and no initializer reads
    another local of the group (moving it would change what it reads)."""
    if not whole:
        return not_fixable("needs the tree (the whole function, not a hunk)")
    one_line = all(_depth(d.text) <= 0 and _strip_comment(d.text).rstrip().endswith(";")
                   for d in group)
    if not one_line or [d.line for d in group] != list(range(group[0].line,
                                                             group[0].line + len(group))):
        return not_fixable("a declaration spans several lines")
    if any(_needs(group)):
        return not_fixable("an initializer reads another local of the block: move that "
                           "initialization into the body first")
    e = edit_between(path, "\n".join(d.text for d in group), "\n".join(d.text for d in order))
    e["line"] += group[0].line - 1
    return fix("reordered the declarations longest line first", e)


@check(id="rct",
       summary="local variables added out of reverse xmas tree order (net/, drivers/net/)",
       scope="patch",
       needs="diff",
       version=2,
       files=("net/*.c", "drivers/net/*.c"),
       group="netdev process",
       fixes="reorders one-line declarations longest first when no initializer reads "
             "another of them")
def run(ctx):
    for pf in ctx.diff:
        if pf.is_removed_file or not pf.path.endswith(".c") or \
                not pf.path.startswith(_DIRS):
            continue
        segs, whole, inside = _segments(ctx, pf)
        for decl, order, group in (x for seg, fn in zip(segs, inside)
                                   for x in _out_of_order(seg, whole, fn)):
            yield ctx.finding(
                "warning", f"local variables not in reverse xmas tree order: "
                f"{decl.text.strip()}", file=pf.path, line=decl.line,
                hint="order them longest first: " + " ".join(d.text.strip() for d in order),
                details="\n".join(d.text for d in order).expandtabs(8),
                fix=_reordered(pf.path, group, order, whole))
