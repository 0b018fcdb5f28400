"""Patch mails: reading mboxes and format-patch files into ``PatchMail``s.

Everything that enters napipatch from a mailing list or a directory of
``git format-patch`` files passes through here, so this is where malformed
input is turned into a one-line error naming the file and the reason.
"""

from __future__ import annotations

import email
import email.policy
import email.utils
import re
from dataclasses import dataclass, field
from email.message import EmailMessage
from pathlib import Path

from napipatch.errors import NapipatchError
from napipatch.mails.subject import Subject, parse_subject

_ENVELOPE = re.compile(rb"^From \S+ .*$", re.M)
_MBOXRD = re.compile(rb"^>(>*From )", re.M)
_TRAILER = re.compile(r"^([A-Z][A-Za-z0-9-]*[A-Za-z0-9]): (.+)$")
BASE_COMMIT = re.compile(r"^base-commit: ([0-9a-f]{7,40})\s*$", re.M)


@dataclass
class PatchMail:
    """One message of a patch series (cover letter or patch).

    Attributes:
        msgid: Message-ID without angle brackets ("" for format-patch files).
        subject: the parsed subject.
        author_name, author_email: From.
        date: the Date header as written.
        in_reply_to, references: threading headers (Message-IDs).
        body: the decoded text body (commit message, ``---``, diffstat, diff).
        raw: the message as bytes, for tools that want the mail itself.
    """

    msgid: str
    subject: Subject
    author_name: str
    author_email: str
    date: str
    body: str
    in_reply_to: str | None = None
    references: list[str] = field(default_factory=list)
    raw: bytes = b""
    origin: str = ""
    commit: str = ""  # from a format-patch envelope ("From <sha> Mon Sep 17 ...")

    @property
    def author(self) -> str:
        return email.utils.formataddr((self.author_name, self.author_email))

    @property
    def message(self) -> str:
        """The commit message: the body up to the ``---`` line."""
        head, _sep, _rest = _split_body(self.body)
        return head

    @property
    def diff(self) -> str:
        """The diff: from the first ``diff --git`` line to the signature."""
        m = re.search(r"^diff --git ", self.body, re.M)
        if not m:
            return ""
        text = self.body[m.start():]
        sig = re.search(r"^-- \n", text, re.M)
        return text[: sig.start()] if sig else text

    @property
    def trailers(self) -> list[tuple[str, str, int]]:
        """``(key, value, line)`` of the trailer block ending the commit message."""
        lines = self.message.rstrip("\n").split("\n")
        out: list[tuple[str, str, int]] = []
        i = len(lines) - 1
        while i >= 0 and lines[i].strip():
            m = _TRAILER.match(lines[i].strip())
            if m:
                out.append((m.group(1), m.group(2).strip(), i + 1))
            elif not lines[i].startswith((" ", "\t", "[")):
                # Not a trailer block after all (plain last paragraph).
                if not out:
                    break
            i -= 1
        return list(reversed(out))

    @property
    def base_commit(self) -> str | None:
        m = BASE_COMMIT.search(self.body)
        return m.group(1) if m else None

    def as_format_patch(self) -> str:
        """The mail as ``git format-patch`` writes it (readable by git am)."""
        hdr = [
            f"From {self.commit or '0' * 40} Mon Sep 17 00:00:00 2001",
            f"From: {self.author}",
            f"Date: {self.date}",
            f"Subject: {self.subject.raw}",
        ]
        if self.msgid:
            hdr.append(f"Message-ID: <{self.msgid}>")
        if self.in_reply_to:
            hdr.append(f"In-Reply-To: <{self.in_reply_to}>")
        if self.references:
            hdr.append("References: " + " ".join(f"<{r}>" for r in self.references))
        hdr += ["MIME-Version: 1.0", "Content-Type: text/plain; charset=UTF-8",
                "Content-Transfer-Encoding: 8bit"]
        body = self.body.lstrip("\n")
        return "\n".join(hdr) + "\n\n" + body + ("" if body.endswith("\n") else "\n")


def _split_body(body: str) -> tuple[str, str, str]:
    m = re.search(r"^---\s*$", body, re.M)
    if not m:
        d = re.search(r"^diff --git ", body, re.M)
        if d:
            return body[: d.start()].strip("\n") + "\n", "", body[d.start():]
        return body.strip("\n") + "\n", "", ""
    return body[: m.start()].strip("\n") + "\n", "---", body[m.end():]


def _clean_msgid(value: str | None) -> str | None:
    if not value:
        return None
    m = re.search(r"<([^<>\s]+)>", value)
    return m.group(1) if m else value.strip().strip("<>") or None


