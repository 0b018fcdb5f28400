"""Running units of work in forked processes, each with a deadline.

Why a process per unit, not a thread: a thread cannot be stopped. A check
that ran past its budget used to be abandoned while its perl, git and
Python work went on, which in the long-running bot leaked a process tree
per timeout. Here every unit runs in a child forked from this process
(so it sees everything the parent set up: the series, the applied commits,
the trusted scripts, monkeypatches in tests), in a process group of its
own. When its deadline passes the whole group is killed with SIGKILL:
the child, and every subprocess it started that did not leave the group.
A unit that finishes in time has its group killed too, so nothing it left
behind outlives it.

A child sends back its value pickled through a pipe and leaves with
``os._exit`` (no atexit handlers, no flush of the parent's buffers).
What comes back is an ``Ended``: the value, or the exception it raised
(as text: exceptions need not pickle), or that it timed out or died.

This module knows nothing of checks: ``run_forked(tasks, ...)`` takes
callables.
"""

from __future__ import annotations

import os
import pickle
import selectors
import signal
import time
import traceback
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from napipatch import procs
from napipatch.errors import NapipatchError

# A child's result larger than this is refused (a bound on what one unit
# can make the parent hold): a check with this much output is broken.
MAX_RESULT = 256 * 1024 * 1024


@dataclass
class Ended:
    """How one unit ended.

    Attributes:
        how: ``ok`` (``value`` holds the result), ``raised`` (``error`` and
            ``trace`` say what), ``timeout`` or ``died`` (killed by a
            signal or exited without a result; ``error`` says how).
        env_error: the exception was a NapipatchError: bad input or an
            environment the unit cannot work in, not a bug.
        seconds: wall time from fork to end.
    """

    how: str
    value: Any = None
    error: str = ""
    trace: str = ""
    env_error: bool = False
    seconds: float = 0.0


def _child(task: Callable[[], Any], wfd: int) -> None:
    """In the child: run ``task``, write the pickled outcome, leave."""
    code = 0
    try:
        os.setpgid(0, 0)
        # The parent decides when a unit ends; a terminal's ^C goes to the
        # parent (the children are not in the foreground group anyway).
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        try:
            out = ("ok", task())
        except NapipatchError as exc:
            out = ("raised", f"{exc}", traceback.format_exc(limit=6), True)
        except BaseException as exc:  # noqa: BLE001 - reported to the parent
            out = ("raised", f"{type(exc).__name__}: {exc}", traceback.format_exc(limit=6), False)
        try:
            data = pickle.dumps(out, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception as exc:  # noqa: BLE001 - an unpicklable result is a bug
            data = pickle.dumps(("raised", f"result cannot be sent back: {exc}", "", False))
        with os.fdopen(wfd, "wb", closefd=True) as w:
            w.write(data)
    except BaseException:  # noqa: BLE001 - nothing may escape a forked child
        code = 70
    finally:
        os._exit(code)


@dataclass
class _Running:
    index: int
    pid: int
    rfd: int
    started: float
    chunks: list
    size: int = 0
    budget: float = 0.0   # seconds it may run (0: no limit)


def _reap(pid: int) -> int:
    try:
        return os.waitpid(pid, 0)[1]
    except ChildProcessError:
        return 0


def _finish(run: _Running, now: float, timed_out: bool) -> Ended:
    # Kill the group before reaping (see kill_group).
    procs.kill_group(run.pid)
    status = _reap(run.pid)
    seconds = now - run.started
    if timed_out:
        return Ended("timeout", seconds=seconds)
    data = b"".join(run.chunks)
    if run.size > MAX_RESULT:
        return Ended("died", error=f"result over {MAX_RESULT >> 20} MiB", seconds=seconds)
    if not data:
        sig = os.WTERMSIG(status) if os.WIFSIGNALED(status) else 0
        why = (f"killed by signal {sig} ({signal.Signals(sig).name})" if sig
               else f"exited with status {os.waitstatus_to_exitcode(status)} and no result")
        return Ended("died", error=why, seconds=seconds)
    try:
        got = pickle.loads(data)
    except Exception as exc:  # noqa: BLE001 - a truncated result
        return Ended("died", error=f"unreadable result: {exc}", seconds=seconds)
    if got[0] == "ok":
        return Ended("ok", value=got[1], seconds=seconds)
    return Ended("raised", error=got[1], trace=got[2], env_error=got[3], seconds=seconds)


def run_forked(tasks: Sequence[Callable[[], Any]], jobs: int,
               budget: float | Sequence[float],
               on_end: Callable[[int, Ended], None] | None = None) -> list[Ended]:
    """Run every task in its own forked child, ``jobs`` at a time, each
    killed (with its process group) ``budget`` seconds after it started
    (0: no budget; a sequence: each task's own). Results come in the order
    of ``tasks``; ``on_end(i, ended)`` is called as each one ends."""
    budgets = [float(b) for b in budget] if isinstance(budget, Sequence) \
        else [float(budget)] * len(tasks)
    results: list[Ended | None] = [None] * len(tasks)
    running: dict[int, _Running] = {}   # read fd -> unit
    sel = selectors.DefaultSelector()
    nxt = 0
    try:
        while nxt < len(tasks) or running:
            while nxt < len(tasks) and len(running) < max(1, jobs):
                run = _start(tasks[nxt], nxt, budgets[nxt])
                running[run.rfd] = run
                sel.register(run.rfd, selectors.EVENT_READ, run)
                nxt += 1
            now = time.monotonic()
            wait = min((r.started + r.budget - now for r in running.values() if r.budget),
                       default=None)
            for key, _ in sel.select(timeout=None if wait is None else max(0.0, wait)):
                run = key.data
                chunk = os.read(run.rfd, 1 << 20)
                if chunk and run.size <= MAX_RESULT:
                    run.chunks.append(chunk)
                    run.size += len(chunk)
                    continue
                if chunk:        # over the bound: stop reading, the unit dies
                    run.size += len(chunk)
                _end(run, results, running, sel, time.monotonic(), False, on_end)
            now = time.monotonic()
            for run in [r for r in running.values() if r.budget and now - r.started >= r.budget]:
                _end(run, results, running, sel, now, True, on_end)
    finally:
        # An interrupt (^C) or an error here: no child may outlive the run.
        for run in list(running.values()):
            procs.kill_group(run.pid)
            _reap(run.pid)
            os.close(run.rfd)
        sel.close()
    return [r for r in results if r is not None]


def _start(task: Callable[[], Any], index: int, budget: float) -> _Running:
    rfd, wfd = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(rfd)
        _child(task, wfd)
    os.close(wfd)
    try:
        os.setpgid(pid, pid)   # also here: the parent must not race the child's own call
    except (ProcessLookupError, PermissionError):
        pass                   # the child already did it, or already left
    return _Running(index, pid, rfd, time.monotonic(), [], budget=budget)


def _end(run: _Running, results: list, running: dict, sel, now: float, timed_out: bool,
         on_end) -> None:
    sel.unregister(run.rfd)
    del running[run.rfd]
    ended = _finish(run, now, timed_out)
    os.close(run.rfd)
    results[run.index] = ended
    if on_end:
        on_end(run.index, ended)
