"""Reading patch mails from disk: mboxes, format-patch files and directories.

Everything that enters napipatch from a file or a directory of ``git
format-patch`` files is read here (``read_mbox``, ``read_patch_dir``), each
message parsed by ``mails.mail.parse_message``: a path that is not a
regular file, a file past the bounds, a directory holding something other
than files where patches are, is a one-line error naming the path and the
reason. ``PATCH_FILE`` and ``slug`` are how format-patch names its files.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

from napipatch.errors import NapipatchError
from napipatch.mails.mail import PatchMail, parse_message, split_mbox

# Bounds on what one input may hold: a real series is far below them, and
# past them the parsers would only burn memory and time (mails.mail bounds
# the headers of one message).
MAX_FILE_BYTES = 64 << 20       # one mbox or patch file
MAX_MESSAGES = 5000             # messages in one mbox

_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISSOCK, "a socket"), (stat.S_ISLNK, "a symbolic link"))


def kind_of(mode: int) -> str:
    """What a file of ``mode`` is, in words ("a FIFO (named pipe)")."""
    return next((what for test, what in _KINDS if test(mode)), "not a regular file")


def read_regular(path: Path, limit: int = MAX_FILE_BYTES) -> bytes:
    """The bytes of ``path``, which must be a regular file (a symlink to one is
    followed) of at most ``limit`` bytes. A FIFO is never opened (that would
    block), a device never read (/dev/zero never ends)."""
    try:
        st = os.stat(path)
    except OSError as exc:
        raise NapipatchError(path, _why(exc)) from None
    if not stat.S_ISREG(st.st_mode):
        raise NapipatchError(path, f"is {kind_of(st.st_mode)}, not a regular file")
    if st.st_size > limit:
        raise NapipatchError(path, f"too large ({st.st_size} bytes; at most {limit})")
    try:
        # O_NONBLOCK: should the path be swapped for a FIFO since the stat,
        # open() still returns at once.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        with os.fdopen(fd, "rb") as f:
            if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                raise NapipatchError(path, "is not a regular file")
            data = f.read(limit + 1)
    except OSError as exc:
        raise NapipatchError(path, _why(exc)) from None
    if len(data) > limit:
        raise NapipatchError(path, f"too large (more than {limit} bytes)")
    return data


def input_kind(path: str | Path) -> str | None:
    """"dir" or "file" for a TARGET/SOURCE path, None when nothing is there;
    anything else (a FIFO, a device, a socket, a symlink loop) is a one-line
    error saying what it is."""
    try:
        mode = os.stat(path).st_mode
    except ValueError:  # an embedded NUL: no such path can exist
        return None
    except OSError as exc:
        if exc.errno == 40:  # ELOOP
            raise NapipatchError(path, "symbolic link loop") from None
        return None
    if stat.S_ISDIR(mode):
        return "dir"
    if stat.S_ISREG(mode):
        return "file"
    raise NapipatchError(path, f"is {kind_of(mode)}, not a patch file, mbox or directory")


def _why(exc: OSError) -> str:
    if exc.errno == 40:  # ELOOP
        return "symbolic link loop"
    return exc.strerror or str(exc)


def read_mbox(path: Path) -> list[PatchMail]:
    path = Path(path)
    data = read_regular(path)
    parts = split_mbox(data, str(path))
    if len(parts) > MAX_MESSAGES:
        raise NapipatchError(path, f"too many messages ({len(parts)}; at most {MAX_MESSAGES})")
    return [parse_message(raw, f"{path} message {i + 1}", env)
            for i, (env, raw) in enumerate(parts)]


# git format-patch names: NNNN-slug.patch, or vN-NNNN-slug.patch with -v N.
PATCH_FILE = re.compile(r"(v\d+-)?\d{4}-.*\.patch")


def patch_files(path: Path) -> list[Path]:
    """The ``[vN-]NNNN-*.patch`` files of a format-patch directory (other
    files beside them are left alone), each checked to
    be a regular file (a symlink to one is followed): a FIFO, device,
    directory or symlink loop named like a patch is a one-line error."""
    try:
        names = sorted(p for p in Path(path).iterdir() if PATCH_FILE.fullmatch(p.name))
    except OSError as exc:
        raise NapipatchError(path, _why(exc)) from None
    if len(names) > MAX_MESSAGES:
        raise NapipatchError(path, f"too many patch files ({len(names)}; at most {MAX_MESSAGES})")
    for f in names:
        try:
            mode = os.stat(f).st_mode
        except OSError as exc:
            raise NapipatchError(f, _why(exc)) from None
        if not stat.S_ISREG(mode):
            raise NapipatchError(f, f"is {kind_of(mode)}, not a patch file")
    return names


def read_patch_dir(path: Path) -> list[PatchMail]:
    """Read a directory written by ``git format-patch`` (``[vN-]NNNN-*.patch``)."""
    files = patch_files(path)
    if not files:
        raise NapipatchError(path, "no NNNN-*.patch or vN-NNNN-*.patch files")
    mails = []
    for f in files:
        mails += [parse_message(raw, str(f), env)
                  for env, raw in split_mbox(read_regular(f), str(f))]
    return mails


def slug(title: str) -> str:
    """The file-name part git format-patch derives from a subject."""
    s = re.sub(r"[^A-Za-z0-9._]+", "-", title).strip("-.")
    s = re.sub(r"\.+", ".", s)
    return s[:52].rstrip("-.") or "patch"
