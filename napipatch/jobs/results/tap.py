"""TAP and KTAP results, read one way for the boot plans and the kernel selftests.

What is read, as the kernel's own tools print it (kselftest.h,
kselftest/ktap_helpers.sh, kselftest_harness.h, net/lib/py/ksft.py,
Documentation/dev-tools/ktap.rst) and as napipatch's plans print it:

- the version line (``TAP version 13``, ``KTAP version 1``) and the plan
  (``1..N``; ``1..0 # SKIP why`` skips the whole program);
- result lines ``ok N description # DIRECTIVE data``: the description may
  be absent (``ok 3 # SKIP why``) or follow TAP 13's ``- ``; the
  directives are SKIP, XFAIL, XPASS, TODO, TIMEOUT and ERROR (any case,
  kselftest.h prints ``# error``); other data after ``#`` is kept as the
  reason (runner.sh's ``# exit=1``, ksft_test_result_code's ``#  msg``);
- nested subtests: a KTAP block indented under its parent, whose own
  result line follows its subtests;
- ``Bail out! why``.

Everything else (``#`` diagnostics, kernel messages on a console) is text
around the results: kept for excerpts, never an error. KTAP puts a test's
diagnostics before its result line, TAP 13 plans put a failure's details
after it, so each result keeps both.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

DIRECTIVES = ("SKIP", "TODO", "XFAIL", "XPASS", "TIMEOUT", "ERROR")
_VERSION = re.compile(r"^K?TAP version \d+$")
_PLAN = re.compile(r"^1\.\.(\d+)\s*(?:#\s*(.*))?$")
_RESULT = re.compile(r"^(not ok|ok) (\d+)(?=\s|$)(.*)$")
_BAIL = re.compile(r"^Bail out!\s*(.*)$")
_DATA = re.compile(r"(?:^|\s)#")  # where a result's description ends
# On a serial console a kernel message without its newline can come first
# on a plan's result line; the plans print TAP 13 results (``ok N - ``).
_AFTER_NOISE = re.compile(r"\s((?:not )?ok \d+ - )")


@dataclass
class Result:
    n: int
    ok: bool  # the line said "ok" (not "not ok")
    description: str
    directive: str = ""  # one of DIRECTIVES, or ""
    data: str = ""  # what follows the '#' (and the directive)
    depth: int = 0  # 0 for the top level, 1 for its subtests...
    line: str = ""  # the result line as printed
    before: list[str] = field(default_factory=list)  # lines since the previous result at this level
    after: list[str] = field(default_factory=list)  # '#' lines right after it, '# ' removed
    subtests: list[Result] = field(default_factory=list)

    @property
    def status(self) -> str:
        """ok, not ok, skip or xfail (failed as it was expected to: not a failure).

        XFAIL is an expected failure whatever the line says (kselftest prints
        ``ok N # XFAIL``); a failing TODO is one too, a passing TODO is ok;
        XPASS (passed where a failure was expected) fails, as kselftest's
        exit status says."""
        if self.directive == "SKIP":
            return "skip"
        if self.directive == "XFAIL" or (self.directive == "TODO" and not self.ok):
            return "xfail"
        if self.directive == "XPASS":
            return "not ok"
        return "ok" if self.ok else "not ok"

    @property
    def reason(self) -> str:
        """Why it has its status: the SKIP reason, else the directive and its data."""
        if self.directive in ("", "SKIP"):
            return self.data
        return f"{self.directive} {self.data}".strip()


@dataclass
class Tap:
    results: list[Result] = field(default_factory=list)  # the top level, in order
    plan: int | None = None  # the top level's 1..N
    skip_all: str | None = None  # 1..0 # SKIP why
    bail_out: str | None = None


@dataclass
class _Level:
    indent: int
    start: int  # index of the first line the next result's ``before`` holds
    results: list[Result] = field(default_factory=list)
    pending: list[Result] = field(default_factory=list)  # closed subtests awaiting their parent


def _result(m: re.Match, line: str, depth: int) -> Result:
    rest = m.group(3).strip()
    cut = _DATA.search(rest)
    desc, data = (rest[:cut.start()], rest[cut.end():]) if cut else (rest, "")
    desc = desc.strip()
    if desc == "-" or desc.startswith("- "):
        desc = desc[1:].strip()
    word, _, more = data.strip().partition(" ")
    directive = word.upper() if word.upper() in DIRECTIVES else ""
    return Result(n=int(m.group(2)), ok=m.group(1) == "ok", description=desc,
                  directive=directive, data=(more if directive else data).strip(),
                  depth=depth, line=line)


def _console_line(line: str) -> str:
    """A console line as the plan printed it: stray CRs and indentation
    gone, and a kernel message that shares the line cut off."""
    line = line.strip()
    if not line.startswith("#") and not _RESULT.match(line):
        m = _AFTER_NOISE.search(line)
        if m:
            return line[m.start(1):]
    return line


def parse(lines: list[str], console: bool = False) -> Tap:
    """The TAP or KTAP in ``lines``. ``console``: lines from a serial
    console, read flat (no nesting) and cleaned by _console_line."""
    tap = Tap()
    stack = [_Level(indent=0, start=0)]
    last: Result | None = None
    for i, raw in enumerate(lines):
        line = _console_line(raw) if console else raw.rstrip()
        body = line.lstrip(" ")
        structural = _RESULT.match(body) or _VERSION.match(body) or _PLAN.match(body)
        if not structural:
            bail = _BAIL.match(body)
            if bail and len(stack) == 1:
                tap.bail_out = bail.group(1).strip()
            elif body.startswith("#") and last is not None:
                last.after.append(body[1:].removeprefix(" "))
            continue
        last = None
        _enter(stack, len(line) - len(body), i)
        depth = len(stack) - 1
        m = _RESULT.match(body)
        if m:
            level = stack[-1]
            last = _result(m, raw.rstrip("\r\n"), depth)
            last.before = [ln.rstrip("\r\n") for ln in lines[level.start:i]]
            last.subtests, level.pending = level.pending, []
            level.start = i + 1
            level.results.append(last)
        elif depth == 0:
            p = _PLAN.match(body)
            if p:
                tap.plan = int(p.group(1))
                if tap.plan == 0 and (p.group(2) or "").upper().startswith("SKIP"):
                    tap.skip_all = p.group(2)[4:].strip()
    while len(stack) > 1:
        _leave(stack)
    tap.results = stack[0].results + stack[0].pending
    return tap


def _enter(stack: list[_Level], indent: int, i: int) -> None:
    """Make the level of a structural line at ``indent`` the innermost one:
    deeper starts a subtest block, shallower closes the blocks it leaves."""
    while len(stack) > 1 and indent < stack[-1].indent:
        _leave(stack)
    if indent > stack[-1].indent:
        stack.append(_Level(indent=indent, start=i))


def _leave(stack: list[_Level]) -> None:
    """Close the innermost block: its results wait for the parent's result
    line (or, if it never comes, are reported at the parent's level)."""
    done = stack.pop()
    parent = stack[-1]
    parent.pending += done.results + done.pending
