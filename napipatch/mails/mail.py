"""Patch mails: the ``PatchMail`` model and its wire form.

A ``PatchMail`` is one message of a series (cover letter or patch): its
headers, its body and what a check reads from them (commit message, diff,
trailers, base-commit). ``parse_message`` makes one from the bytes of one
RFC 822 message and ``split_mbox`` splits an mbox's bytes into messages:
every mail that enters napipatch passes through them, so this is where a
malformed message is turned into a one-line error naming where it came
from. Reading files and directories from disk (bounds, file kinds,
format-patch directories) is ``mails.mbox``.
"""

from __future__ import annotations

import email
import email.policy
import email.utils
import re
from dataclasses import dataclass, field
from email.message import EmailMessage

from napipatch.errors import NapipatchError
from napipatch.mails.addresses import header, one_line, readable
from napipatch.mails.subject import Subject, parse_subject

_ENVELOPE = re.compile(rb"^From \S+ .*$", re.M)
_MBOXRD = re.compile(rb"^>(>*From )", re.M)
_TRAILER = re.compile(r"^([A-Z][A-Za-z0-9-]*[A-Za-z0-9]): (.+)$")
# In-body headers: the first lines of the body, then a blank line (git am).
_INBODY_FROM = re.compile(r"^(?:(?:Subject|Date): .*\n)*From: (.+)\n(?:(?:From|Subject|Date): .*\n)*\n")
_ATTESTATION = re.compile(r"^X-Developer-(?:Signature|Key):.*(?:\r?\n[ \t].*)*", re.M | re.I)
BASE_COMMIT = re.compile(r"^base-commit: ([0-9a-f]{7,40})\s*$", re.M)

# Bounds on what one message may hold: a real series is far below them, and
# past them the parser would only burn memory and time (mails.mbox bounds
# the files and the number of messages).
MAX_HEADER_BYTES = 256 << 10    # the header block of one message
MAX_HEADER_FIELD = 8192         # one Subject, From, Message-ID ... (unfolded)


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
        to, cc, sender: the To, Cc and Sender headers as written ("" when
            absent): who the mail was addressed to, for cc_maintainers.
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
    to: str = ""
    cc: str = ""
    sender: str = ""

    @property
    def author(self) -> str:
        """From: as a person reads it (never encoded, never raising)."""
        return readable(self.author_name, self.author_email)

    @property
    def addressed(self) -> bool:
        """The mail has a To or a Cc: someone decided where it goes."""
        return bool(self.to.strip() or self.cc.strip())

    @property
    def commit_author(self) -> tuple[str, str]:
        """(name, address) of the commit's author: the in-body ``From:`` that
        git send-email writes first in the body when the sender is not the
        author (git am takes the author from it), else the From header."""
        m = _INBODY_FROM.match(self.body.lstrip("\n"))
        if m:
            name, addr = email.utils.parseaddr(m.group(1))
            if addr:
                return name, addr
        return self.author_name, self.author_email

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
    def attestation(self) -> str:
        """The patatt headers (X-Developer-Signature, X-Developer-Key) as sent,
        folded lines joined; "" when unsigned. The ``signed`` check reads
        them, so they are part of a result's cache key."""
        end = re.search(rb"\r?\n\r?\n", self.raw)
        head = (self.raw[: end.start()] if end else self.raw).decode("utf-8", "replace")
        return "\n".join(m.group(0) for m in _ATTESTATION.finditer(head))

    @property
    def base_commit(self) -> str | None:
        m = BASE_COMMIT.search(self.body)
        return m.group(1) if m else None

    def as_format_patch(self) -> str:
        """The mail as ``git format-patch`` writes it (readable by git am)."""
        hdr = [
            f"From {self.commit or '0' * 40} Mon Sep 17 00:00:00 2001",
            # git mailinfo decodes an encoded name and takes a raw UTF-8 address.
            f"From: {header(self.author_name, self.author_email) or self.author}",
            f"Date: {self.date}",
            f"Subject: {self.subject.raw}",
        ]
        # Where it was sent is part of the mail (cc-maintainers judges it);
        # folded or hostile values are made one line, never new headers.
        for name, value in (("To", self.to), ("Cc", self.cc)):
            if value := one_line(value, None):
                hdr.append(f"{name}: {value}")
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


def clean_msgid(value: str | None) -> str | None:
    """The Message-ID in a header value, without its angle brackets (None: none).

    Public: the bot reads Message-ID and In-Reply-To of every archived mail
    with it, so both agree with the parser on what an id is."""
    if not value:
        return None
    m = re.search(r"<([^<>\s]+)>", value)
    return m.group(1) if m else value.strip().strip("<>") or None


