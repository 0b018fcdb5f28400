"""Wall time and peak memory of commands, for the benchmarks (no third-party modules).

Two memory numbers, because a pipeline of many processes has no single one:

- ``max_rss``: the largest resident set of any one process in the command's
  tree, exact (``os.wait4``'s rusage of the child, which covers every
  descendant it waited for, as ``getrusage(RUSAGE_CHILDREN)`` does).
- ``peak_tree``: the largest sum of the resident sets of the command's
  process tree at one moment, sampled from ``/proc`` every ``interval``
  seconds. Shared pages count once per process (as summing ``top``'s RES
  would), and a process living less than one interval can be missed.

Sizes are KiB (as the kernel reports them).
"""

from __future__ import annotations

import os
import resource
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

_PAGE_KIB = os.sysconf("SC_PAGE_SIZE") // 1024


def _ppid_rss() -> dict[int, tuple[int, int]]:
    """{pid: (ppid, rss KiB)} for every process, from /proc/PID/stat."""
    out = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                data = f.read()
        except OSError:
            continue
        # comm may hold spaces and parentheses: split after the last ')'.
        rest = data[data.rfind(b")") + 2:].split()
        try:
            out[int(name)] = (int(rest[1]), int(rest[21]) * _PAGE_KIB)
        except (IndexError, ValueError):
            continue
    return out


def tree_rss(root: int) -> int:
    """Summed RSS (KiB) of ``root`` and all its descendants right now."""
    procs = _ppid_rss()
    kids: dict[int, list[int]] = {}
    for pid, (ppid, _) in procs.items():
        kids.setdefault(ppid, []).append(pid)
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        if pid in procs:
            total += procs[pid][1]
        todo.extend(kids.get(pid, ()))
    return total


class TreeSampler:
    """Samples the summed RSS of a process tree in a thread; ``.peak`` in KiB.

    ``with TreeSampler(pid) as s: ...``; ``pid`` defaults to this process
    (so everything it runs counts), or ``s.root = pid`` once it is known.
    """

    def __init__(self, root: int | None = None, interval: float = 0.1):
        self.root = root if root is not None else os.getpid()
        self.interval = interval
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def _loop(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, tree_rss(self.root))
            self._stop.wait(self.interval)

    def __enter__(self) -> "TreeSampler":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()


@dataclass
class Run:
    cmd: list[str]
    rc: int
    stdout: str
    stderr: str
    wall: float
    max_rss: int    # KiB, largest single process (exact)
    peak_tree: int  # KiB, largest summed RSS of the tree (sampled)
    cpu: float = 0.0  # s, user + system of the command and every child it waited for


def run(cmd: list[str], cwd: Path | str | None = None, env: dict | None = None,
        input: str | None = None, interval: float = 0.1) -> Run:
    """Run ``cmd`` to completion; its output, wall time and peak memory."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, \
            tempfile.TemporaryFile() as inp:
        if input is not None:
            inp.write(input.encode())
            inp.seek(0)
        t0 = time.monotonic()
        p = subprocess.Popen(cmd, cwd=cwd, env=env, stdin=inp if input is not None else subprocess.DEVNULL,
                             stdout=out, stderr=err)
        with TreeSampler(p.pid, interval) as s:
            # wait4 rather than p.wait(): it returns the child's rusage.
            _, status, ru = os.wait4(p.pid, 0)
        wall = time.monotonic() - t0
        p.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return Run(list(map(str, cmd)), p.returncode, out.read().decode(errors="replace"),
                   err.read().decode(errors="replace"), wall, ru.ru_maxrss,
                   max(s.peak, ru.ru_maxrss), ru.ru_utime + ru.ru_stime)


def children_max_rss() -> int:
    """KiB: the largest single process among this process's waited-for descendants."""
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss


def self_max_rss() -> int:
    """KiB: this process's own high-water mark."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def mib(kib: int) -> str:
    return f"{kib / 1024:.0f} MiB"


def median(xs: list[float]) -> float:
    s = sorted(xs)
    n = len(s)
    if not n:
        return float("nan")
    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2
