"""Running a tool with a deadline: one way, for every tool napipatch starts.

Every tool (git through napipatch/tree/gitutil.py, make, QEMU, vng, ssh,
scp, perl scripts, the linters, spatch, tar, cpio, gcc ...) goes through
here; the few modules that start a process otherwise (the engine's forked
Python units, which use ``kill_group``; the guest's netsnap.py) are named
in tests/test_layout.py (OWN_PROCESSES) with why. So they all behave alike:

* past its deadline the tool is killed with SIGKILL together with every
  process it started (``kill_tree``: its descendants, each stopped before
  /proc is read again, so none can start another past the walk); what is
  still in the pipes is read for a moment (GRACE), and ``ProcessTimeout``
  is raised: a NapipatchError carrying the output so far and the seconds;
* an interrupt (^C) or an error while it runs (a callback that raises)
  kills it the same way: nothing outlives the call;
* a tool that ends by itself is only reaped: what it started in the
  background on purpose (``nohup server &``, its output elsewhere) is left
  alone, as ``subprocess.run`` leaves it;
* a tool that is not installed (argv[0] not found) is a one-line
  ``NotInstalled`` error naming it and, where the caller knows it, the
  Debian package;
* output is captured: text (UTF-8, undecodable bytes replaced, newlines as
  Python's text mode gives them) or bytes. Optionally each line of stdout
  and stderr (merged, or each stream split on its own and their lines
  interleaved whole) is written to a log file as it comes and handed to a
  callback, for progress and live parsing; a ``tick`` callback is called
  twice a second. Either callback may end the run early (return True).

Process groups. A tool stays in its caller's process group, as
``subprocess`` starts it, unless ``session=True``. That group is how
napipatch itself is stopped from outside: the engine kills a forked unit's
whole group when it runs past its budget, a Celery worker's group is
killed (``kill -9`` of a worker) while its build runs, a terminal's ^C
goes to the foreground group. A tool in a group of its own would survive
all of these (a make still writing into the O= directory the next worker
builds in). ``session=True`` (a new session, so a group of its own, killed
whole with ``kill_group``) is for a tool that must not share the
terminal or whose own children leave its tree (vng's QEMU).

A job's deadline. ``deadline(seconds)`` bounds everything started in its
block (a build of every patch, a boot): each tool gets at most what is
left of it, is killed with its children when it passes, and a tool
started after it passed is not started (``ProcessTimeout``); ``expired``
tells the caller that its block ran out.

``run`` runs one command; ``start`` + ``finish`` run several side by side
(their pipes read together, each with its own deadline). Standard library
only (and napipatch.errors): every layer may import this.
"""

from __future__ import annotations

import codecs
import contextlib
import io
import os
import select
import selectors
import signal
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import IO, Self

from napipatch.errors import NapipatchError

# What ``run`` returns, for the annotations of its callers (who import no
# subprocess: tests/test_layout.py).
CompletedProcess = subprocess.CompletedProcess
TICK = 0.5    # seconds between two calls of a ``tick`` callback
GRACE = 2.0   # seconds a killed tool's output is still read for
_PIPE_BUF = getattr(select, "PIPE_BUF", 512)
STDERR = ("pipe", "merge", "null")


class NotInstalled(NapipatchError):
    """The tool (argv[0]) is not on this machine."""


class ProcessTimeout(NapipatchError):
    """A tool ran past its deadline and was killed with what it started.

    Attributes:
        output: what it printed (stdout, or stdout and stderr merged) until then.
        seconds: the deadline it was given.
    """

    def __init__(self, subject: object, reason: str = "timed out", output: str = "",
                 seconds: float = 0.0):
        super().__init__(subject, reason)
        self.output = output
        self.seconds = seconds

    def __reduce__(self):
        return (self.__class__, (self.subject, self.reason, self.output, self.seconds))


