"""Findings: what a check reports, the way a reviewer would write it."""

from __future__ import annotations

import enum
from dataclasses import asdict, dataclass, field

from napipatch.report.status import NipaState


class Severity(str, enum.Enum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"

    @property
    def rank(self) -> int:
        return {"error": 0, "warning": 1, "info": 2}[self.value]



@dataclass(frozen=True)
class Finding:
    """One review comment.

    Attributes:
        check: the check id (``kdoc``, ``cachelines`` ...).
        severity: error, warning or info.
        patch: 1..N, or 0 for the cover letter / the series as a whole.
        file, line: post-patch location, where there is one.
        message: one line.
        hint: how to fix it.
        details: optional multi-line text (a diff, a console excerpt).
        nipa: what the finding means to the netdev CI (NIPA), as
            ``{context: state}`` with state ``fail``, ``warning`` or
            ``success`` (NIPA does not flag it). None, the default: it counts
            toward every context its check answers for (``@check(nipa=...)``)
            as its severity says: error fail, warning warning, info success.
            ``{}``: NIPA has no such rule. ``unknown``: the check could not
            evaluate NIPA's rule here (the message says why). A check states it where NIPA's
            split differs from napipatch's severity (checkpatch's CHECK is an
            info here and a warning there; an unsigned mail is an info here
            and a warning there) or where it answers for several contexts.
    """

    check: str
    severity: Severity
    patch: int
    message: str
    file: str | None = None
    line: int | None = None
    hint: str = ""
    details: str = ""
    nipa: dict[str, str] | None = field(default=None, hash=False)
    fix: dict | None = field(default=None, hash=False, compare=False)

    def __post_init__(self):
        bad = [s for s in (self.nipa or {}).values() if s not in tuple(NipaState)]
        if bad:
            raise ValueError(f"{self.check}: NIPA state {bad[0]!r} is not one of "
                             f"{', '.join(NipaState)}")

    @property
    def fixable(self) -> bool:
        """``napipatch fix`` can fix it (its check computed the edits, or
        the trailers its commit message lacks)."""
        return bool(self.fix and (self.fix.get("edits") or self.fix.get("trailers")))

    def to_json(self) -> dict:
        d = asdict(self)
        d["severity"] = self.severity.value
        d["fixable"] = self.fixable
        return d

    @classmethod
    def from_json(cls, d: dict) -> "Finding":
        d = {k: v for k, v in d.items() if k != "fixable"}
        return cls(**{**d, "severity": Severity(d["severity"])})

    @property
    def sort_key(self):
        return (self.patch, self.severity.rank, self.file or "", self.line or 0, self.check)


def edit(path: str, line: int, old: list[str], new: list[str]) -> dict:
    """One edit of a fix: lines ``old`` of ``path`` from ``line`` (1-based,
    in the patch's post-image) become ``new``; ``old`` empty inserts before
    ``line``. ``old`` is kept so that an edit never lands on other text."""
    return {"file": path, "line": line, "old": list(old), "new": list(new)}


def fix(says: str, *edits: dict) -> dict:
    """A finding's fix: what it does in a few words (``fix`` prints
    ``FILE:LINE: fixed [check] SAYS``) and its edits."""
    return {"says": says, "edits": list(edits)}


def add_trailers(says: str, *trailers: str) -> dict:
    """A fix of the commit message, not of the files: ``trailers``
    (``Reviewed-by: ...``) added to the patch's own (an ``amend!`` commit)."""
    return {"says": says, "trailers": list(trailers)}


def not_fixable(why: str) -> dict:
    """A finding its check's fixer cannot fix safely, and why."""
    return {"why": why}


def edit_between(path: str, old: str, new: str) -> dict:
    """The one edit turning text ``old`` of ``path`` into ``new``: the lines
    between their common head and tail, so that a fix touches only what
    changes (a regenerated file rewrites its stale lines, not the file)."""
    a, b = old.split("\n"), new.split("\n")
    head = 0
    while head < min(len(a), len(b)) and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < min(len(a), len(b)) - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    return edit(path, head + 1, a[head:len(a) - tail], b[head:len(b) - tail])
