"""Every call napipatch makes into b4, in one place.

b4's library functions are not a stable API (signatures and return types
changed between 0.12, 0.14 and 0.16), so b4 is pinned in pyproject.toml
and nothing else imports it; tests/test_b4api.py pins the behaviour we use.
"""

from __future__ import annotations

import email
import email.policy
import argparse
import contextlib
import logging
import os
from dataclasses import dataclass
from pathlib import Path

from napipatch.errors import NapipatchError

_POLICY = email.policy.EmailPolicy(utf8=True)


def _b4():
    import b4  # imported lazily: it reads git config and sets up logging

    if not getattr(_b4, "ready", False):
        b4._setup_main_config()
        logging.getLogger("b4").setLevel(logging.CRITICAL)
        _b4.ready = True
    return b4


def version() -> str:
    return _b4().__VERSION__


def lore_subject(raw: str) -> dict:
    """b4's reading of a subject (``b4.LoreSubject``), for comparing rules."""
    ls = _b4().LoreSubject(raw)
    return {"is_reply": ls.reply, "is_patch": ls.patch, "rfc": ls.rfc, "resend": ls.resend,
            "version": ls.revision, "index": ls.counter, "total": ls.expected,
            "prefixes": list(ls.prefixes), "title": ls.subject}


def fetch_thread(msgid: str, lore_url: str) -> list[bytes]:
    """The whole thread of ``msgid`` from the public-inbox at ``lore_url``."""
    b4 = _b4()
    b4.MAIN_CONFIG["midmask"] = lore_url.rstrip("/") + "/%s"
    b4.LORENODE = None  # rebuilt from midmask on next use
    msgs = b4.get_pi_thread_by_msgid(msgid.strip("<>"), nocache=True, quiet=True)
    if not msgs:
        raise NapipatchError(f"<{msgid.strip('<>')}>", f"no such message at {lore_url}")
    return [m.as_bytes(policy=_POLICY) for m in msgs]


@dataclass
class Collected:
    """What b4 finds in a thread for one version: trailers from replies."""

    revision: int
    base_commit: str | None
    trailers: dict[int, list[str]]  # patch number -> ["Reviewed-by: ...", ...]


def collect(raw_messages: list[bytes], revision: int) -> Collected:
    """Run b4's series assembly to pick up review trailers sent as replies."""
    b4 = _b4()
    lmbx = b4.LoreMailbox()
    for raw in raw_messages:
        lmbx.add_message(email.message_from_bytes(raw, policy=_POLICY))
    lser = lmbx.get_series(revision, codereview_trailers=False)
    trailers: dict[int, list[str]] = {}
    if lser is None:
        return Collected(revision, None, trailers)
    for i, lmsg in enumerate(lser.patches):
        if lmsg is None:
            continue
        got = []
        for t in lmsg.followup_trailers:
            got.append(t.as_string() if hasattr(t, "as_string") else f"{t[0]}: {t[1]}")
        if got:
            trailers[i] = got
    return Collected(revision, lser.base_commit, trailers)


@contextlib.contextmanager
def _in(repo: Path):
    """b4's prep functions read git from the current directory."""
    old = os.getcwd()
    os.chdir(repo)
    try:
        yield
    finally:
        os.chdir(old)


def prep_range(repo: Path) -> tuple[str, str] | None:
    """``(base, START..END)`` of the b4 prep series on the current branch of
    ``repo`` under any of b4's cover-letter strategies (commit, tip-commit,
    branch-description), or None when the branch is not a b4 prep branch."""
    b4 = _b4()
    import b4.ez as ez  # the prep half of b4, only when asked about a branch

    with _in(repo):
        # The branch's cover strategy and the committer (the cover commit's
        # author) come from this repository's config, as for ``b4 prep``.
        b4._setup_main_config()
        b4._setup_user_config(argparse.Namespace(config=None))
        try:
            if not ez.is_prep_branch():
                return None
            base, start, end = ez.get_series_range()
        except (SystemExit, RuntimeError, KeyError, ValueError):
            return None
    return base, f"{start}..{end}"

