"""An internal error (a bug in napipatch): one line for the user, the full
traceback on disk.

A crash must never look like a finding (exit 1) or like bad input (exit 2):
it exits 3, says what failed and on which command line, and where the
traceback was written (``<cache-dir>/crash/<timestamp>.txt``) so it can be
attached to a bug report.
"""

from __future__ import annotations

import os
import sys
import time
import traceback
from pathlib import Path

from napipatch import config as configmod
from napipatch.errors import printable

EXIT_INTERNAL = 3


def _crash_dir() -> Path:
    """``crash/`` under the configured cache dir (the default one if the
    configuration itself cannot be read)."""
    try:
        base = Path(configmod.load().cache_dir).expanduser()
    except Exception:  # noqa: BLE001 - the crash may be in the configuration
        base = Path(configmod.Config().cache_dir).expanduser()
    return base / "crash"


def write_report(exc: BaseException, argv: list[str]) -> Path | None:
    """The traceback and command line in a new file; None if it cannot be written."""
    d = _crash_dir()
    stamp = time.strftime("%Y%m%d-%H%M%S") + f"-{os.getpid()}"
    text = (f"napipatch {' '.join(map(repr, argv))}\n\n"
            + "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)))
    try:
        d.mkdir(parents=True, exist_ok=True)
        f = d / f"{stamp}.txt"
        f.write_text(text, errors="backslashreplace")
        return f
    except OSError:
        return None


def one_line(exc: BaseException, argv: list[str], where: Path | None) -> str:
    what = printable(f"{type(exc).__name__}: {exc}")
    if len(what) > 300:
        what = what[:300] + "..."
    cmd = printable(" ".join(argv))
    if len(cmd) > 200:
        cmd = cmd[:200] + "..."
    tail = f"traceback in {where}" if where else "traceback could not be written (use --debug)"
    return f"napipatch: internal error: {what} (running: napipatch {cmd}); {tail}"


def report(exc: BaseException) -> None:
    """Print the one line and exit 3."""
    argv = sys.argv[1:]
    print(one_line(exc, argv, write_report(exc, argv)), file=sys.stderr)
    sys.exit(EXIT_INTERNAL)
