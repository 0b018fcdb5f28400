"""Every call napipatch makes into b4, in one place.

b4's library functions are not a stable API (signatures and return types
changed between 0.12, 0.14 and 0.16), so b4 is pinned in pyproject.toml
and nothing else imports it; tests/test_subject.py (subjects read as b4
reads them) and tests/test_b4_workflow.py (b4 prep, lore import) pin the
behaviour we use.
"""

from __future__ import annotations

import argparse
import contextlib
import email
import email.policy
import logging
import os
import re
from dataclasses import dataclass, field
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


class _Said(logging.Handler):
    """b4's own words while it fetches: shown when it finds nothing."""

    def __init__(self):
        super().__init__(logging.WARNING)
        self.lines: list[str] = []

    def emit(self, record):
        self.lines.append(record.getMessage().removeprefix("CRITICAL: "))


def _user_midmask(b4) -> bool:
    """The user set b4.midmask (git config): b4 looks there, not in lore-url."""
    if not hasattr(_user_midmask, "set"):
        _user_midmask.set = b4.MAIN_CONFIG.get("midmask") != b4.DEFAULT_CONFIG.get("midmask")
    return _user_midmask.set


def message_id(source: str) -> str | None:
    """The Message-ID in SOURCE: a bare or <bracketed> id, or a public-inbox
    URL (``https://lore.kernel.org/netdev/<msgid>/``, ``.../T/``), read the
    way ``b4 am URL`` reads it; None when there is none."""
    b4 = _b4()
    midmask = b4.MAIN_CONFIG.get("midmask")
    msgid = b4.parse_msgid(source)
    b4.MAIN_CONFIG["midmask"] = midmask  # parse_msgid may point it at the URL's host
    return msgid if "@" in msgid and not any(c in msgid for c in "<>/ \t") else None


def archive_of(source: str) -> str | None:
    """The public-inbox a message URL names (``https://host/list``), or None."""
    m = re.match(r"^(https?://[^/]+/[^/]+)/[^/]+@[^/]+", source.strip(), re.I)
    return m.group(1) if m else None


def fetch_thread(source: str, lore_url: str) -> tuple[str, list[bytes]]:
    """The archive asked and the whole thread of SOURCE (a Message-ID or a
    message URL), from the archive the URL names, else b4.midmask when the
    user set it, else ``lore_url``. b4's own error is part of the message
    when it fails."""
    b4 = _b4()
    msgid = message_id(source)
    if msgid is None:
        raise NapipatchError(source, "not a Message-ID or a message URL")
    where = archive_of(source) or (None if _user_midmask(b4) else lore_url.rstrip("/"))
    if where:
        b4.MAIN_CONFIG["midmask"] = where + "/%s"
    where = str(b4.MAIN_CONFIG["midmask"]).replace("/%s", "")
    b4.LORENODE = None  # rebuilt from midmask on next use
    said = _Said()
    log = logging.getLogger("b4")
    log.addHandler(said)
    try:
        msgs = b4.get_pi_thread_by_msgid(msgid, nocache=True, quiet=False)
    finally:
        log.removeHandler(said)
    if not msgs:
        why = f" (b4: {'; '.join(said.lines)})" if said.lines else ""
        # The archive was never reached (DNS, refused, timeout), or it answered.
        what = "could not reach" if "All hosts failed" in why else "no such message at"
        raise NapipatchError(f"<{msgid}>", f"{what} {where}{why}")
    return where, [m.as_bytes(policy=_POLICY) for m in msgs]


@dataclass
class Collected:
    """What b4 finds in a thread for one version: trailers from replies,
    and (``given``) who gave each: the From: and Message-ID of the reply
    it was written in. Patch 0 is the cover letter (a trailer given on it
    is given on every patch)."""

    revision: int
    base_commit: str | None
    trailers: dict[int, list[str]]  # patch number -> ["Reviewed-by: ...", ...]
    given: list[dict] = field(default_factory=list)


def collect(raw_messages: list[bytes], revision: int) -> Collected:
    """Run b4's series assembly to pick up review trailers sent as replies."""
    b4 = _b4()
    lmbx = b4.LoreMailbox()
    for raw in raw_messages:
        lmbx.add_message(email.message_from_bytes(raw, policy=_POLICY))
    lser = lmbx.get_series(revision, codereview_trailers=False)
    trailers: dict[int, list[str]] = {}
    given: list[dict] = []
    if lser is None:
        return Collected(revision, None, trailers)
    for i, lmsg in enumerate(lser.patches):
        if lmsg is None:
            continue
        got = []
        for t in lmsg.followup_trailers:
            text = t.as_string() if hasattr(t, "as_string") else f"{t[0]}: {t[1]}"
            got.append(text)
            given.append(_given(i, text, getattr(t, "lmsg", None)))
        if got:
            trailers[i] = got
    return Collected(revision, lser.base_commit, trailers, given)


def _given(patch: int, trailer: str, reply) -> dict:
    """One trailer and who gave it: the reply's sender and Message-ID (b4
    keeps the message a trailer was read from)."""
    out = {"patch": patch, "trailer": trailer}
    if reply is not None:
        name, addr = getattr(reply, "fromname", ""), getattr(reply, "fromemail", "")
        out["by"] = f"{name} <{addr}>" if name else addr
        if getattr(reply, "msgid", ""):
            out["message-id"] = reply.msgid
    return out


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



def prep_messages(repo: Path) -> tuple[str, str, list[bytes]] | None:
    """The b4 prep series of the current branch of ``repo`` as b4 send
    would mail it: ``(base, START..END, [cover, patch 1, ...])`` (the cover
    letter as the user wrote it, with b4's change-id and base-commit), or
    None when the branch is not a b4 prep branch."""
    rng = prep_range(repo)
    if rng is None:
        return None
    b4 = _b4()
    import b4.ez as ez

    with _in(repo):
        try:
            _tos, _ccs, _tag, patches = ez.get_prep_branch_as_patches(movefrom=True)
        except (SystemExit, RuntimeError, KeyError, ValueError) as exc:
            raise NapipatchError(repo, f"b4 could not make the prep series' mails ({exc})") \
                from None
    return (*rng, [b4.LoreMessage.get_msg_as_bytes(msg) for _commit, msg in patches])
