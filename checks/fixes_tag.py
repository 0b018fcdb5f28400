"""``Fixes:`` tags that name the right commit, in the right form (NIPA's verify_fixes).

What it catches:
    Every ``Fixes:`` line of a commit message with a problem NIPA's
    verify_fixes reports: no SHA1 it can read, a SHA1 shorter than 12 hex
    digits, a leading word ``commit``, no subject or no space before it, a
    parenthesis or quote opened and not closed, blank lines on both sides of
    the tag; with ``--tree``, a SHA1 the tree does not have (NIPA looks in
    the tree it applies to, net or net-next) or whose subject is not the
    one quoted (a prefix of it counts, ``...`` may stand for the rest).
    Each is an error: NIPA fails the patch on any of them.

    napipatch's own, which NIPA does not flag: the commit named is not an
    ancestor of the patch's base (an error: a fix for a commit on another
    branch; NIPA's script means to test it but never reaches the test, as
    it asks only after the SHA1 is known to exist), and a tag not in the
    documented form ``Fixes: <sha> ("subject")`` (a warning; checkpatch's
    BAD_FIXES_TAG says the same when checkpatch runs). Those do not count
    in the NIPA forecast, and without ``--tree`` its verify_fixes is
    unknown unless a tag already fails.

    A finding names the patch and quotes the tag; commit-message lines have
    no FILE:LINE (the message is no file of the tree).

Why a reviewer cares:
    The stable team backports a fix to every tree holding the commit it
    names: a wrong or unreadable tag sends the fix to the wrong trees, or
    to none. The netdev CI marks the patch failed in patchwork.

Example:
    ``Fixes: 1234abcd ("net: foo")`` (too short), ``Fixes: commit
    1234abcd5678 net: foo`` (leading word, no parentheses).

Fix:
    ``git log -1 --format='Fixes: %h ("%s")' --abbrev=12 SHA``, as its own
    line in the trailer block.
"""

from __future__ import annotations

import re

from napipatch.checks import check

_TAG = re.compile(r"^\s*fixes:\s*(.*)$", re.I)
_SPLIT = re.compile(r"^(commit)?\s*([0-9a-fA-F]{5,})(\s*)(.*)$", re.I)
_FORM = re.compile(r'^[0-9a-f]{12,40} \(".+"\)$')
_QUOTED = (re.compile('^["\u201c](.*)["\u201d]$'), re.compile("^['\u2018](.*)['\u2019]$"))
_OPEN_QUOTE = re.compile("^[\"'\u201c\u2018](.*)$")


def _subject(quoted: str, problems: list[str]) -> str:
    """The subject a tag quotes, its parentheses and quotes taken off."""
    if m := re.match(r"^\((.*)\)", quoted):
        quoted = m.group(1)
    elif m := re.match(r"^\((.*)", quoted):
        quoted = m.group(1)
        problems.append("subject has a leading but no trailing parenthesis")
    for rx in _QUOTED:
        if m := rx.match(quoted):
            return m.group(1).strip()
    if m := _OPEN_QUOTE.match(quoted):
        problems.append("subject has a leading but no trailing quote")
        return m.group(1).strip()
    return quoted.strip()


def same_subject(quoted: str, actual: str) -> bool:
    """NIPA's comparison: the quoted subject is a prefix of the commit's,
    ``...`` at the end, the start or in the middle standing for the rest."""
    quoted, actual = quoted.strip(), actual.strip()
    if quoted.endswith("..."):
        quoted = quoted[:-3]
        actual = actual[:len(quoted)]
    elif quoted.startswith("..."):
        quoted = quoted[3:]
        actual = actual[-len(quoted):] if quoted else ""
    elif " ... " in quoted:
        head, _, tail = quoted.partition(" ... ")
        quoted = f"{head} {tail}"
        actual = f"{actual[:len(head)]} {actual[-len(tail):] if tail else ''}"
    quoted, actual = quoted.strip(), actual.strip()
    return actual[:len(quoted)] == quoted


def problems_of(value: str, alone: bool) -> tuple[list[str], str | None, str]:
    """(problems, SHA1 or None, quoted subject) of one tag's text."""
    problems = ["blank lines on both sides of the tag"] if alone else []
    m = _SPLIT.match(value)
    if not m:
        return problems + ["no SHA1 recognised"], None, ""
    first, sha, space, rest = m.groups()
    if first:
        problems.append(f"leading word {first!r}")
    if not rest:
        problems.append("missing subject")
    elif not space:
        problems.append("missing space between the SHA1 and the subject")
    if len(sha) < 12:
        problems.append(f"SHA1 has {len(sha)} digits; at least 12 are needed")
    return problems, sha, _subject(rest, problems) if rest else ""


def _in_tree(ctx, sha: str, quoted: str) -> tuple[list[str], list[str], str]:
    """(NIPA's problems, napipatch's, the commit's subject) from the tree."""
    full = ctx.tree.resolve(sha)
    if not full:
        return ["the tree has no such commit (or the SHA1 is ambiguous)"], [], ""
    actual = ctx.tree.subject(full)
    nipa = [] if not quoted or same_subject(quoted, actual) else \
        [f'subject does not match the commit\'s ("{actual}")']
    ours = [] if ctx.tree.is_ancestor(full, ctx.pre or ctx.tree.base) else \
        [f"{full[:12]} is not an ancestor of the patch's base"]
    return nipa, ours, actual


@check(id="fixes-tag",
       summary="Fixes: names an existing ancestor by 12+ digits with its subject, well formed",
       scope="patch",
       needs="diff",
       version=1,
       nipa=("verify_fixes",),
       nipa_needs_tree=True)  # whether the SHA1 exists is NIPA's rule too
def run(ctx):
    lines = ctx.mail.message.split("\n")
    for i, line in enumerate(lines):
        m = _TAG.match(line)
        if not m:
            continue
        value = m.group(1).strip()
        # Blank lines before and after, with more text after them (NIPA's
        # git am -s appends its sign-off right under a last-line tag).
        alone = 0 < i and not lines[i - 1].strip() and i + 1 < len(lines) \
            and not lines[i + 1].strip() and any(ln.strip() for ln in lines[i + 1:])
        problems, sha, quoted = problems_of(value, alone)
        ours: list[str] = []
        actual = ""
        if sha and ctx.tree is not None:
            more, ours, actual = _in_tree(ctx, sha, quoted)
            problems += more
        hint = (f'Fixes: {ctx.tree.resolve(sha)[:12]} ("{actual}")' if actual
                else "Fixes: <12+ hex digits> (\"subject of that commit\")")
        for what, mine in ((problems, None), (ours, {})):
            if what:
                yield ctx.finding("error", f"Fixes: {value}: {'; '.join(what)}", hint=hint,
                                  nipa=mine)  # {}: napipatch's own, not NIPA's
        if not problems and not ours and not _FORM.match(value):
            yield ctx.finding("warning", f"Fixes: {value}: not in the form "
                              "Fixes: <sha> (\"subject\")", hint=hint, nipa={})
