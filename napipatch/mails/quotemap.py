"""Where a quoted comment belongs: the patch, file and post-patch line.

A reviewer (or an agent) comments under the last line it quotes. That line
is looked up among the diff lines of every patch by its marker and text
(whitespace folded: a mail client may turn a tab into spaces); when the
same line occurs more than once (the same ``return 0;`` added twice), the
candidate whose preceding lines match more of the quote wins, then the one
in the quoted file, then the one under the quoted hunk header. A quote of
commit-message prose is placed on the patch whose message holds it. What
matches nothing is None: the caller keeps it as a series-level comment.

Bounded: each comment looks at most ``MAX_CANDIDATES`` places and compares
at most ``MAX_BACK`` quoted lines, so a quote of every line of a large
series costs a few thousand comparisons, not the square of its size.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from napipatch.mails.hunks import UnparsableDiff, hunk_lines, parse_diff
from napipatch.mails.inlinereview import Comment, Quoted
from napipatch.mails.mail import PatchMail

MAX_CANDIDATES = 2000
MAX_BACK = 200


@dataclass(frozen=True)
class Place:
    patch: int            # 1..N
    file: str | None = None
    line: int | None = None


@dataclass(frozen=True)
class _Entry:
    patch: int
    file: str
    hunk: str       # "@@ -a,b +c,d @@"
    kind: str
    text: str
    anchor: int


def _fold(text: str) -> str:
    return " ".join(text.split())


def _header(h) -> str:
    return f"@@ -{h.source_start},{h.source_length} +{h.target_start},{h.target_length} @@"


def _same_hunk(quoted: str, ours: str) -> bool:
    # "@@ -10 +10,2 @@" means a length of 1: compare the starts only
    def starts(h: str) -> tuple[str, str]:
        old, new = h.split()[1:3]
        return old.split(",")[0], new.split(",")[0]
    try:
        return starts(quoted) == starts(ours)
    except (IndexError, ValueError):
        return False


class QuoteMap:
    """The diff lines of a series, indexed by marker and folded text."""

    def __init__(self, patches: list[PatchMail]):
        self.entries: list[_Entry] = []
        self.by_line: dict[tuple[str, str], list[int]] = defaultdict(list)
        self.messages = [_fold(m.message) for m in patches]
        for n, mail in enumerate(patches, 1):
            try:
                diff = parse_diff(mail.diff)
            except UnparsableDiff:
                continue   # the diff checks say why; its lines match nothing here
            for pf in diff:
                for h in pf:
                    for ln in hunk_lines(h):
                        self.by_line[(ln.kind, _fold(ln.text))].append(len(self.entries))
                        self.entries.append(_Entry(n, pf.path, _header(h), ln.kind, ln.text,
                                                   ln.anchor))

    def place(self, c: Comment) -> Place | None:
        """Where ``c`` belongs, or None when its quote matches no line."""
        code = c.code
        if code:
            return self._code_place(c, code)
        prose = [_fold(q.text) for q in c.lines if _fold(q.text)]
        if prose:
            for n, message in enumerate(self.messages, 1):
                if prose[-1] in message:
                    return Place(n)
        return None

    def _code_place(self, c: Comment, code: list[Quoted]) -> Place | None:
        last = code[-1]
        cands = self.by_line.get((last.kind, _fold(last.text)), [])[:MAX_CANDIDATES]
        best, best_score = None, None
        for i in cands:
            score = (self._run(code, i), c.file == self.entries[i].file,
                     bool(c.hunk) and _same_hunk(c.hunk, self.entries[i].hunk))
            if best_score is None or score > best_score:
                best, best_score = i, score
        if best is None:
            return None
        e = self.entries[best]
        return Place(e.patch, e.file, e.anchor)

    def _run(self, code: list[Quoted], i: int) -> int:
        """How many quoted lines before the last match the lines before
        entry ``i`` in its hunk, one for one."""
        e = self.entries[i]
        n = 0
        for k in range(1, min(len(code), MAX_BACK)):
            j = i - k
            if j < 0:
                break
            prev, q = self.entries[j], code[-1 - k]
            if (prev.patch, prev.file, prev.hunk) != (e.patch, e.file, e.hunk) or \
                    prev.kind != q.kind or _fold(prev.text) != _fold(q.text):
                break
            n += 1
        return n
