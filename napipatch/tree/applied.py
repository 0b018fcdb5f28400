"""What applying a series gives: its base and, per patch, the commit after
it or why it did not apply. Both ways of applying (apply.py) give this."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class ApplyFailure:
    patch: int  # 1..N
    file: str | None
    line: int | None
    hunk: int | None
    reason: str

    def __str__(self) -> str:
        where = self.file or "?"
        if self.hunk:
            where += f" hunk #{self.hunk}"
        if self.line:
            where += f" (at line {self.line})"
        return f"patch {self.patch} does not apply: {where}: {self.reason}"


@dataclass
class Applied:
    """The base and, per patch, the commit after it (None when not applied).

    ``commits`` has one entry per patch, applied or not: the patches after
    the first that failed are None too."""

    repo: Path
    base: str
    base_why: str
    commits: list[str | None] = field(default_factory=list)
    failure: ApplyFailure | None = None

    def before(self, i: int) -> str | None:
        """Commit before patch i (1-based)."""
        return self.base if i == 1 else self.commits[i - 2]

    def after(self, i: int) -> str | None:
        return self.commits[i - 1]

    @property
    def tip(self) -> str | None:
        return self.commits[-1] if self.commits and self.failure is None else None

    @property
    def good(self) -> list[str]:
        """The commits of the patches before the first that failed: what a
        build or boot of a partly applied series can use."""
        done = [c for c in self.commits if c]
        return done[:self.failure.patch - 1] if self.failure else done
