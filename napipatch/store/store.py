"""The series store: ``series/NAME/vN/*.patch`` and ``series/NAME/series.toml``.

Each version is a directory of ``git format-patch`` files (``0000-cover-
letter.patch``, ``NNNN-slug.patch``) that git am reads as they are; the
record of every version (Message-IDs, base, date, changelog, trailers
collected from replies) lives in ``series.toml``. A version is written to a
temporary directory and renamed into place, so an error leaves nothing.

Several processes may use one store at once (an import, a send recording
its Message-IDs, a check reading): series.toml is only ever changed inside
``updating`` -- read, changed and written back (to a temporary file renamed
over it) under the series' lock file -- so no update is lost and no reader
sees half a file.
"""

from __future__ import annotations

import re
import shutil
import tomllib
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import tomli_w

from napipatch import fileio
from napipatch.errors import NapipatchError
from napipatch.mails import mbox
from napipatch.mails.replies import MAX_BYTES as MAX_REPLY_BYTES
from napipatch.mails.revisions import change_id
from napipatch.mails.series import (
    Inputs,
    Series,
    assemble,
    changelog_of,
    check_name,
    valid_name,
)

LORE_LINK = "https://lore.kernel.org/all/{msgid}/"
RECORD_LIMIT = 16 << 20  # series.toml
NET_NEXT = "net-next.toml"  # the newest "net-next is OPEN/CLOSED" imported
LOCK = ".series.toml.lock"  # beside series.toml; removed on release
REPLIES = "replies.mbox"  # the thread's replies, beside the patches
LOCK_WAIT = 120.0  # seconds: an update holds the lock for milliseconds


