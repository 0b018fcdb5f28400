"""Reading an inline review: an email-style reply that quotes the patch.

netdev's review prompts (masoncl/review-prompts) have the agent write
``review-inline.txt``: the lines it comments on quoted as a reviewer quotes
them (``> `` and the diff line with its ``+``/``-``/`` `` marker, the
``diff --git`` and ``@@`` lines kept where it helps), each quote followed
by the comment. Text before the first quote is the header (``commit``,
subject, summary); ``[ ... ]`` marks a cut. This turns the text into
``Comment``s: the quoted lines, the file and hunk header in force, and the
comment's words. Where a comment belongs in the series is quotemap's job.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

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
