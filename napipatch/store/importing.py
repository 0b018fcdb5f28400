"""``series import``: an mbox file, a format-patch directory or a Message-ID."""

from __future__ import annotations

import re
from pathlib import Path

from napipatch.errors import NapipatchError
from napipatch.mails import mail as mailmod
from napipatch.mails import mbox, netnext
from napipatch.mails.replies import pack
from napipatch.mails.revisions import parse_date
from napipatch.mails.series import (
    Series,
    assemble,
    check_name,
    check_numbering,
    name_from,
)
from napipatch.store import b4api
from napipatch.store.store import LORE_LINK, Store

MAX_HEADER_SCAN = 64 << 10  # where a refused mail's Subject is looked for
_MSGID = re.compile(r"^<?[^<>\s/@]+@[^<>\s/@]+>?$")


def read_source(source: str, lore_url: str,
                skipped: list[str] | None = None) -> tuple[list[mailmod.PatchMail], str]:
    """The mails of SOURCE and a description of where they came from.

    A reply that cannot be read (a body not in the charset it claims, an
    unknown charset) is left out, with the reason appended to ``skipped``:
    one reviewer's mail client must not make the thread unimportable. A
    patch or cover letter that cannot be read is an error."""
    p = Path(source)
    kind = mbox.input_kind(source)
    skipped = [] if skipped is None else skipped
    if kind == "dir":
        return mbox.read_patch_dir(p), f"directory {source}"
    if kind == "file":
        parts = mailmod.split_mbox(mbox.read_regular(p), str(p))
        if len(parts) > mbox.MAX_MESSAGES:
            raise NapipatchError(p, f"too many messages ({len(parts)}; at most "
                                    f"{mbox.MAX_MESSAGES})")
        return _parse(parts, str(p), skipped), f"mbox {p.name}"
    if _MSGID.match(source) or b4api.archive_of(source):
        msgid = b4api.message_id(source) or source.strip("<>")
        where, raws = b4api.fetch_thread(source, lore_url)
        return _parse([(b"", r) for r in raws], f"<{msgid}>", skipped), f"lore {where} <{msgid}>"
    raise NapipatchError(source, "no such file or directory, not a Message-ID nor a message URL")


def _parse(parts: list[tuple[bytes, bytes]], origin: str,
           skipped: list[str]) -> list[mailmod.PatchMail]:
    mails = []
    for i, (env, raw) in enumerate(parts):
        try:
            mails.append(mailmod.parse_message(raw, f"{origin} message {i + 1}", env))
        except NapipatchError as exc:
            if not _is_reply(raw):
                raise
            skipped.append(f"{exc.subject}: reply left out: {exc.reason}")
    return mails


def _is_reply(raw: bytes) -> bool:
    """The Subject of a mail the parser refused starts with Re: (headers only)."""
    m = re.search(rb"^Subject:[ \t]*(.*)$", raw[:MAX_HEADER_SCAN], re.MULTILINE | re.IGNORECASE)
    return bool(m and re.match(rb"(?i)re\s*:", m.group(1).strip()))


def _announcement(mails: list[mailmod.PatchMail]) -> dict | None:
    """The newest "net-next is OPEN/CLOSED" announcement among ``mails``
    when none of them is a patch (a bad Date: makes it no announcement)."""
    if any(m.subject.is_patch and not m.subject.is_reply for m in mails):
        return None
    found = []
    for m in mails:
        if not netnext.state_of(m.subject.raw):
            continue
        a = netnext.announcement(m.subject.raw, m.date, m.msgid or "",
                                 LORE_LINK.format(msgid=m.msgid) if m.msgid else "")
        if a is None:
            why = parse_date(m.date)[1]
            raise NapipatchError(f"<{m.msgid}>", f"the announcement {m.subject.raw!r} {why}: "
                                 "it cannot be ordered")
        found.append(a)
    return netnext.newest(found)


def import_series(store: Store, source: str, name: str | None, lore_url: str,
                  version: int | None = None, cover_only: bool = False,
                  force: bool = False, skipped: list[str] | None = None,
                  announced: list[dict] | None = None) -> Series | None:
    """Import SOURCE as NAME/vN; replies that cannot be read are left out,
    each with its reason in ``skipped``. SOURCE that is the list's "net-next
    is OPEN/CLOSED" announcement sets net-next's state in the store instead
    (appended to ``announced``, with ``recorded``: False when a newer one
    is there): None is returned."""
    if name is not None:
        check_name(name)
    mails, origin = read_source(source, lore_url, skipped)
    ann = _announcement(mails)
    if ann is not None:
        recorded = store.set_net_next(ann)
        if announced is not None:
            announced.append(dict(ann, recorded=recorded))
        return None
    if cover_only:
        covers = [m for m in mails if m.subject.is_patch and not m.subject.is_reply
                  and m.subject.has_counter and m.subject.index == 0
                  and (version is None or m.subject.version == version)]
        if len(covers) != 1:
            raise NapipatchError(source, f"expected one cover letter, found {len(covers)}")
        c = covers[0]
        check_numbering(source, c.subject.version, 0, 0)
        series = Series(name=name or "", version=c.subject.version, cover=c, patches=[],
                        source=source)
        if not name:
            series.name = name_from(c)
    else:
        series = assemble(mails, source, name=name, version=version)
    check_name(series.name)
    trailers, given = {}, []
    replies = [m for m in mails if m.subject.is_reply]
    if not cover_only and replies:
        # b4 collects Reviewed-by/Acked-by/Tested-by given as replies; it
        # needs Message-IDs to thread them, which format-patch files lack.
        got = b4api.collect([m.raw for m in mails if m.msgid], series.version)
        trailers, given = got.trailers, got.given
    # Every mail of the thread, replies too: a later version posted as a
    # reply to any of them is threaded under this one.
    thread = [m.msgid for m in mails if m.msgid] if replies else []
    # The replies whole (review-followup reads what reviewers wrote), as
    # they came. Without any (patches only, a cover-only import) none is
    # kept: the thread is not known, which the check says.
    kept = None if cover_only or not replies else pack([m.raw for m in replies], source)
    store.add_version(series, trailers=trailers, source=origin, force=force,
                      cover_only=cover_only, given=given, thread=thread, replies=kept)
    return series

