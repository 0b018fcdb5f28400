"""The replies of a series' thread: kept whole, read back, threaded to patches.

``series import`` (and the bot) keep every reply to the cover letter and
to each patch, as the bytes that came, in ``vN/replies.mbox`` beside the
patches (``pack`` / ``unpack``), bounded in number and size. ``thread``
says which patch (0: the cover letter) each reply is about, following
In-Reply-To and References through replies to replies.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from napipatch.errors import NapipatchError
from napipatch.mails.mail import PatchMail, parse_message, split_mbox

FILE = "replies.mbox"
MAX_REPLIES = 2000
MAX_BYTES = 16 << 20
_ENVELOPE = b"From mboxrd@z Thu Jan  1 00:00:00 1970\n"


def pack(raws: list[bytes], where: str) -> bytes:
    """The replies as one mboxrd file; too many or too large is a one-line
    error naming ``where``."""
    if len(raws) > MAX_REPLIES:
        raise NapipatchError(where, f"{len(raws)} replies; napipatch keeps at most {MAX_REPLIES}")
    out = b"".join(_ENVELOPE + re.sub(rb"(?m)^(>*From )", rb">\1", r.replace(b"\r\n", b"\n"))
                   .rstrip(b"\n") + b"\n\n" for r in raws)
    if len(out) > MAX_BYTES:
        raise NapipatchError(where, f"the replies hold {len(out)} bytes; napipatch keeps at "
                                    f"most {MAX_BYTES >> 20} MiB")
    return out


def unpack(data: bytes, where: str, skipped: list[str]) -> list[PatchMail]:
    """The replies of a ``replies.mbox``; one that cannot be read is left
    out with its reason in ``skipped``."""
    out = []
    for i, (env, raw) in enumerate(split_mbox(data, where)[:MAX_REPLIES]):
        try:
            out.append(parse_message(raw, f"{where} message {i + 1}", env))
        except NapipatchError as exc:
            skipped.append(f"{exc.subject}: left out: {exc.reason}")
    return out


@dataclass
class Thread:
    """Replies threaded under a version: ``patch[msgid]`` is the patch a
    reply is about (0: the cover letter), ``parents[msgid]`` the mails it
    answers, nearest first."""
    patch: dict[str, int] = field(default_factory=dict)
    parents: dict[str, list[str]] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)


def thread(cover: str, patches: list[str], replies: list[PatchMail]) -> Thread:
    """Each reply with the patch it is about; a reply threaded under no
    mail of the version is left out, with why, in ``skipped``."""
    known = {m: n for n, m in enumerate([cover, *patches]) if m}
    t = Thread()
    todo = [r for r in replies if r.msgid]
    t.skipped += [f"{r.origin}: left out: it has no Message-ID" for r in replies if not r.msgid]
    for _ in range(len(todo)):  # replies may come before what they answer
        left = []
        for r in todo:
            up = list(dict.fromkeys(i for i in [r.in_reply_to, *reversed(r.references)]
                                    if i and i != r.msgid))
            hit = next((i for i in up if i in known), None)
            if hit is None:
                left.append(r)
                continue
            known[r.msgid] = known[hit]
            t.patch[r.msgid] = known[hit]
            t.parents[r.msgid] = up
        if len(left) == len(todo):
            break
        todo = left
    t.skipped += [f"<{r.msgid}>: left out: a reply to no mail of this version" for r in todo]
    return t
