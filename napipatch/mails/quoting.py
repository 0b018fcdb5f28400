"""A reply's body as quoted context and the writer's own words.

Reviewers answer inline: a few quoted lines (``> ``, nested ``> > `` when
they quote a quote), then what they say about them. ``blocks`` cuts a body
into such pairs; ``own_words`` keeps, of what was written, what is more
than greetings, thanks, a one-word ack, a sign-off name or trailers, so a
"Thanks!" or a bare ``Reviewed-by:`` is no comment. ``promise`` tells an
author's "will fix in v2" from an explanation.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

MAX_BODY = 256 << 10  # characters of one reply read; a longer one is cut there

_QUOTE = re.compile(r"^[ \t]?((?:>[ \t]?)+)")
_NEUTRAL = re.compile(r"^\s*(\[\s*(\.\.\.|…|snip\w*)\s*\]|<\s*snip\w*\s*>|\.\.\.|…)?\s*$", re.I)
_WROTE = re.compile(r"\bwrote:\s*$|^\s*On .{0,200}(<[^<>\s]+@[^<>\s]+>|\d\d:\d\d.*)\s*$")
_TRAILER = re.compile(r"^\s*([A-Z][A-Za-z0-9-]*-by|Fixes|Link|Closes|Cc|pw-bot):\s", re.I)
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_THANKS = re.compile(r"^(many |big )?(thanks|thank you|thx|cheers|regards|best|br|kind regards|"
                     r"hi|hello|hey|dear|appreciate|really appreciate)\b", re.I)
_ACK = re.compile(r"\b(ok|okay|agreed|agree|right|sure|yes|yep|indeed|makes sense|sounds good|"
                  r"got it|fair enough|nice catch|good catch|good point|that explains it|"
                  r"understood|noted|lgtm|looks good|thanks|\+1)\b", re.I)
_PROMISE = re.compile(
    r"\b(will|i'll|we'll|going to|shall|plan to|can)\b[^.?!]{0,40}?\b(fix|do|send|split|change|"
    r"update|address|add|remove|drop|rename|respin|resend|repost|rework|move|switch|redo|"
    r"squash|convert|use)\b|\b(in|for) (the )?(next|v\d+)\b(?! of)|^\s*(ack|done|will do)\b",
    re.I)


@dataclass
class Block:
    """Quoted lines (markers and nesting removed) and the text written after them."""
    quote: list[str]
    text: str
    depth: list[int] = field(default_factory=list)  # of each quoted line

    def tail(self) -> list[str]:
        """The quoted lines the text answers: the last run quoted at the
        depth of the last one (what the writer replies to, not the older
        mails quoted inside it)."""
        lines = [(q, d) for q, d in zip(self.quote, self.depth) if q.strip()]
        if not lines:
            return []
        last = lines[-1][1]
        out = []
        for q, d in reversed(lines):
            if d != last:
                break
            out.append(q)
        return out[::-1]


def _unquote(line: str) -> tuple[str, int] | None:
    """The line without its quote markers and how deep it is quoted, or
    None when it is not quoted."""
    m = _QUOTE.match(line)
    if not m:
        return None
    # "> +\tcode": the one space after ">" is the quote's; a diff context
    # line keeps its own leading space ("> " + " \tcode").
    return line[m.end():], m.group(1).count(">")


def blocks(body: str) -> list[Block]:
    """The body as (quote, own text) pairs, in order; text before any quote
    has an empty quote. Attribution lines ("On ..., X wrote:") and elision
    marks ("[...]") join the quotes around them; the signature (``-- ``) and
    what follows it are dropped."""
    out: list[Block] = []
    quote: list[str] = []
    depth: list[int] = []
    own: list[str] = []
    for line in body[:MAX_BODY].split("\n"):
        if line.rstrip() == "--" and line.startswith("--"):
            break
        q = _unquote(line)
        if q is not None:
            if own and "".join(own).strip():
                out.append(Block(quote, "\n".join(own).strip(), depth))
                quote, depth = [], []
            own = []
            quote.append(q[0])
            depth.append(q[1])
        elif _NEUTRAL.match(line) or _WROTE.search(line):
            own.append("")
        else:
            own.append(line)
    if own and "".join(own).strip():
        out.append(Block(quote, "\n".join(own).strip(), depth))
    return out


def own_words(text: str) -> str:
    """What ``text`` says beyond greetings, thanks, acks, names and trailers
    ("" when nothing)."""
    lines = [ln for ln in text.split("\n") if not _TRAILER.match(ln)]
    kept = []
    for s in sentences("\n".join(lines)):
        words = s.split()
        if not words or _THANKS.match(s):
            continue
        if len(words) <= 2 and all(re.fullmatch(r"[A-Z][a-z]*[,.!]?|[,.!-]+", w) for w in words):
            continue  # "Martin", "Best, Martin", "Cheers,"
        if len(words) <= 5 and _ACK.search(s) and "?" not in s:
            continue  # "Ok, that explains it."
        kept.append(s)
    return " ".join(kept)


def sentences(text: str) -> list[str]:
    """``text``'s sentences, a line ending in ":" ending one too."""
    out = []
    for para in re.split(r"(?<=:)\n", text):
        out += [s for s in _SENTENCE.split(" ".join(para.split())) if s]
    return out


def promise(text: str) -> str:
    """The sentence of ``text`` that promises a change ("Will send again."), or ""."""
    for s in sentences(text):
        if _PROMISE.search(s):
            return s
    return ""


def norm(line: str) -> str:
    """A line compared by content: whitespace runs as one space, ends trimmed."""
    return " ".join(line.split())