def _decode_header(value) -> str:
    # email.policy.default already decodes RFC 2047; collapse folding.
    return " ".join(str(value or "").split())


def parse_message(data: bytes, origin: str, envelope: bytes = b"") -> PatchMail:
    """Parse one RFC 822 message; ``origin`` names it in errors."""
    try:
        msg: EmailMessage = email.message_from_bytes(data, policy=email.policy.default)
        subject = _decode_header(msg["Subject"])
        frm = _decode_header(msg["From"])
    except Exception as exc:  # the email package raises many types on junk
        raise NapipatchError(origin, f"malformed message headers ({exc})") from None
    if not msg["From"] or msg["Subject"] is None:
        raise NapipatchError(origin, "not a mail: no From or Subject header")
    msgid = _clean_msgid(msg["Message-ID"]) or ""
    where = f"{origin} <{msgid}>" if msgid else origin
    name, addr = email.utils.parseaddr(frm)
    part = msg.get_body(preferencelist=("plain",)) if msg.is_multipart() else msg
    if part is None:
        raise NapipatchError(where, "no text/plain body")
    payload = part.get_payload(decode=True) or b""
    charset = (part.get_content_charset() or "utf-8").lower()
    if charset in ("us-ascii", "ascii"):
        charset = "utf-8"  # git writes 8bit UTF-8 and often labels it us-ascii
    try:
        body = payload.decode(charset)
    except LookupError:
        raise NapipatchError(where, f"unknown charset {charset!r}") from None
    except UnicodeDecodeError as exc:
        raise NapipatchError(where, f"body is not valid {charset} (byte {exc.start})") from None
    body = body.replace("\r\n", "\n")
    refs = re.findall(r"<([^<>\s]+)>", str(msg["References"] or ""))
    return PatchMail(
        msgid=msgid,
        subject=parse_subject(subject),
        author_name=name,
        author_email=addr,
        date=_decode_header(msg["Date"]),
        body=body,
        in_reply_to=_clean_msgid(msg["In-Reply-To"]),
        references=refs,
        raw=data,
        origin=origin,
        commit=(m.group(1).decode() if (m := re.match(rb"^From ([0-9a-f]{40}) ", envelope)) else ""),
    )


def split_mbox(data: bytes, origin: str) -> list[tuple[bytes, bytes]]:
    """Split an mbox (mboxo or mboxrd) into (envelope line, raw message)."""
    if not data.strip():
        raise NapipatchError(origin, "empty file")
    if b"\x00" in data[:4096]:
        raise NapipatchError(origin, "not an mbox: binary data")
    starts = [m.start() for m in _ENVELOPE.finditer(data)
              if m.start() == 0 or data[m.start() - 1:m.start()] == b"\n"]
    if not starts or starts[0] != 0:
        # A single message without an envelope line is fine if it has headers.
        if re.match(rb"^(From|Subject|Message-ID|Return-Path|Received|Date): ", data, re.I):
            return [(b"", data)]
        raise NapipatchError(origin, "not an mbox: does not start with a 'From ' line")
    parts = []
    for i, s in enumerate(starts):
        e = starts[i + 1] if i + 1 < len(starts) else len(data)
        env, _, chunk = data[s:e].partition(b"\n")
        parts.append((env, _MBOXRD.sub(rb"\1", chunk)))
    return parts


def read_mbox(path: Path) -> list[PatchMail]:
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise NapipatchError(path, exc.strerror or str(exc)) from None
    return [parse_message(raw, f"{path} message {i + 1}", env)
            for i, (env, raw) in enumerate(split_mbox(data, str(path)))]


# git format-patch names: NNNN-slug.patch, or vN-NNNN-slug.patch with -v N.
PATCH_FILE = re.compile(r"^(v\d+-)?\d{4}-.*\.patch$")


def read_patch_dir(path: Path) -> list[PatchMail]:
    """Read a directory written by ``git format-patch`` (``[vN-]NNNN-*.patch``);
    other files beside them are left alone."""
    files = sorted(p for p in Path(path).iterdir() if PATCH_FILE.match(p.name))
    if not files:
        raise NapipatchError(path, "no NNNN-*.patch or vN-NNNN-*.patch files")
    mails = []
    for f in files:
        mails += [parse_message(raw, str(f), env) for env, raw in split_mbox(f.read_bytes(), str(f))]
    return mails


def slug(title: str) -> str:
    """The file-name part git format-patch derives from a subject."""
    s = re.sub(r"[^A-Za-z0-9._]+", "-", title).strip("-.")
    s = re.sub(r"\.+", ".", s)
    return s[:52].rstrip("-.") or "patch"
