"""Reading an inline review (an email-style reply that quotes the patch) and
placing each of its comments on the patch, file and line it quotes.

netdev's review prompts (masoncl/review-prompts) have the agent write
``review-inline.txt``: the lines it comments on quoted as a reviewer quotes
them (``> `` and the diff line with its ``+``/``-``/`` `` marker, the
``diff --git`` and ``@@`` lines kept where it helps), each quote followed
by the comment. Text before the first quote is the header (``commit``,
subject, summary); ``[ ... ]`` marks a cut. This turns the text into
``Comment``s: the quoted lines, the file and hunk header in force, and the
comment's words. Where a comment belongs in the series is the second
part's job (``QuoteMap``).
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field

from napipatch.mails.hunks import UnparsableDiff, hunk_lines, parse_diff
from napipatch.mails.mail import PatchMail

_DIFF_GIT = re.compile(r"^diff --git a/(\S+) b/(\S+)")
_PLUS_FILE = re.compile(r"^\+\+\+ (?:b/)?(\S+)")
_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+\d+(?:,\d+)? @@")
# A new commit's header in a review of several patches ends the comment before it.
_COMMIT = re.compile(r"^commit [0-9a-f]{7,40}\b")
_CUT = re.compile(r"^\[\s*\.\.\.\s*\]$")
_META = ("--- ", "index ", "new file mode", "deleted file mode", "similarity index",
         "rename from", "rename to", "old mode", "new mode")


@dataclass(frozen=True)
class Quoted:
    kind: str   # "+", "-", " " for a diff line; "" for a quoted line of prose
    text: str   # without its marker


@dataclass
class Comment:
    """One comment and the quote it answers.

    Attributes:
        lines: the quoted diff and prose lines of the block before it, in order.
        file: the file the quote is in (the last ``diff --git``/``+++`` quoted).
        hunk: the last ``@@ -a,b +c,d @@`` quoted ("" none).
        text: the comment, stripped.
    """

    lines: list[Quoted] = field(default_factory=list)
    file: str = ""
    hunk: str = ""
    text: str = ""

    @property
    def code(self) -> list[Quoted]:
        return [q for q in self.lines if q.kind]


def _quoted(line: str) -> str | None:
    """The text of a quoted line (``> x``), or None for an unquoted one."""
    if not line.startswith(">"):
        return None
    rest = line[1:]
    return rest.removeprefix(" ")


class _Reader:
    """The state across a review: the file and hunk quoted last, the block
    being quoted and the comment after it."""

    def __init__(self):
        self.file, self.hunk = "", ""
        self.block: list[Quoted] = []
        self.words: list[str] = []
        self.out: list[Comment] = []

    def quote(self, q: str) -> None:
        if self.words:
            self.flush()
        m = _DIFF_GIT.match(q)
        if m:
            self.file, self.hunk = m.group(2), ""
        elif (m := _PLUS_FILE.match(q)) and not q.startswith("++++"):
            self.file = m.group(1)
        elif _HUNK.match(q):
            self.hunk = _HUNK.match(q).group(0)
        elif q.startswith(_META):
            pass
        elif q[:1] in ("+", "-", " "):
            self.block.append(Quoted(q[0], q[1:]))
        elif q == "":
            self.block.append(Quoted(" ", ""))  # a blank context line loses its space in mail
        else:
            self.block.append(Quoted("", q))

    def say(self, line: str) -> None:
        if _COMMIT.match(line):
            self.flush()
            self.block = []
            return
        if not self.block and not self.words:
            return  # the header before the first quote
        if _CUT.match(line.strip()):
            return
        self.words.append(line)

    def flush(self) -> None:
        text = "\n".join(self.words).strip()
        if text and self.block:
            self.out.append(Comment(list(self.block), self.file, self.hunk, text))
        self.words = []
        if text:
            self.block = []


def parse(text: str) -> list[Comment]:
    """The comments of an inline review, in order; a quote followed by no
    words is no comment (an agent quotes context it then leaves alone)."""
    r = _Reader()
    for line in text.splitlines():
        q = _quoted(line.rstrip("\r"))
        if q is None:
            r.say(line.rstrip())
        else:
            r.quote(q.rstrip("\r"))
    r.flush()
    return r.out


# ----------------------------------------------------------------------
# Where a quoted comment belongs: the patch, file and post-patch line.
#
# A reviewer (or an agent) comments under the last line it quotes. That line
# is looked up among the diff lines of every patch by its marker and text
# (whitespace folded: a mail client may turn a tab into spaces); when the
# same line occurs more than once (the same ``return 0;`` added twice), the
# candidate whose preceding lines match more of the quote wins, then the one
# in the quoted file, then the one under the quoted hunk header. A quote of
# commit-message prose is placed on the patch whose message holds it. What
# matches nothing is None: the caller keeps it as a series-level comment.
#
# Bounded: each comment looks at most ``MAX_CANDIDATES`` places and compares
# at most ``MAX_BACK`` quoted lines, so a quote of every line of a large
# series costs a few thousand comparisons, not the square of its size.


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
