"""Review comments of a version's thread, and the author's answers to them.

A **review comment** is what a reply by someone other than the series'
author writes after a quote, when it is more than greetings, thanks, an ack
or trailers (``quoting.own_words``); one reply holds one per quoted block.
A comment whose quote ends on lines of the patch's diff is anchored there
(FILE:LINE in that version); one quoting prose, nothing, or the whole patch
is **general**. An **answer** is the author's reply below the reviewer's
mail (any depth) that quotes the comment's words and writes after them
(or answers the mail without quoting): ``promised`` when it promises a
change ("will fix in v2"), else ``explained``.

Comments are plain dicts (they go into the history record, which is hashed
into the check's cache key); ``LORE_LINK`` names each by Message-ID.
"""

from __future__ import annotations

import email.utils

from napipatch.mails import patchtext, quoting
from napipatch.mails.mail import PatchMail
from napipatch.mails.replies import Thread, thread
from napipatch.mails.series import Series

LORE_LINK = "https://lore.kernel.org/all/{msgid}/"
FIRST = 160  # characters of a comment's words shown as its first line


def gather(s: Series, replies: list[PatchMail], link: str = LORE_LINK) -> dict:
    """``{"author", "comments", "skipped"}`` of version ``s`` and its replies;
    ``link`` makes a comment's URL from its ``{msgid}`` (the bot: its archive's)."""
    author = s.head.author_email.lower()
    t = thread(s.cover.msgid if s.cover else "", [p.msgid for p in s.patches], replies)
    lines = [patchtext.patch_lines(p.diff) for p in s.patches]
    comments: list[dict] = []
    for r in replies:
        if r.msgid in t.patch and r.author_email.lower() != author:
            comments += _of_reply(r, t.patch[r.msgid], lines, len(s.patches), link)
    by_mail: dict[str, list[dict]] = {}
    for c in comments:
        by_mail.setdefault(c["message-id"], []).append(c)
    for r in replies:
        if r.msgid in t.patch and r.author_email.lower() == author:
            _answers(r, t, by_mail)
    return {"author": author, "comments": comments, "skipped": t.skipped}


def _of_reply(r: PatchMail, n: int, lines: list[list[patchtext.PLine]], total: int,
              link: str) -> list[dict]:
    out = []
    for b in quoting.blocks(r.body):
        words = quoting.own_words(b.text)
        if not words:
            continue
        c = {"reviewer": r.author, "email": r.author_email.lower(), "message-id": r.msgid,
             "patch": n, "total": total, "words": words[:4000], "first": _first(words),
             "said": [quoting.norm(x) for x in b.text.split("\n")
                      if patchtext.substantial(x)][:200],
             "link": link.format(msgid=r.msgid)}
        c.update(_anchor(b.quote, n, lines))
        out.append(c)
    return out


def _anchor(quote: list[str], n: int, lines: list[list[patchtext.PLine]]) -> dict:
    """Where the comment's quote ends in the patch (or any patch, for a
    reply to the cover letter): file, line, the line's text and context."""
    if not quote:
        return {"general": "quotes nothing"}
    where = [n] if n else range(1, len(lines) + 1)
    for k in where:
        if patchtext.covers(quote, lines[k - 1]):
            return {"general": "quotes the whole patch"}
        a = patchtext.locate(quote, lines[k - 1])
        if a is not None:
            return {"file": a.at.file, "line": a.at.line, "kind": a.kind, "text": a.at.text,
                    "context": list(a.context), "in-patch": k}
    return {"general": "quotes no line of the diff"}


def _first(words: str) -> str:
    s = (quoting.sentences(words) or [""])[0]
    return s if len(s) <= FIRST else s[:FIRST - 3] + "..."


def _answers(r: PatchMail, t: Thread, by_mail: dict[str, list[dict]]) -> None:
    """Mark the comments ``r`` (a mail of the author's) answers."""
    above = [m for m in t.parents.get(r.msgid, []) if m in by_mail]
    if not above:
        return
    said = [(b, words) for b in quoting.blocks(r.body) if (words := quoting.own_words(b.text))]
    done = set()
    for b, words in said:
        # What a block answers is what its quote ends with.
        tail = {quoting.norm(q) for q in b.tail()}
        for c in (c for m in above for c in by_mail[m] if tail & set(c["said"])):
            _mark(c, r, words)
            done.add(c["message-id"])
    if not said:
        return
    # An answer to the whole mail, two levels up at most: one quoting it
    # but not ending on a comment, or one quoting nothing (top-posted).
    quoted = {quoting.norm(q) for b in quoting.blocks(r.body) for q in b.quote}
    words = " ".join(w for _b, w in said)
    for m in t.parents[r.msgid][:2]:
        for c in by_mail.get(m, []):
            if m not in done and (quoted & set(c["said"]) or not quoted):
                _mark(c, r, words)


def _mark(c: dict, r: PatchMail, words: str) -> None:
    promised = quoting.promise(words)
    if c.get("answer") and not promised:
        return  # the first explanation; a promise stands until vN keeps it
    c["answer"] = {"kind": "promised" if promised else "explained",
                   "text": _first(promised or words), "message-id": r.msgid,
                   "by": r.author}


def name_parts(person: str) -> list[str]:
    """The words of a person's name a changelog may credit them with."""
    name, _addr = email.utils.parseaddr(person)
    return [w for w in name.replace(",", " ").split() if len(w) >= 3 and w[:1].isupper()]
