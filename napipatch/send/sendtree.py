"""Where the sendemail-validate hook checks a message: in the repository
git send-email runs in, on the series applied at its base.

A message that is patch k of a series whose patches 1..k have been seen is
checked as that prefix applied at the series' base (the cover's
``base-commit:`` when the repository has it, else the first patch's parent,
found by subject and ``git patch-id``): the tree patch k's commit has as
its parent, and the result cache keys (check, base, mails up to the patch)
are those of ``napipatch check --tree`` of the same series and of the
earlier messages. Else a message that is a commit of the repository is
checked at that commit's parent; else diff-only, with the reason.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from napipatch.mails.mail import PatchMail
from napipatch.mails.series import Series, name_from
from napipatch.tree import commits, gitutil


@dataclass
class Where:
    """What to run for one message: ``series`` in ``tree`` at ``base``
    (diff-only when ``tree`` is None, ``why`` saying why); the message is
    patch ``index`` of ``series``."""

    series: Series
    index: int
    tree: Path | None = None
    base: str | None = None
    why: str = ""


def repo_top() -> Path | None:
    """The work tree the hook runs in (git runs hooks from its top)."""
    cp = gitutil.git(None, "rev-parse", "--show-toplevel", check=False)
    return Path(cp.stdout.strip()) if cp.returncode == 0 and cp.stdout.strip() else None


def series_base(repo: Path, mails: list[PatchMail]) -> str | None:
    """A ``base-commit:`` of ``mails`` the repository has, else the parent
    of the commit the first patch was made from; None when neither."""
    for m in mails:
        if m.base_commit:
            found = gitutil.resolve(repo, m.base_commit)
            if found:
                return found
    first = [m for m in mails if _index(m) == 1]
    sha = commits.commit_of(repo, first[0]) if first else None
    return commits.parent_of(repo, sha) if sha else None


def _index(m: PatchMail) -> int:
    return m.subject.index if m.subject.has_counter else 1


def prefix(seen: list[PatchMail], m: PatchMail, source: str) -> Series | None:
    """The cover and patches 1..k of ``m``'s series (``m`` is patch k),
    from ``seen`` and ``m``; None when one of 1..k-1 was not seen."""
    s = m.subject
    if not s.has_counter:
        return Series(name=name_from(m), version=s.version, cover=None, patches=[m], source=source)
    slots = {x.subject.index: x for x in seen
             if x.subject.has_counter and not x.subject.is_reply
             and x.subject.version == s.version and x.subject.total == s.total}
    slots[s.index] = m
    if any(i not in slots for i in range(1, s.index + 1)):
        return None
    return Series(name=name_from(slots.get(0) or slots[1]), version=s.version,
                  cover=slots.get(0), patches=[slots[i] for i in range(1, s.index + 1)],
                  source=source)


def where(repo: Path | None, seen: list[PatchMail], m: PatchMail, source: str) -> Where:
    """Where message ``m`` is checked, ``seen`` the messages before it."""
    pre = prefix(seen, m, source)
    if repo is not None and pre is not None:
        base = series_base(repo, pre.mails)
        if base:
            return Where(pre, _index(m), repo, base)
    one = Series(name=name_from(m), version=m.subject.version, cover=None, patches=[m],
                 source=source)
    if repo is None:
        return Where(one, 1, why="not run inside a git work tree")
    sha = commits.commit_of(repo, m)
    parent = commits.parent_of(repo, sha) if sha else None
    if parent:
        one.inputs.base_commit = parent
        return Where(one, 1, repo, parent)
    return Where(one, 1, why=f"{m.subject.title!r} is no commit of {repo} and no base-commit: "
                 "of its series is there")
