"""A KUnit run's KTAP (kunit.py's test.log, the UML console) as cases.

Suites are KTAP subtests of the top level, cases their subtests, and a
parameterised case has one more level (``net_core.gso_test_func`` param
``linear``). A case's diagnostics come before its result line; a failed
expectation says where it is::

        # dev_addr_test_basic: EXPECTATION FAILED at net/core/dev_addr_lists_test.c:73
        Expected netdev->dev_addr == addr, but
        ...
    not ok 1 dev_addr_test_basic

A failing test is a failing leaf, or a failing group none of whose
subtests failed (a suite whose init failed). A run whose log ends inside a
suite (the kernel crashed) leaves that suite without its result line: it
is ``crashed``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from napipatch.jobs.results import tap
from napipatch.jobs.results.tap import Result

_STAMP = re.compile(r"^\[\s*\d+\.\d+\]\s?")
_START = re.compile(r"^\s*K?TAP version \d+\s*$")
_FAILED_AT = re.compile(r"#\s*(?:[\w.-]+:\s*)?(?:EXPECTATION|ASSERTION) FAILED at "
                        r"(?P<file>[^\s:]+):(?P<line>\d+)")


@dataclass
class Case:
    name: str  # suite.case, as kunit.py's filter glob names it
    param: str = ""  # a parameterised case's parameter
    status: str = "ok"  # ok, not ok, skip, crashed
    file: str | None = None
    line: int | None = None
    first: str = ""  # the first failure line
    details: list[str] = field(default_factory=list)

    @property
    def label(self) -> str:
        return f"{self.name} [{self.param}]" if self.param else self.name

    @property
    def key(self) -> str:
        return f"{self.name}\0{self.param}"

    def to_json(self) -> dict:
        return dict(self.__dict__)


def ktap_lines(log: str) -> list[str]:
    """The log from its first KTAP version line, console timestamps removed."""
    lines = [_STAMP.sub("", ln.rstrip("\r")) for ln in log.splitlines()]
    start = next((i for i, ln in enumerate(lines) if _START.match(ln)), None)
    return [] if start is None else lines[start:]


def cases(log: str, src_root: str = "") -> list[Case]:
    """Every test of the run, suite by suite (failed ones with their where)."""
    lines = ktap_lines(log)
    out: list[Case] = []
    for suite in tap.parse(lines).results:
        _walk(suite, [suite.description], out, src_root)
    out += _crashed(lines, {c.name.split(".")[0] for c in out})
    return out


def _walk(r: Result, path: list[str], out: list[Case], root: str) -> None:
    if not r.subtests:
        if len(path) > 1:
            name, param = ".".join(path[:2]), ".".join(path[2:])
            out.append(_case(r, name, param, root))
        return
    before = len(out)
    for sub in r.subtests:
        _walk(sub, path + [sub.description], out, root)
    if r.status == "not ok" and not any(c.status != "ok" and c.status != "skip"
                                        for c in out[before:]):
        out.append(_case(r, ".".join(path), "", root))


def _case(r: Result, name: str, param: str, root: str) -> Case:
    status = r.status if r.status in ("ok", "not ok", "skip") else "ok"
    c = Case(name, param, status)
    if status != "not ok":
        return c
    diag = [ln.strip() for ln in r.before if ln.strip() and not _structural(ln)]
    c.details = diag
    for ln in diag:
        m = _FAILED_AT.search(ln)
        if m:
            c.file = m.group("file").removeprefix(root.rstrip("/") + "/") if root else \
                m.group("file")
            c.line = int(m.group("line"))
            c.first = ln.lstrip("# ")
            break
    if not c.first:
        c.first = diag[0].lstrip("# ") if diag else "not ok"
    return c


def _structural(line: str) -> bool:
    s = line.strip()
    return bool(_START.match(s) or re.match(r"^1\.\.\d+", s) or s.startswith("# Subtest:")
                or re.match(r"^#\s*\S+: pass:\d+", s) or s.startswith("# module:")
                or re.match(r"^#\s*Totals:", s))


def _crashed(lines: list[str], finished: set[str]) -> list[Case]:
    """Suites that started (``# Subtest: X`` one level in) and never got a
    result line: the kernel stopped in them."""
    out = []
    started = [m.group(1) for ln in lines
               if (m := re.match(r"^ {4}# Subtest: (\S+)", ln)) and not ln.startswith("     ")]
    ended = {m.group(2) for ln in lines if (m := re.match(r"^(not ok|ok) \d+ (\S+)", ln))}
    for s in started:
        if s not in ended:
            tail = [ln for ln in lines if ln.strip()][-12:]
            out.append(Case(s, "", "crashed", first="the run ended inside the suite "
                            "(the kernel crashed or hung)", details=tail))
    return out


def failing(all_cases: list[Case]) -> list[Case]:
    return [c for c in all_cases if c.status in ("not ok", "crashed")]
