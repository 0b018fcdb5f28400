"""What a new version did with each review comment of the version before.

For a comment of vN-1 (``comments.gather``), ``judge`` says:

- **changed**: the lines its quote ends on (with some of the quoted
  context around them, so a copy elsewhere does not count) are in no patch
  of vN, same file, same side of the diff;
- **mentioned**: vN's changelog (its section of the cover letter, or a
  patch's notes under ``---``) credits the reviewer by name, names an
  identifier of the comment (``napi_complete_done``, ``net_device.rst``,
  ``--base``), or names the comment's patch ("patch 3") with a word of it;
- **answered**: the author answered it in the thread (``explained``, or for
  a general comment also ``promised``);
- **open**: none of these. An anchored comment is then where its lines
  stand at vN's tip (the patch that carries them, FILE:LINE); a general
  one is ``unanswered`` (nothing to locate: the check gives it an info).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from napipatch.mails import patchtext
from napipatch.mails.comments import name_parts
from napipatch.mails.series import Series, changelog_of

_IDENT = re.compile(r"--?[A-Za-z][\w-]*|[A-Za-z_][\w.-]*(?:\(\))?")
_WORD = re.compile(r"[A-Za-z][A-Za-z-]{4,}")
_NUMBERED = re.compile(r"\bpatch(?:es)?\s+#?(\d+)|\b(\d+)/\d+\b", re.I)
_STOP = frozenset("about above after again being below could doesn't every first might "
                  "other should since their there these thing think those through under "
                  "until which while would patch patches series change changes changed "
                  "version using there's maybe really still".split())
_NOTES_END = re.compile(r"^( \S.*\|\s+\d+|diff --git )", re.M)


@dataclass
class Verdict:
    state: str           # changed, mentioned, answered, open, unanswered
    why: str             # in words, for the info or warning
    patch: int = 0       # vN patch carrying the lines (open)
    file: str = ""
    line: int = 0


def identifiers(text: str) -> set[str]:
    """Names in ``text`` a changelog would repeat: with ``_``, ``()``, a
    file's dot, or an option's dashes; paths also by their parts."""
    out = set()
    for tok in _IDENT.findall(text):
        tok = tok.rstrip(".,:;").removesuffix("()").rstrip(".,:;)").partition("=")[0]
        for part in {tok, *tok.split("/")}:
            if len(part) >= 5 and ("_" in part or part.startswith("--")
                                   or re.search(r"[a-z]\.[a-z]", part)):
                out.add(part.lower())
    return out


def entries(s: Series) -> list[str]:
    """vN's changelog entries: its own section of the cover letter's
    changelog and each patch's notes, an entry per bullet or paragraph."""
    text = changelog_of(s.cover.body) if s.cover else ""
    older = re.search(rf"(?im)^\s*(changes\s+(in|since|from)\s+)?v{s.version - 1}\s*(:|->|$)",
                      text)
    text = text[: older.start()] if older and older.start() > 0 else text
    for p in s.patches:
        _head, sep, rest = p.body.partition("\n---\n")
        if sep:
            end = _NOTES_END.search(rest)
            text += "\n\n" + (rest[: end.start()] if end else rest)
    out = []
    for chunk in re.split(r"\n\s*\n|\n(?=\s*[-*+] )", text):
        if chunk.strip():
            out.append(" ".join(chunk.split()))
    return out


def mentioned(c: dict, found: list[str]) -> str:
    """The changelog entry that names the comment, or ""."""
    names = name_parts(c["reviewer"])
    ids = identifiers(c["words"])
    # A patch named with a word of the comment's first sentence (its request).
    words = {w.lower() for w in _WORD.findall(c["first"])} - _STOP
    for e in found:
        if any(re.search(rf"\b{re.escape(n)}\b", e) for n in names):
            return e
        if ids & identifiers(e):
            return e
        nums = {int(a or b) for a, b in _NUMBERED.findall(e)}
        if c["patch"] in nums and words & {w.lower() for w in _WORD.findall(e)}:
            return e
    return ""


def judge(c: dict, s: Series, lines: list[list[patchtext.PLine]], found: list[str]) -> Verdict:
    """The state of comment ``c`` (of vN-1) in version ``s``."""
    where = None
    if "general" not in c:
        where = _stands(c, s, lines)
        if where is None:
            return Verdict("changed", f"{c['file']}: the lines it quotes are gone")
    if e := mentioned(c, found):
        return Verdict("mentioned", f"v{s.version}'s changelog: \"{_cut(e)}\"")
    ans = c.get("answer")
    if ans and (ans["kind"] == "explained" or where is None):
        return Verdict("answered", f"{ans['kind']} by the author: \"{ans['text']}\" "
                                   f"<{ans['message-id']}>")
    if where is None:
        return Verdict("unanswered", "neither answered in the thread nor in the changelog")
    k, p = where
    why = "unchanged, not answered, not in the changelog"
    if ans:
        why = f"unchanged though the author promised: \"{ans['text']}\""
    return Verdict("open", why, patch=k, file=p.file,
                   line=patchtext.at_tip(p.file, p.line, [q.diff for q in s.patches[k:]]))


def _stands(c: dict, s: Series, lines: list[list[patchtext.PLine]]):
    """(vN patch number, line) where the comment's lines still stand, or None."""
    at = patchtext.PLine(c["file"], c["kind"], c["text"], c["line"])
    anchor = patchtext.Anchor(at, c["kind"], tuple(c["context"]))
    for k, ls in enumerate(lines, 1):
        if (p := patchtext.find(anchor, ls)) is not None:
            return k, p
    return None


def _cut(text: str, n: int = 100) -> str:
    return text if len(text) <= n else text[: n - 3] + "..."
