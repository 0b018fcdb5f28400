"""Findings: what a check reports, the way a reviewer would write it."""

from __future__ import annotations

import enum
from dataclasses import asdict, dataclass


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
    """

    check: str
    severity: Severity
    patch: int
    message: str
    file: str | None = None
    line: int | None = None
    hint: str = ""
    details: str = ""

    def to_json(self) -> dict:
        d = asdict(self)
        d["severity"] = self.severity.value
        return d

    @classmethod
    def from_json(cls, d: dict) -> "Finding":
        return cls(**{**d, "severity": Severity(d["severity"])})

    @property
    def sort_key(self):
        return (self.patch, self.severity.rank, self.file or "", self.line or 0, self.check)
