"""Fault injection for the restart tests.

``NAPIPATCH_BOT_CRASH_AT=POINT`` kills the bot with SIGKILL at a named
point of a pass (after-ingest, after-assemble, checking, after-queue,
before-send, after-send, after-log: each ``crash_point()`` call names one),
so the tests can show that a restart from any committed step sends each
reply exactly once.
"""

from __future__ import annotations

import logging
import os
import signal

log = logging.getLogger("napipatch.bot")

CRASH_ENV = "NAPIPATCH_BOT_CRASH_AT"


def crash_point(name: str) -> None:
    if os.environ.get(CRASH_ENV) == name:
        log.warning("fault injection: SIGKILL at %s", name)
        logging.shutdown()
        os.kill(os.getpid(), signal.SIGKILL)
