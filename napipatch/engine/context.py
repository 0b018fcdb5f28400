"""What a check is given: the series, one patch (or all), and the tree.

Checks read files by commit through ``TreeView`` (``git cat-file``), so the
engine never needs a checkout. Without ``--tree`` ``tree`` is None and only
the diff is there.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from unidiff import PatchSet

from napipatch.config import Config
from napipatch.mails.hunks import parse_diff
from napipatch.mails.mail import PatchMail
from napipatch.mails.series import Series
from napipatch.report.findings import Finding, Severity
from napipatch.tree import gitutil
from napipatch.tree.apply import Applied
from napipatch.tree.treegrep import TreeGrep
from napipatch.tree.trusted import scripts_root


@dataclass
class TreeView:
    repo: Path
    applied: Applied
    config: Config
    use_cache: bool = True
    reader: gitutil.ObjectReader = field(init=False)

    def __post_init__(self):
        self.reader = gitutil.ObjectReader(self.repo)

    @property
    def base(self) -> str:
        return self.applied.base

    def text(self, rev: str | None, path: str) -> str | None:
        return None if rev is None else self.reader.text(rev, path)

    @cached_property
    def scripts(self) -> Path:
        """Trusted copies of the tree's scripts, from the base commit."""
        return scripts_root(self.repo, self.applied.base, self.config.cache)

    @cached_property
    def grep(self) -> TreeGrep:
        """``git grep`` of any commit of the series, from one grep of the base."""
        return TreeGrep(self.repo, self.applied.base, self.reader,
                        self.config.cache if self.use_cache else None)

    def close(self):
        self.reader.close()


@dataclass
class PatchContext:
    """One patch of the series, with its pre- and post-patch commits."""

    series: Series
    n: int
    mail: PatchMail
    config: Config
    tree: TreeView | None = None

    @property
    def total(self) -> int:
        return len(self.series.patches)

    @cached_property
    def diff(self) -> PatchSet:
        return parse_diff(self.mail.diff)

    @property
    def pre(self) -> str | None:
        return self.tree.applied.before(self.n) if self.tree else None

    @property
    def post(self) -> str | None:
        return self.tree.applied.after(self.n) if self.tree else None

    @property
    def applied(self) -> bool:
        return self.post is not None

    def pre_text(self, path: str) -> str | None:
        return self.tree.text(self.pre, path) if self.tree else None

    def post_text(self, path: str) -> str | None:
        return self.tree.text(self.post, path) if self.tree else None

    def finding(self, severity: Severity | str, message: str, file: str | None = None,
                line: int | None = None, hint: str = "", details: str = "",
                patch: int | None = None) -> Finding:
        # The engine stamps the check id; checks cannot report as another.
        return Finding(check="", severity=Severity(severity),
                       patch=self.n if patch is None else patch, message=message,
                       file=file, line=line, hint=hint, details=details)


@dataclass
class SeriesContext:
    """The whole series: every patch context, and the tip when all applied."""

    series: Series
    config: Config
    patches: list[PatchContext]
    tree: TreeView | None = None

    @property
    def base(self) -> str | None:
        return self.tree.applied.base if self.tree else None

    @property
    def tip(self) -> str | None:
        return self.tree.applied.tip if self.tree else None

    def finding(self, severity, message, file=None, line=None, hint="", details="",
                patch: int = 0) -> Finding:
        return Finding(check="", severity=Severity(severity), patch=patch, message=message,
                       file=file, line=line, hint=hint, details=details)