@dataclass
class Store:
    root: Path

    def path(self, name: str) -> Path:
        return self.root / check_name(name)

    def names(self) -> list[str]:
        if not self.root.is_dir():
            return []
        return sorted(p.name for p in self.root.iterdir()
                      if valid_name(p.name) and (p / "series.toml").is_file())

    def record(self, name: str) -> dict:
        f = self.path(name) / "series.toml"
        if not f.is_file():
            raise NapipatchError(name, f"no such series in {self.root}")
        try:
            return tomllib.loads(mbox.read_regular(f, RECORD_LIMIT).decode())
        except UnicodeDecodeError:
            raise NapipatchError(f, "not valid UTF-8") from None
        except tomllib.TOMLDecodeError as exc:
            raise NapipatchError(f, f"not valid TOML ({exc})") from None

    def net_next(self) -> dict | None:
        """The newest "net-next is OPEN/CLOSED" announcement imported
        (``napipatch.mails.netnext``), or None; an unreadable file is an error."""
        f = self.root / NET_NEXT
        if not f.is_file():
            return None
        try:
            got = tomllib.loads(mbox.read_regular(f, RECORD_LIMIT).decode())
        except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            raise NapipatchError(f, f"not valid TOML ({exc})") from None
        return got.get("announcement") or None

    def set_net_next(self, ann: dict) -> bool:
        """Record announcement ``ann`` unless a newer one is recorded; True: recorded."""
        self.root.mkdir(parents=True, exist_ok=True)
        with fileio.locked(self.root / f".{NET_NEXT}.lock", timeout=LOCK_WAIT):
            old = self.net_next()
            if old and old.get("date", "") > ann["date"]:
                return False
            fileio.atomic_write(self.root / NET_NEXT, tomli_w.dumps({"announcement": ann}),
                                fsync=True)
        return True

    def versions(self, name: str) -> list[int]:
        return sorted(int(k[1:]) for k in self.record(name).get("versions", {}))

    @contextmanager
    def updating(self, name: str) -> Iterator[dict]:
        """``name``'s record (a new one if there is none) for the block to
        change; written back when the block ends without an exception. The
        series' lock is held throughout, so a concurrent update waits."""
        d = self.path(name)
        d.mkdir(parents=True, exist_ok=True)
        with fileio.locked(d / LOCK, timeout=LOCK_WAIT):
            rec = self.record(name) if (d / "series.toml").is_file() \
                else {"name": check_name(name)}
            yield rec
            fileio.atomic_write(d / "series.toml", tomli_w.dumps(rec), fsync=True)

    def load(self, spec: str) -> Series:
        """``NAME`` (newest version) or ``NAME@vN``."""
        name, _, ver = spec.partition("@")
        vs = self.versions(name)
        if ver:
            m = re.fullmatch(r"v?(\d+)", ver)
            if not m:
                raise NapipatchError(spec, "bad version: use NAME@vN")
            v = int(m.group(1))
            if v not in vs:
                raise NapipatchError(spec, f"no v{v}; stored: {', '.join(f'v{x}' for x in vs)}")
        else:
            if not vs:
                raise NapipatchError(spec, "has no versions")
            v = vs[-1]
        vdir = self.path(name) / f"v{v}"
        rec = self.record(name)
        info = rec["versions"][f"v{v}"]
        mails = mbox.read_patch_dir(vdir)
        if info.get("cover-only"):
            s = Series(name=name, version=v, cover=mails[0], patches=[], source=str(vdir))
        else:
            s = assemble(mails, str(vdir), name=name, version=v)
        # Who ``napipatch send`` would address it to (cc-maintainers reads it).
        s.inputs = Inputs(record=info, recipients={"to": rec.get("to"), "cc": rec.get("cc")},
                          base_commit=info.get("base-commit"))
        return s

    def replies(self, name: str, version: int) -> bytes | None:
        """vN's ``replies.mbox`` as kept by ``series import``, or None when
        the version was stored without its thread's replies."""
        f = self.path(name) / f"v{version}" / REPLIES
        if not f.is_file():
            return None
        return mbox.read_regular(f, MAX_REPLY_BYTES)

    def add_version(self, series: Series, trailers: dict[int, list[str]] | None = None,
                    source: str = "", force: bool = False, cover_only: bool = False,
                    exported_from: str | None = None, files: dict[str, str] | None = None,
                    given: list[dict] | None = None, thread: list[str] | None = None,
                    replies: bytes | None = None) -> Path:
        """Write ``series`` as ``NAME/vN`` and record it in series.toml.

        ``given``: each review trailer from a reply with who gave it
        (``b4api.Collected.given``); ``thread``: the Message-IDs of every
        mail of the imported thread, replies included (what a later
        version must not be threaded under); ``replies``: those replies as
        sent (``mails.replies.pack``), kept as ``vN/replies.mbox``."""
        name = check_name(series.name)
        if files is None:
            files = {}
            if series.cover:
                files["0000-cover-letter.patch"] = series.cover.as_format_patch()
            for i, p in enumerate(series.patches, 1):
                files[f"{i:04d}-{mbox.slug(p.subject.title)}.patch"] = p.as_format_patch()
        info = self._info(series, trailers, source, cover_only, exported_from)
        if given:
            info["review"] = given
        if thread:
            info["thread-ids"] = thread
        if replies is not None:
            files = {**files, REPLIES: replies}
        vkey = f"v{series.version}"
        vdir = self.path(name) / vkey
        # Under the lock from the existence test to the record: two imports
        # of one version cannot both pass the test.
        with self.updating(name) as rec:
            if vdir.exists() and not force:
                raise NapipatchError(f"{name}@{vkey}", "already in the store (use --force to replace)")
            _write_version(vdir, files)
            if series.tree:
                rec.setdefault("tree", series.tree)
            rec.setdefault("versions", {})[vkey] = info
            rec["versions"] = dict(sorted(rec["versions"].items(), key=lambda kv: int(kv[0][1:])))
        return vdir

    @staticmethod
    def _info(series: Series, trailers: dict[int, list[str]] | None, source: str,
              cover_only: bool, exported_from: str | None) -> dict:
        """The series.toml table of one version."""
        head = series.head
        info = {
            "version": series.version,
            "subject": head.subject.raw,
            "date": head.date,
            "author": head.author,
            "patches": len(series.patches),
        }
        if series.cover and series.cover.msgid:
            info["cover-message-id"] = series.cover.msgid
            info["lore"] = LORE_LINK.format(msgid=series.cover.msgid)
        mids = [p.msgid for p in series.patches if p.msgid]
        if mids:
            info["message-ids"] = mids
        if series.base_commit:
            info["base-commit"] = series.base_commit
        if series.cover and (cid := change_id(series.cover.body)):
            info["change-id"] = cid
        cl = changelog_of(series.cover.body) if series.cover else ""
        if cl:
            info["changelog"] = cl
        if trailers:
            info["trailers"] = {str(k): v for k, v in sorted(trailers.items())}
        if source:
            info["source"] = source
        if cover_only:
            info["cover-only"] = True
        if exported_from:
            info["exported-from"] = exported_from
        return info


def _write_version(vdir: Path, files: dict[str, str | bytes]) -> None:
    """``files`` as the directory ``vdir``, all or nothing: written beside it,
    then renamed into place (a version replaced with --force is swapped out
    and deleted after)."""
    tmp = fileio.temp_dir(vdir)
    try:
        for fname, text in files.items():
            if isinstance(text, bytes):
                (tmp / fname).write_bytes(text)
            else:
                (tmp / fname).write_text(text)
        fileio.replace_dir(tmp, vdir)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
