"""A warm process that forks a child per request: a slow start paid once, early.

pylint spends 0.8 s of a 1 s run before it reads a file (importing
itself, astroid's model of ``builtins``, isort). The engine starts a
zygote for such a check when the run begins, before the series is
applied, while one core is idle: the zygote forks from the engine, warms
up (``warm()``), then waits. A unit that needs the tool asks it
(``ask``, through its context: ``ctx.ask``): the zygote forks a child that runs ``serve(request)`` in the
warm state and sends the answer back; the unit's process never pays the
start.

Each request travels on a socket pair of its own, handed to the zygote
over one control socket (SCM_RIGHTS), so units ask side by side and no
path on disk is involved. The zygote leaves when the control socket
closes (the engine closes it at the end of the run, or dies); a served
child is bounded by its own alarm. Anything that goes wrong on the way
(no zygote, it died, warming failed) makes ``ask`` return None and the
caller does the work the slow way.

This module knows nothing of checks: a zygote is a name, a ``warm`` and a
``serve`` callable.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import signal
import socket
import struct
from collections.abc import Callable
from pathlib import Path
from typing import Any

# The zygotes of this run, by name; forked units inherit the dict.
_CONTROL: dict[str, socket.socket] = {}
_LEN = struct.Struct("!Q")
# A zygote that has not answered in this long (still warming on a busy
# machine) is not waited for: the caller runs the tool the slow way.
READY = 10.0
# A request or answer larger than this is refused (a bound on what one
# unit can make another process hold).
MAX_MESSAGE = 64 << 20


class _Gone(Exception):
    pass


def _send(sock: socket.socket, obj: Any) -> None:
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    sock.sendall(_LEN.pack(len(data)) + data)


def _recv_exact(sock: socket.socket, n: int) -> bytes:
    chunks, got = [], 0
    while got < n:
        chunk = sock.recv(min(n - got, 1 << 20))
        if not chunk:
            raise _Gone("closed")
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def _recv(sock: socket.socket) -> Any:
    (n,) = _LEN.unpack(_recv_exact(sock, _LEN.size))
    if n > MAX_MESSAGE:
        raise _Gone(f"message of {n} bytes")
    return pickle.loads(_recv_exact(sock, n))


def start(name: str, warm: Callable[[Path], None], serve: Callable[[Any], Any],
          limit: float, workdir: Path) -> int | None:
    """Fork the zygote ``name``, which runs ``warm(workdir)`` (the caller
    removes ``workdir`` after ``stop``); its pid (None: one runs already).
    Each served child is killed by its own alarm after ``limit`` seconds."""
    if name in _CONTROL:
        return None
    mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            mine.close()
            for other in _CONTROL.values():
                other.close()
            _zygote(theirs, lambda: warm(workdir), serve, limit)
        except BaseException:  # noqa: BLE001 - nothing may escape a forked child
            code = 70
        finally:
            os._exit(code)
    theirs.close()
    _CONTROL[name] = mine
    return pid


def _zygote(control: socket.socket, warm, serve, limit: float) -> None:
    # Not in the engine's terminal group: ^C is for the engine, which
    # closes the control socket; children are reaped by the kernel.
    os.setpgid(0, 0)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)
    try:
        warm()
        ready = True
    except Exception:  # noqa: BLE001 - the askers do the work themselves
        ready = False
    while True:
        try:
            msg, fds, _flags, _addr = socket.recv_fds(control, 16, 1)
        except OSError:
            return
        if not msg and not fds:
            return                      # the engine closed its end
        for fd in fds:
            if not ready:
                os.close(fd)            # the asker sees EOF: not served
            elif os.fork() == 0:
                control.close()
                _served(socket.socket(fileno=fd), serve, limit)
            else:
                os.close(fd)


def _served(conn: socket.socket, serve, limit: float) -> None:
    """In a served child: one request, one answer, then leave."""
    code = 0
    try:
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        signal.signal(signal.SIGALRM, signal.SIG_DFL)   # past the limit: killed
        signal.setitimer(signal.ITIMER_REAL, limit)
        _send(conn, os.getpid())
        request = _recv(conn)
        try:
            answer = ("ok", serve(request))
        except Exception as exc:  # noqa: BLE001 - sent to the asker
            answer = ("raised", f"{type(exc).__name__}: {exc}")
        _send(conn, answer)
        conn.close()
    except BaseException:  # noqa: BLE001 - nothing may escape a forked child
        code = 70
    finally:
        os._exit(code)


def ask(name: str, request: Any, timeout: float) -> Any:
    """``serve(request)`` as zygote ``name``'s child returns it; None when no
    zygote answers (none started, warming failed or takes over READY
    seconds, it died). A child still running after ``timeout`` is killed
    and TimeoutError raised; an exception in ``serve`` comes back as
    RuntimeError."""
    control = _CONTROL.get(name)
    if control is None:
        return None
    here, there = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    with here, there:
        try:
            socket.send_fds(control, [b"r"], [there.fileno()])
            there.close()
            here.settimeout(READY)
            pid = _recv(here)
        except (_Gone, OSError, EOFError, pickle.UnpicklingError):
            return None            # the slow way costs less than waiting longer
        try:
            here.settimeout(timeout)
            _send(here, request)
            how, value = _recv(here)
        except TimeoutError:
            # This one served child only: it shares the zygote's process
            # group with the others (so not procs.kill_group).
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            raise
        except (_Gone, OSError, EOFError, pickle.UnpicklingError):
            return None            # it died: the caller runs the tool itself
    if how == "raised":
        raise RuntimeError(value)
    return value


def stop(name: str, pid: int) -> None:
    """Close zygote ``name``'s control socket and reap it."""
    control = _CONTROL.pop(name, None)
    if control is not None:
        control.close()
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)    # it may still be warming
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, 0)