def kill_group(pgid: int) -> None:
    """SIGKILL every process of group ``pgid`` (gone already: nothing to do).

    Call it before reaping the group's leader: while the leader is an
    unreaped zombie its pid cannot be reused, so the kill cannot reach an
    unrelated process."""
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _parents() -> dict[int, int]:
    """{pid: parent pid} of the processes /proc shows."""
    out = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat", "rb") as f:
                    out[int(d)] = int(f.read().rsplit(b")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                pass
    return out


def kill_tree(pid: int) -> None:
    """SIGKILL ``pid`` (a child not yet reaped) and its descendants. Each is
    stopped before /proc is read again, so none can start another past the
    walk; one that left in between is let go."""
    tree: set[int] = set()
    new = {pid}
    while new:
        for p in new:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(p, signal.SIGSTOP)
        tree |= new
        parents = _parents()
        new = {p for p, pp in parents.items() if pp in tree and p not in tree}
    parents = _parents()
    for p in tree:
        mine = p == pid or parents.get(p) in tree   # else: its pid was reused
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(p, signal.SIGKILL if mine else signal.SIGCONT)


def _exited(pid: int, until: float | None) -> bool:
    """Wait until ``pid`` (our child) has exited, without reaping it; False
    when ``until`` (a monotonic time) passes first."""
    delay = 0.001
    while True:
        try:
            if os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
                return True
        except ChildProcessError:
            return True
        if until is not None and time.monotonic() >= until:
            return False
        time.sleep(delay if until is None else max(0.0, min(delay, until - time.monotonic())))
        delay = min(delay * 2, 0.05)


@dataclass
class _Stream:
    """One pipe the tool writes to: what came, and the line not yet ended."""

    fd: int
    chunks: list[bytes] = field(default_factory=list)
    decoder: codecs.IncrementalDecoder | io.IncrementalNewlineDecoder | None = None
    pending: str = ""


def _decoder(newline: str | None):
    utf8 = codecs.getincrementaldecoder("utf-8")(errors="replace")
    return io.IncrementalNewlineDecoder(utf8, translate=True) if newline is None else utf8


def _text(data: bytes) -> str:
    """What ``subprocess`` gives in text mode: decoded, universal newlines."""
    return data.decode("utf-8", "replace").replace("\r\n", "\n").replace("\r", "\n")


class Running:
    """A started tool (see ``start``): its process, its pipes, its output."""

    def __init__(self, argv: list[str], name: str, proc: subprocess.Popen, timeout: float | None,
                 opts: dict, stdin: bytes | None):
        self.argv, self.name, self.proc, self.timeout = argv, name, proc, timeout
        self.started = time.monotonic()
        self.deadline = None if timeout is None else self.started + timeout
        self.text, self.newline = opts["text"], opts["newline"]
        self.log: IO[str] | None = opts["log"]
        self.on_line: Callable[[str], object] | None = opts["on_line"]
        self.tick: Callable[[float], object] | None = opts["tick"]
        self.next_tick = self.started + TICK
        split = self.log is not None or self.on_line is not None
        self.streams = [_Stream(f.fileno(), decoder=_decoder(self.newline) if split else None)
                        for f in (proc.stdout, proc.stderr) if f is not None]
        self.stdin, self.sent = stdin, 0
        self.fds = 0              # pipes still read (or written): the run is live
        self.killed = False       # by a deadline or a callback: ``drain_until`` bounds the rest
        self.timed_out = False
        self.drain_until: float | None = None
        self.session = opts["session"]

    # -------------------------------------------------------------- lines
    def _lines(self, s: _Stream, data: bytes, final: bool = False) -> None:
        text = s.pending + s.decoder.decode(data, final)
        *done, s.pending = text.split("\n")
        if final and s.pending:
            done.append(s.pending)
            s.pending = ""
        for line in done:
            if self.newline is not None:
                line = line.rstrip("\r")
            if self.log is not None:
                self.log.write(line + "\n")
            if self.on_line is not None and self.on_line(line) and not self.killed:
                self.kill("stopped")

    def took(self, s: _Stream, data: bytes) -> None:
        """``data`` came on stream ``s`` (b"": its end)."""
        if data:
            s.chunks.append(data)
        if s.decoder is not None:
            self._lines(s, data, final=not data)

    # ------------------------------------------------------------- ending
    def kill(self, why: str = "stopped") -> None:
        """Kill the tool and what it started now (unless it is reaped
        already); what is in the pipes is still read for GRACE seconds."""
        if self.proc.returncode is None:
            (kill_group if self.session else kill_tree)(self.proc.pid)
        if not self.killed:
            self.killed, self.timed_out = True, why == "timeout"
            self.drain_until = time.monotonic() + GRACE

    def output(self) -> str | bytes:
        data = b"".join(self.streams[0].chunks) if self.streams else b""
        return _text(data) if self.text else data

    def error(self) -> ProcessTimeout:
        out = self.output()
        return ProcessTimeout(self.name, "timed out", out if isinstance(out, str)
                              else out.decode("utf-8", "replace"), self.timeout or 0.0)

    def reap(self) -> subprocess.CompletedProcess:
        """Wait for the tool to exit (past its deadline: killed), reap it: the
        result."""
        if self.proc.returncode is None:
            if not self.killed and not _exited(self.proc.pid, self.deadline):
                self.kill("timeout")
            self.proc.wait()
        self.close()
        err = None
        if len(self.streams) > 1:
            data = b"".join(self.streams[1].chunks)
            err = _text(data) if self.text else data
        return subprocess.CompletedProcess(self.argv, self.proc.returncode, self.output(), err)

    def close(self) -> None:
        """Kill the tool unless it was reaped, reap it, close its pipes
        (what ``finish`` does in the end; also on leaving ``with``)."""
        if self.proc.returncode is None:
            self.kill()
            self.proc.wait()
        for f in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if f is not None:
                f.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class Deadline:
    """The deadline a ``deadline()`` block runs under (``at``: monotonic)."""

    def __init__(self, seconds: float | None):
        self.seconds = seconds
        self.at = time.monotonic() + seconds if seconds else None

    @property
    def expired(self) -> bool:
        return self.at is not None and time.monotonic() >= self.at


_DEADLINES: list[Deadline] = []  # the blocks this process is in, innermost last


@contextlib.contextmanager
def deadline(seconds: float | None):
    """Run the block under a deadline ``seconds`` from now (None or 0: none)."""
    d = Deadline(seconds)
    _DEADLINES.append(d)
    try:
        yield d
    finally:
        _DEADLINES.remove(d)


def _bounded(name: str, timeout: float | None) -> float | None:
    """``timeout`` cut to what is left of the enclosing deadlines."""
    ats = [d.at for d in _DEADLINES if d.at is not None]
    if not ats:
        return timeout
    left = min(ats) - time.monotonic()
    if left <= 0:
        raise ProcessTimeout(name, "not started: the job's deadline has passed", "",
                             timeout or 0.0)
    return left if timeout is None else min(timeout, left)


def start(argv: Sequence[str], *, timeout: float | None, name: str | None = None,
          package: str | None = None, cwd=None, env: dict | None = None,
          input: str | bytes | None = None, stderr: str = "pipe", text: bool = True,
          log: IO[str] | None = None, on_line: Callable[[str], object] | None = None,
          newline: str | None = None, tick: Callable[[float], object] | None = None,
          session: bool = False) -> Running:
    """Start ``argv``; ``finish`` (or ``run``) reads it to its end.

    timeout: seconds from now; past them the tool is killed with what it
        started and ``ProcessTimeout`` raised (None: no deadline).
    name: the tool in messages (default: argv[0]); package: its Debian
        package, named when it is not installed.
    input: written to its stdin (else stdin is /dev/null).
    stderr: ``pipe`` (captured apart), ``merge`` (into stdout, one pipe:
        the order the tool wrote in) or ``null``.
    text: stdout/stderr as str (UTF-8, replaced errors, universal newlines),
        else bytes.
    log, on_line: each line of output, without its newline, as it comes:
        written to ``log`` (an open text file) and passed to ``on_line``;
        with stderr=pipe the lines of both streams, each whole.
    newline: None: a line ends at \\n, \\r\\n or \\r (Python's text mode);
        "\\n": only at \\n, and CRs before it are dropped (a serial console).
    tick: called with the seconds since the start every TICK seconds.
    session: run it in a session (so a process group) of its own, killed
        whole (see the module's docstring); else in the caller's group.
    ``on_line`` or ``tick`` returning true ends the run: the tool is
    killed (no error; the result's returncode says -9)."""
    if stderr not in STDERR:
        raise ValueError(f"stderr must be one of {STDERR}")
    argv = [os.fspath(a) for a in argv]
    name = name or argv[0]
    timeout = _bounded(name, timeout)
    data = input.encode("utf-8") if isinstance(input, str) else input
    try:
        proc = subprocess.Popen(
            argv, cwd=cwd, env=env, bufsize=0, start_new_session=session,
            stdin=subprocess.DEVNULL if data is None else subprocess.PIPE, stdout=subprocess.PIPE,
            stderr={"pipe": subprocess.PIPE, "merge": subprocess.STDOUT,
                    "null": subprocess.DEVNULL}[stderr])
    except FileNotFoundError as exc:
        if exc.filename is None or os.fspath(exc.filename) != argv[0]:
            raise                       # the working directory, not the tool
        hint = f" (apt-get install {package})" if package else ""
        raise NotInstalled(name, f"not installed{hint}") from None
    opts = {"text": text, "newline": newline, "log": log, "on_line": on_line, "tick": tick,
            "session": session}
    return Running(argv, name, proc, timeout, opts, data)


def run(argv: Sequence[str], *, timeout: float | None, **kw) -> subprocess.CompletedProcess:
    """``argv`` run to its end (see ``start`` for the arguments): its
    returncode, stdout and stderr (None unless stderr=pipe). A failing exit
    status is the caller's to judge."""
    return finish([start(argv, timeout=timeout, **kw)])[0]


def finish(runs: Sequence[Running]) -> list[subprocess.CompletedProcess]:
    """Read every one of ``runs`` to its end, side by side; their results in
    order. When one runs past its deadline, all are killed and its
    ``ProcessTimeout`` raised. Whatever happens, none outlives the call."""
    try:
        _pump(runs)
        results = [r.reap() for r in runs]
        late = next((r for r in runs if r.timed_out), None)
        if late is not None:
            raise late.error()
        return results
    finally:
        for r in runs:
            r.close()


def _register(sel: selectors.BaseSelector, runs: Sequence[Running]) -> None:
    for r in runs:
        for s in r.streams:
            sel.register(s.fd, selectors.EVENT_READ, (r, s))
            r.fds += 1
        if r.stdin is not None:
            if r.stdin:
                sel.register(r.proc.stdin.fileno(), selectors.EVENT_WRITE, (r, None))
                r.fds += 1
            else:
                r.proc.stdin.close()


def _drop(sel: selectors.BaseSelector, r: Running, fd: int) -> None:
    sel.unregister(fd)
    r.fds -= 1


def _unregister(sel: selectors.BaseSelector, r: Running) -> None:
    """Stop reading ``r`` (its grace is over): whatever holds its pipes open."""
    for key in list(sel.get_map().values()):
        if key.data[0] is r:
            _drop(sel, r, key.fd)
            if key.data[1] is not None and key.data[1].decoder is not None:
                r.took(key.data[1], b"")


def _send(sel: selectors.BaseSelector, r: Running, fd: int) -> None:
    try:
        r.sent += os.write(fd, r.stdin[r.sent:r.sent + _PIPE_BUF])
    except BrokenPipeError:
        r.sent = len(r.stdin)
    if r.sent >= len(r.stdin):
        _drop(sel, r, fd)
        r.proc.stdin.close()


def _wake(runs: Sequence[Running], now: float) -> float | None:
    """Seconds until the next deadline, tick or end of a grace of a run
    still read (None: none)."""
    times = []
    for r in runs:
        if not r.fds:
            continue                # read to its end: ``reap`` waits for it
        if r.killed:
            times.append(r.drain_until)
            continue
        if r.deadline is not None:
            times.append(r.deadline)
        if r.tick is not None:
            times.append(r.next_tick)
    return max(0.0, min(times) - now) if times else None


def _due(sel: selectors.BaseSelector, runs: Sequence[Running], now: float) -> None:
    """Deadlines (one passed: every run is killed), ticks and graces that are due."""
    live = [r for r in runs if r.fds]
    if any(not r.killed and r.deadline is not None and now >= r.deadline for r in live):
        for r in runs:
            late = r.fds and not r.killed and r.deadline is not None and now >= r.deadline
            r.kill("timeout" if late else "stopped")
    for r in live:
        if r.tick is not None and not r.killed and now >= r.next_tick:
            r.next_tick = now + TICK
            if r.tick(now - r.started):
                r.kill("stopped")
        if r.killed and now >= r.drain_until:
            _unregister(sel, r)


def _pump(runs: Sequence[Running]) -> None:
    """Read the pipes of ``runs`` (and write their input) until every one
    ended or was given up; deadlines, ticks and graces on the way."""
    with selectors.DefaultSelector() as sel:
        _register(sel, runs)
        while sel.get_map():
            for key, _events in sel.select(_wake(runs, time.monotonic())):
                r, s = key.data
                if s is None:
                    _send(sel, r, key.fd)
                    continue
                data = os.read(key.fd, 1 << 16)
                if not data:
                    _drop(sel, r, key.fd)
                r.took(s, data)
            _due(sel, runs, time.monotonic())