def _decode_header(value) -> str:
    # email.policy.default already decodes RFC 2047; collapse folding.
    return " ".join(str(value or "").split())


def _text(value: str) -> str:
    """A header value as clean text: undecodable bytes (surrogates) become
    U+FFFD, so the address helpers and the report writers never choke on them."""
    return value.encode("utf-8", "replace").decode("utf-8") if value else ""


def _headers(data: bytes, origin: str) -> tuple[EmailMessage, dict[str, str]]:
    """The message and its headers as text; any parser failure, or a header
    past the bounds, is a one-line error naming ``origin``."""
    end = data.find(b"\n\n")
    if (end if end >= 0 else len(data)) > MAX_HEADER_BYTES:
        raise NapipatchError(origin, f"header block too large (over {MAX_HEADER_BYTES} bytes)")
    try:
        msg: EmailMessage = email.message_from_bytes(data, policy=email.policy.default)
        hdrs = {k: _decode_header(msg[k]) if msg[k] is not None else None
                for k in ("Subject", "From", "Message-ID", "Date", "In-Reply-To", "References",
                          "Sender")}
        # A mail may carry several To or Cc lines: all of them count.
        for k in ("To", "Cc"):
            got = msg.get_all(k) or []
            hdrs[k] = ", ".join(_decode_header(v) for v in got) if got else None
    except Exception as exc:  # noqa: BLE001 - the email package raises many types on junk
        raise NapipatchError(origin, f"malformed message headers ({type(exc).__name__}: "
                                     f"{str(exc)[:200]})") from None
    for k, v in hdrs.items():
        # Address lists may be long (a tree-wide change Cc's hundreds); the
        # header block's bound holds them.
        if v is not None and len(v) > MAX_HEADER_FIELD and k not in ("To", "Cc"):
            raise NapipatchError(origin, f"{k} header too long ({len(v)} characters; "
                                         f"at most {MAX_HEADER_FIELD})")
    return msg, {k: _text(v) if v is not None else None for k, v in hdrs.items()}


def parse_message(data: bytes, origin: str, envelope: bytes = b"") -> PatchMail:
    """Parse one RFC 822 message; ``origin`` names it in errors."""
    msg, hdrs = _headers(data, origin)
    subject, frm = hdrs["Subject"], hdrs["From"]
    if not frm or subject is None:
        raise NapipatchError(origin, "not a mail: no From or Subject header")
    msgid = clean_msgid(hdrs["Message-ID"]) or ""
    where = f"{origin} <{msgid}>" if msgid else origin
    name, addr = email.utils.parseaddr(frm)
    try:
        part = msg.get_body(preferencelist=("plain",)) if msg.is_multipart() else msg
        payload = (part.get_payload(decode=True) or b"") if part is not None else b""
        charset = ((part.get_content_charset() if part is not None else None)
                   or "utf-8").lower()
    except Exception as exc:  # noqa: BLE001 - a broken MIME structure
        raise NapipatchError(where, f"malformed MIME body ({type(exc).__name__})") from None
    if part is None:
        raise NapipatchError(where, "no text/plain body")
    if isinstance(payload, str):  # get_payload(decode=True) of a multipart part
        raise NapipatchError(where, "no text/plain body")
    if charset in ("us-ascii", "ascii"):
        charset = "utf-8"  # git writes 8bit UTF-8 and often labels it us-ascii
    try:
        body = payload.decode(charset)
    except LookupError:
        raise NapipatchError(where, f"unknown charset {charset!r}") from None
    except UnicodeDecodeError as exc:
        raise NapipatchError(where, f"body is not valid {charset} (byte {exc.start})") from None
    except (UnicodeError, ValueError):  # codecs such as punycode raise their own
        raise NapipatchError(where, f"body cannot be decoded as {charset!r}") from None
    body = body.replace("\r\n", "\n")
    refs = re.findall(r"<([^<>\s]+)>", hdrs["References"] or "")
    return PatchMail(
        msgid=msgid,
        subject=parse_subject(subject),
        author_name=name,
        author_email=addr,
        date=hdrs["Date"] or "",
        body=body,
        in_reply_to=clean_msgid(hdrs["In-Reply-To"]),
        references=refs,
        raw=data,
        origin=origin,
        commit=(m.group(1).decode() if (m := re.match(rb"^From ([0-9a-f]{40}) ", envelope)) else ""),
        to=hdrs["To"] or "", cc=hdrs["Cc"] or "", sender=hdrs["Sender"] or "",
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
