"""Where quoted lines stand in a patch: locating a reviewer's quote in the
diff it quotes, and the same lines in another version of the series.

A quote is located through the patch's own hunks (the same line can stand
elsewhere in the file), by content (whitespace runs compared as one space,
so a mail client's tabs-to-spaces does not matter), the quoted line's
``+``/``-``/`` `` marker optional. The line a comment is about is the last
line of substance quoted before it; the lines quoted above it are its
context, which tells two copies of one line apart.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from napipatch.mails.hunks import UnparsableDiff, hunk_lines, parse_diff
from napipatch.mails.quoting import norm

CONTEXT = 6   # quoted lines above the anchor that tell its copies apart
NEAR = 12     # lines around a candidate in which that context is looked for
TAIL = 12     # a comment is anchored on code among the last quoted lines only
_FILE = re.compile(r"^(?:diff --git a/\S+ b/(\S+)|\+\+\+ b/(\S+))")


@dataclass(frozen=True)
class PLine:
    """One line of a patch's diff."""
    file: str
    kind: str   # "+", "-" or " "
    text: str   # normalized, without the marker
    line: int   # post-patch line to point at


def patch_lines(diff: str) -> list[PLine]:
    """The diff's lines in order, each with its file and post-patch line
    (an unreadable diff has none: nothing can be located in it)."""
    try:
        ps = parse_diff(diff)
    except UnparsableDiff:
        return []
    return [PLine(pf.path, ln.kind, norm(ln.text), ln.anchor)
            for pf in ps for h in pf for ln in hunk_lines(h)]


def substantial(text: str) -> bool:
    """A line that says something on its own ("return -EINVAL;", not "}")."""
    return len(re.sub(r"[^A-Za-z0-9]", "", text)) >= 3


def _keys(quoted: str) -> tuple[str, str]:
    """(marker, text) of a quoted line: the marker is "" when it has none."""
    if quoted[:1] in ("+", "-", " ") and not quoted.startswith(("+++", "---")):
        return quoted[:1], norm(quoted[1:])
    return "", norm(quoted)


def _same(q: tuple[str, str], p: PLine) -> bool:
    marker, text = q
    return text == p.text and marker in ("", p.kind)


@dataclass(frozen=True)
class Anchor:
    """The patch line a comment is about, and the quoted code above it."""
    at: PLine
    kind: str
    context: tuple[str, ...]


def locate(quote: list[str], lines: list[PLine]) -> Anchor | None:
    """The line of ``lines`` that the end of ``quote`` is about, or None
    when the quote's last lines are no code of this patch."""
    hint = next((m.group(1) or m.group(2) for q in reversed(quote) if (m := _FILE.match(q))), "")
    keys = [_keys(q) for q in quote]
    for t in range(len(keys) - 1, max(-1, len(keys) - 1 - TAIL), -1):
        if not substantial(keys[t][1]):
            continue
        best, score = None, -1
        for i, p in enumerate(lines):
            if not _same(keys[t], p):
                continue
            run = 1
            while t - run >= 0 and i - run >= 0 and _same(keys[t - run], lines[i - run]):
                run += 1
            run += 2 if p.file == hint else 0
            if run > score:
                best, score = i, run
        if best is not None:
            ctx = tuple(k[1] for k in keys[max(0, t - CONTEXT):t] if substantial(k[1]))
            return Anchor(lines[best], lines[best].kind, ctx)
    return None


def find(anchor: Anchor, lines: list[PLine]) -> PLine | None:
    """Where ``anchor``'s line still stands in ``lines`` (another version's
    diff, same file, same side), or None when it no longer does: the lines
    were changed. Among several copies, the one with some of the quoted
    context around it; a single copy of a distinctive line stands even when
    its context changed."""
    ctx = set(anchor.context)
    found = [(i, p) for i, p in enumerate(lines)
             if p.file == anchor.at.file and p.text == anchor.at.text
             and (anchor.kind == " " or p.kind == anchor.kind)]
    best, score = None, 0
    for i, p in found:
        near = {q.text for q in lines[max(0, i - NEAR):i + NEAR] if q.file == p.file}
        if len(ctx & near) > score:
            best, score = p, len(ctx & near)
    if best is None and found and (not ctx or len(found) == 1 and distinctive(anchor.at.text)):
        best = found[0][1]
    return best


_COMMON = frozenset("return break continue goto else while static const struct void bool "
                    "true false NULL type name unsigned signed char long short".split())


def distinctive(text: str) -> bool:
    """A line one copy of which is that line ("dev->min_mtu = 68;"), not
    one of many ("return -EINVAL;", "type: u32")."""
    return any(len(t) >= 4 and t not in _COMMON and not re.fullmatch(r"E[A-Z0-9]+", t)
               for t in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text))


def covers(quote: list[str], lines: list[PLine]) -> bool:
    """A quote of (nearly) the whole patch: its comment is about the patch,
    not about the last lines quoted."""
    mine = {p.text for p in lines if substantial(p.text)}
    if len(mine) < 4:
        return False
    quoted = {_keys(q)[1] for q in quote}
    return len(mine & quoted) >= 0.8 * len(mine)


def at_tip(file: str, line: int, later: list[str]) -> int:
    """``line`` of ``file`` after the ``later`` patches' diffs apply: each
    hunk wholly above it moves it by what the hunk adds minus removes."""
    for diff in later:
        try:
            ps = parse_diff(diff)
        except UnparsableDiff:
            continue
        for pf in ps:
            if pf.path != file:
                continue
            move = 0
            for h in pf:
                if h.source_start + h.source_length <= line:
                    move += h.target_length - h.source_length
            line += move
    return line
