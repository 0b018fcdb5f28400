"""The words a report is made of, each with what it says in one place: a
check's ``Status``, the run's ``Verdict`` and a NIPA context's ``NipaState``.

Each is a ``StrEnum``: its members are the strings the JSON report carries
(docs/json-report.md), so ``result.status == "error"`` holds, ``json.dumps``
and templates write the value (``pass``, not ``Status.PASS``), and a plain
string converts with ``Status("timeout")``.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from typing import Self


class Status(enum.StrEnum):
    """A check's status (``checks[].status`` in the JSON report).

    ``pass``, ``info``, ``warn``, ``fail``: it completed, named for the worst
    severity it found (``report.model.status_of``); ``skipped``: it was not
    planned (it needs ``--tree`` or a build); ``crashed``, ``timeout``,
    ``error``: it was planned and gave no result, so the run is incomplete.

    ``warn`` is a status and ``warning`` a finding's severity
    (``Severity.WARNING``) and a NIPA state (``NipaState.WARNING``): a check
    whose worst finding is a ``warning`` has status ``warn``. Both spellings
    are in the published JSON format and stay as they are.
    """

    words: str  # how a report says it: "timed out" (templates: the status_words filter)

    def __new__(cls, value: str, words: str) -> Self:
        member = str.__new__(cls, value)
        member._value_ = value
        member.words = words
        return member

    PASS = "pass", "passed"
    INFO = "info", "passed with infos"
    WARN = "warn", "found warnings"
    FAIL = "fail", "found errors"
    SKIPPED = "skipped", "skipped"
    CRASHED = "crashed", "crashed"
    TIMEOUT = "timeout", "timed out"
    ERROR = "error", "could not run"

    @property
    def completed(self) -> bool:
        return self in (Status.PASS, Status.INFO, Status.WARN, Status.FAIL)

    @property
    def incomplete(self) -> bool:
        """Planned and gave no result: crashed, timed out or could not run."""
        return self in (Status.CRASHED, Status.TIMEOUT, Status.ERROR)


class Verdict(enum.StrEnum):
    """A run's verdict (``summary.verdict``), most severe first, with the
    exit status of every command that reports (``summary.exit_status``);
    the README's exit-status table says the same. The first three are the
    statuses of a check that gave no result: one such check decides it."""

    exit_code: int
    words: str  # the README's meaning of the exit status

    def __new__(cls, value: str, exit_code: int, words: str) -> Self:
        member = str.__new__(cls, value)
        member._value_ = value
        member.exit_code = exit_code
        member.words = words
        return member

    CRASHED = "crashed", 3, "a check crashed: a napipatch bug, the verdict is missing"
    TIMEOUT = "timeout", 2, "a check ran past napipatch.check-timeout: the verdict is missing"
    ERROR = "error", 2, "the environment failed (a tool missing, a host down)"
    FINDINGS = "findings", 1, "every planned check completed, some found errors"
    CLEAN = "clean", 0, "every planned check completed, no error findings"

    @classmethod
    def of(cls, statuses: Iterable[str], errors: bool) -> Verdict:
        """The most severe verdict that holds for checks with ``statuses``
        and a report with or without error findings."""
        seen = set(statuses)
        return next((v for v in (cls.CRASHED, cls.TIMEOUT, cls.ERROR) if v in seen),
                    cls.FINDINGS if errors else cls.CLEAN)


class NipaState(enum.StrEnum):
    """What the netdev CI (NIPA) posts for a context on a patch (a forecast
    cell's ``state``, a finding's ``nipa`` values): NIPA's ``success``,
    ``warning`` and ``fail``, or napipatch's ``unknown`` where it cannot
    tell here (never shown as success)."""

    SUCCESS = "success"
    WARNING = "warning"
    FAIL = "fail"
    UNKNOWN = "unknown"

    @property
    def rank(self) -> int:
        """How bad NIPA's own states are (success 0, warning 1, fail 2);
        ``unknown`` is no state of NIPA's and has no rank."""
        if self is NipaState.UNKNOWN:
            raise ValueError("'unknown' is not one of NIPA's states and has no rank")
        return (NipaState.SUCCESS, NipaState.WARNING, NipaState.FAIL).index(self)
