"""``series import``: an mbox file, a format-patch directory or a Message-ID."""

from __future__ import annotations

import re
from pathlib import Path

from napipatch.errors import NapipatchError
from napipatch.mails import mail as mailmod
from napipatch.mails import mbox
from napipatch.mails.series import (
    Series,
    assemble,
    check_name,
    check_numbering,
    name_from,
)
from napipatch.store import b4api
from napipatch.store.store import Store

_MSGID = re.compile(r"^<?[^<>\s/@]+@[^<>\s/@]+>?$")


def read_source(source: str, lore_url: str) -> tuple[list[mailmod.PatchMail], str]:
    """The mails of SOURCE and a description of where they came from."""
    p = Path(source)
    kind = mbox.input_kind(source)
    if kind == "dir":
        return mbox.read_patch_dir(p), f"directory {source}"
    if kind == "file":
        return mbox.read_mbox(p), f"mbox {p.name}"
    if _MSGID.match(source) or b4api.archive_of(source):
        msgid = b4api.message_id(source) or source.strip("<>")
        where, raws = b4api.fetch_thread(source, lore_url)
        mails = [mailmod.parse_message(r, f"<{msgid}> message {i + 1}")
                 for i, r in enumerate(raws)]
        return mails, f"lore {where} <{msgid}>"
    raise NapipatchError(source, "no such file or directory, not a Message-ID nor a message URL")


def import_series(store: Store, source: str, name: str | None, lore_url: str,
                  version: int | None = None, cover_only: bool = False,
                  force: bool = False) -> Series:
    if name is not None:
        check_name(name)
    mails, origin = read_source(source, lore_url)
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
    trailers = {}
    replies = [m for m in mails if m.subject.is_reply]
    if not cover_only and replies:
        # b4 collects Reviewed-by/Acked-by/Tested-by given as replies; it
        # needs Message-IDs to thread them, which format-patch files lack.
        trailers = b4api.collect([m.raw for m in mails if m.msgid], series.version).trailers
    store.add_version(series, trailers=trailers, source=origin, force=force,
                      cover_only=cover_only)
    return series

