"""What a check is given: the series, one patch (or all), and the tree.

Checks read files by commit through ``TreeView`` (``git cat-file``), so the
engine never needs a checkout. Without ``--tree`` ``tree`` is None and only
the diff is there.

Everything a check reads that is not fixed by the result cache's key (the
check's code, the mails, the base commit) is an *input*: a configuration
value (``ctx.config.X``), a revision resolved in the tree
(``ctx.tree.resolve``), the branch the caller named (``ctx.tree.branch``),
a file of this machine outside the tree (``ctx.tree.host_file``: a tool's
data, such as codespell's dictionary), whether a time has passed
(``ctx.passed(when)``: an unsent version may go 24 hours after the last).
The series' history (``ctx.history``: the previous version's record in
the store) is part of the key itself (``engine.cache``).
The context notes each one with the value it gave (``Inputs``); the cache
keeps them beside the findings and the engine reuses a result only when
every input still has that value. Objects named by a full commit id never
change, so reading them (``subject``, ``count``, ``ls``) is not an input.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cached_property
from pathlib import Path

from unidiff import PatchSet

from napipatch.config import Config
from napipatch.engine import zygote
from napipatch.mails.hunks import parse_diff
from napipatch.mails.mail import PatchMail
from napipatch.mails.series import Series
from napipatch.report.findings import Finding, Severity
from napipatch.tree import gitutil
from napipatch.tree.applied import Applied
from napipatch.tree.treegrep import TreeGrep
from napipatch.tree.trusted import scripts_root


def _plain(value):
    """A value as JSON keeps it, so a recorded input compares equal later."""
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return str(value)


class Inputs:
    """What one unit read beyond its cache key: (kind, name) -> value."""

    def __init__(self):
        self.seen: dict[tuple[str, str], object] = {}

    def note(self, kind: str, name: str, value):
        self.seen.setdefault((kind, name), _plain(value))
        return value

    def items(self) -> list[list]:
        return [[k, n, v] for (k, n), v in self.seen.items()]


class ConfigView:
    """The configuration as a check sees it: each value read is an input."""

    def __init__(self, config: Config, inputs: Inputs):
        self._config, self._inputs = config, inputs

    def __getattr__(self, name: str):
        value = getattr(self._config, name)
        if name.startswith("_") or callable(value):
            return value
        return self._inputs.note("config", name, value)

    def get(self, key: str, default: str = "") -> str:
        return self._inputs.note("config", key, self._config.get(key, default))


def _stamp(path: Path) -> str | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return f"{st.st_size}-{st.st_mtime_ns}"


def current_clock(name: str) -> bool:
    """Whether the time ``name`` (ISO UTC) has passed now."""
    return datetime.now(UTC) >= datetime.fromisoformat(name)


def _passed(inputs: Inputs | None, when: datetime) -> bool:
    name = when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    now = current_clock(name)
    return inputs.note("clock", name, now) if inputs is not None else now


class _History:
    """``ctx.history``: the previous version's record (``store.history``)."""

    series: Series

    @property
    def history(self) -> dict | None:
        """The previous version's record in the store, or None (``history_why``)."""
        return (self.series.inputs.history or {}).get("previous")

    @property
    def history_why(self) -> str:
        """Why there is no previous version to compare with ("" when there is)."""
        return (self.series.inputs.history or {}).get(
            "why", "no store was read for this series' earlier versions")


def current_config(config: Config, name: str):
    """What a recorded config input reads now (``name`` an attribute or a key)."""
    if name.startswith("napipatch."):
        return _plain(config.get(name))
    return _plain(getattr(config, name, None))


