"""Runs many napipatch command lines in one interpreter, for tests/test_fuzz.py.

Reads a JSON list of ``{"args": [...], "timeout": s}`` on stdin and writes
one JSON line per command: exit status, stdout/stderr tails, seconds, and
whether it ran past its time limit. Each command runs through the real
entry point (``napipatch.cli.main``) with stdout and stderr captured, so
a crash shows exactly as a user would see it; importing napipatch once
instead of once per input keeps 300+ inputs within a few minutes.
"""

from __future__ import annotations

import contextlib
import io
import json
import signal
import sys
import time

from napipatch.cli import main


class TimeLimit(BaseException):
    """Not an Exception: main() must not catch it as an internal error."""


def _alarm(_sig, _frame):
    raise TimeLimit()


def run_one(args: list[str], timeout: float) -> dict:
    out, err = io.StringIO(), io.StringIO()
    sys.argv = ["napipatch", *args]
    rc, late = None, False
    t0 = time.monotonic()
    signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                main()
                rc = 0
            except SystemExit as exc:
                rc = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
    except TimeLimit:
        late = True
    except BaseException as exc:  # noqa: BLE001 - escaped main(): a bug to report
        err.write(f"escaped main(): {type(exc).__name__}: {exc}\n")
        rc = -1
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    return {"rc": rc, "late": late, "seconds": round(time.monotonic() - t0, 3),
            "stdout": out.getvalue()[-2000:], "stderr": err.getvalue()[:4000]}


if __name__ == "__main__":
    signal.signal(signal.SIGALRM, _alarm)
    for job in json.load(sys.stdin):
        print(json.dumps(run_one(job["args"], job["timeout"])), flush=True)
