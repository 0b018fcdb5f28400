"""Reading a diff's hunks as the text before and after, with line numbers.

unidiff gives lines one by one; checks that read code from the diff alone
want the post-patch side of a hunk as consecutive lines (to find a comment
and the declaration under it) and, for a removed line, the post-patch line
a reviewer would comment on.
"""

from __future__ import annotations

from dataclasses import dataclass

from unidiff import PatchedFile, PatchSet
from unidiff.errors import UnidiffParseError

from napipatch.errors import NapipatchError


class UnparsableDiff(NapipatchError):
    """A mail whose diff unidiff cannot read (a hunk cut short, a stray @@)."""


def parse_diff(text: str, origin: str = "the diff") -> PatchSet:
    """A mail's diff as a PatchSet. A diff that cannot be read is an error
    naming ``origin``, never an empty PatchSet: every check that reads the
    diff would otherwise see "no changes" and pass."""
    try:
        return PatchSet(text)
    except (UnidiffParseError, ValueError, IndexError) as exc:
        raise UnparsableDiff(origin, f"the diff cannot be parsed: {str(exc).strip()}") from None


@dataclass(frozen=True)
class Line:
    text: str       # without the newline
    kind: str       # "+", "-" or " "
    old: int | None  # pre-patch line number
    new: int | None  # post-patch line number
    anchor: int     # post-patch line to point at (for "-" lines: where the removal is)


def hunk_lines(hunk) -> list[Line]:
    out: list[Line] = []
    pending: list[tuple] = []
    last_new = hunk.target_start - 1
    for ln in hunk:
        kind = ln.line_type
        if kind not in ("+", "-", " "):
            continue
        text = ln.value.rstrip("\n")
        if kind == "-":
            pending.append((text, ln.source_line_no))
            continue
        for t, old in pending:
            out.append(Line(t, "-", old, None, ln.target_line_no))
        pending = []
        last_new = ln.target_line_no
        out.append(Line(text, kind, ln.source_line_no if kind == " " else None, ln.target_line_no,
                        ln.target_line_no))
    for t, old in pending:
        out.append(Line(t, "-", old, None, max(last_new, 1)))
    return out


def post_image(hunk) -> list[Line]:
    """The post-patch lines of a hunk (context and added), in order."""
    return [ln for ln in hunk_lines(hunk) if ln.kind != "-"]


def pre_image(hunk) -> list[Line]:
    return [ln for ln in hunk_lines(hunk) if ln.kind != "+"]


def added_lines(pf: PatchedFile) -> set[int]:
    return {ln.target_line_no for h in pf for ln in h if ln.line_type == "+"}


def source_files(diff, exts=(".c", ".h")) -> list[PatchedFile]:
    """Files of the diff that still exist after it, with one of ``exts``."""
    return [pf for pf in diff if not pf.is_removed_file and pf.path.endswith(exts)]