@dataclass
class TreeView:
    repo: Path
    applied: Applied
    config: Config
    use_cache: bool = True
    # The branch the caller named (--base, the bot's branch): what "behind"
    # is measured against. None: no branch named.
    branch_name: str | None = None
    # Where --no-cache runs keep what forked units share (a grep of the base).
    scratch: Path | None = None
    reader: gitutil.ObjectReader = field(init=False)
    inputs: Inputs = field(init=False)

    def __post_init__(self):
        self.reader = gitutil.ObjectReader(self.repo)
        self.inputs = Inputs()
        self._files: dict[str, list[str]] = {}

    @property
    def base(self) -> str:
        return self.applied.base

    # -- inputs: what may change while the key stays the same
    @property
    def branch(self) -> str | None:
        return self.inputs.note("arg", "branch", self.branch_name)

    def resolve(self, rev: str) -> str | None:
        """The commit ``rev`` names in the tree now (None: not there)."""
        return self.inputs.note("resolve", rev, gitutil.resolve(self.repo, rev))

    def host_file(self, path: Path | str) -> str | None:
        """Size and mtime of a file of this machine (None: not there)."""
        return self.inputs.note("host", str(path), _stamp(Path(path)))

    def current(self, kind: str, name: str):
        """What a recorded input of ``kind`` reads now."""
        if kind == "resolve":
            return gitutil.resolve(self.repo, name)
        if kind == "host":
            return _stamp(Path(name))
        if kind == "arg" and name == "branch":
            return self.branch_name
        if kind == "config":
            return current_config(self.config, name)
        if kind == "clock":
            return current_clock(name)
        return ("unknown input", kind, name)   # never equal: a miss

    # -- fixed by a full commit id: not inputs
    def subject(self, sha: str) -> str:
        return gitutil.out(self.repo, "log", "-1", "--format=%s", sha)

    def count(self, since: str, until: str) -> int:
        """Commits in ``since..until``."""
        cp = gitutil.git(self.repo, "rev-list", "--count", f"{since}..{until}", check=False)
        return int(cp.stdout.strip() or 0) if cp.returncode == 0 else 0

    def message(self, sha: str) -> str:
        """The commit message of ``sha``."""
        return gitutil.out(self.repo, "log", "-1", "--format=%B", sha)

    def files(self, rev: str) -> list[str]:
        """Every file path at ``rev``, sorted (one ``ls-tree -r`` a commit)."""
        if rev not in self._files:
            listing = gitutil.git(self.repo, "ls-tree", "-r", "-z", "--name-only", rev,
                                  check=False).stdout
            self._files[rev] = sorted(p for p in listing.split("\0") if p)
        return self._files[rev]

    @cached_property
    def git_dir(self) -> Path:
        """The repository's git directory (where its objects are)."""
        return Path(gitutil.out(self.repo, "rev-parse", "--absolute-git-dir"))

    def is_ancestor(self, older: str, newer: str) -> bool:
        return gitutil.git(self.repo, "merge-base", "--is-ancestor", older, newer,
                           check=False).returncode == 0

    def ls(self, rev: str, directory: str) -> list[str]:
        """Paths of the files directly in ``directory`` at ``rev`` ("" the top)."""
        where = directory.rstrip("/") + "/" if directory.strip("/") else "."
        cp = gitutil.git(self.repo, "ls-tree", "--name-only", rev, "--", where, check=False)
        return [p for p in cp.stdout.splitlines() if p] if cp.returncode == 0 else []

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
                        self.config.cache if self.use_cache else self.scratch)

    def close(self):
        self.reader.close()


@dataclass
class PatchContext(_History):
    """One patch of the series, with its pre- and post-patch commits."""

    series: Series
    n: int
    mail: PatchMail
    config: Config
    tree: TreeView | None = None

    check_id: str = ""      # set in the unit's process: the check it runs
    inputs: Inputs | None = None  # set in the unit's process: what it read

    def passed(self, when: datetime) -> bool:
        """Whether ``when`` has passed (an input: the cached answer holds
        only while it still has, or still has not)."""
        return _passed(self.inputs, when)

    @property
    def total(self) -> int:
        return len(self.series.patches)

    def ask(self, request, timeout: float):
        """The answer of this check's zygote (``@check(zygote=True)``) to
        ``request``; None when there is none to ask: do the work here."""
        return zygote.ask(self.check_id, request, timeout)

    @cached_property
    def diff(self) -> PatchSet:
        return parse_diff(self.mail.diff, self.mail.origin or f"patch {self.n}")

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
                patch: int | None = None, nipa: dict[str, str] | None = None,
                fix: dict | None = None) -> Finding:
        # The engine stamps the check id; checks cannot report as another.
        return Finding(check="", severity=Severity(severity),
                       patch=self.n if patch is None else patch, message=message,
                       file=file, line=line, hint=hint, details=details, nipa=nipa, fix=fix)


@dataclass
class SeriesContext(_History):
    """The whole series: every patch context, and the tip when all applied."""

    series: Series
    config: Config
    patches: list[PatchContext]
    tree: TreeView | None = None

    check_id: str = ""
    inputs: Inputs | None = None

    def passed(self, when: datetime) -> bool:
        """Whether ``when`` has passed (an input, as for PatchContext)."""
        return _passed(self.inputs, when)

    @property
    def base(self) -> str | None:
        return self.tree.applied.base if self.tree else None

    def ask(self, request, timeout: float):
        return zygote.ask(self.check_id, request, timeout)

    @property
    def tip(self) -> str | None:
        return self.tree.applied.tip if self.tree else None

    def finding(self, severity, message, file=None, line=None, hint="", details="",
                patch: int = 0, nipa: dict[str, str] | None = None,
                fix: dict | None = None) -> Finding:
        return Finding(check="", severity=Severity(severity), patch=patch, message=message,
                       file=file, line=line, hint=hint, details=details, nipa=nipa, fix=fix)
