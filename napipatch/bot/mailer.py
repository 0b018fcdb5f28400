"""Building the bot's replies and handing them to SMTP (or a directory).

Every header value is built by Python's email library from *sanitized*
text: control characters (CR, LF, NUL, ...) and Unicode line separators
in a hostile subject or name become spaces before they reach a header,
addresses are checked for shape, and the envelope recipients are exactly
the addresses in To/Cc. The Message-ID is made here, once, and stored
with the mail before anything is sent (see reply.py).
"""

from __future__ import annotations

import email.policy
import email.utils
import os
import re
import smtplib
import socket
import ssl
import time
from dataclasses import dataclass
from email.message import EmailMessage
from pathlib import Path

from napipatch import fileio
from napipatch.bot.config import BotConfig
from napipatch.mails.addresses import header, one_line

_ADDR = re.compile(r"^[^@\s<>()\[\],;:\"\\]+@[A-Za-z0-9.-]+\.?[A-Za-z0-9-]*$")
_MSGID = re.compile(r"^[^<>\s\"\\]+$")


def address(name: str | None, addr: str | None) -> str | None:
    """``Name <addr>`` for a header, or None when addr is not an address
    (or not ASCII: the bot's SMTP speaks no SMTPUTF8)."""
    a = one_line(addr, 254)
    return header(name, a) if _ADDR.match(a) else None


def parse_address(text: str) -> str | None:
    name, addr = email.utils.parseaddr(one_line(text))
    return address(name, addr)


def bare(addr_header: str) -> str:
    return email.utils.parseaddr(addr_header)[1]


@dataclass
class Outgoing:
    msgid: str      # without angle brackets
    sender: str     # envelope sender
    rcpts: list[str]
    data: bytes


def build(cfg: BotConfig, *, subject: str, in_reply_to: str, references: list[str],
          author_name: str, author_email: str, list_address: str, body: str,
          extra_headers: dict[str, str] | None = None) -> Outgoing:
    frm = parse_address(cfg.reply_from) or "napipatch-bot <napipatch-bot@localhost>"
    sender = bare(frm)
    to = [a for a in [address(author_name, author_email)] + [parse_address(x) for x in cfg.reply_to] if a]
    lst = [parse_address(list_address)] if cfg.reply_cc_list else []
    cc = [a for a in [parse_address(x) for x in cfg.reply_cc] + lst if a]
    msg = EmailMessage(policy=email.policy.default)
    msg["From"] = frm
    if to:
        msg["To"] = ", ".join(to)
    if cc:
        msg["Cc"] = ", ".join(cc)
    subj = one_line(subject, 900)
    msg["Subject"] = subj if re.match(r"(?i)^re:", subj) else f"Re: {subj}"
    msg["Date"] = email.utils.formatdate(localtime=False)
    msgid = email.utils.make_msgid("napipatch-bot", domain=sender.rpartition("@")[2] or "localhost")
    msg["Message-ID"] = msgid
    irt = one_line(in_reply_to)
    if irt and _MSGID.match(irt):
        msg["In-Reply-To"] = f"<{irt}>"
    refs = [r for r in (one_line(x) for x in references + [in_reply_to]) if r and _MSGID.match(r)]
    refs = list(dict.fromkeys(refs))
    if refs:
        msg["References"] = " ".join(f"<{r}>" for r in refs)
    msg["Auto-Submitted"] = "auto-generated"
    msg["X-Mailer"] = "napipatch-bot"
    for k, v in (extra_headers or {}).items():
        msg[k] = one_line(v)
    # Plain 8bit text, as list mail is read (quoted-printable only for
    # lines SMTP cannot carry).
    long_lines = any(len(line) > 900 for line in body.splitlines())
    msg.set_content(body, cte="quoted-printable" if long_lines
                    else "7bit" if body.isascii() else "8bit")
    rcpts = list(dict.fromkeys(bare(a) for a in to + cc))
    return Outgoing(msgid=msgid.strip("<>"), sender=sender, rcpts=rcpts,
                    data=msg.as_bytes(policy=email.policy.SMTP))


class TransientError(Exception):
    """Try again on a later pass (server down, 4xx, timeout)."""


class PermanentError(Exception):
    """The server refused the mail for good (5xx for every recipient)."""


def send_smtp(cfg: BotConfig, sender: str, rcpts: list[str], data: bytes) -> None:
    try:
        with smtplib.SMTP(cfg.smtp_host, cfg.smtp_port, timeout=cfg.smtp_timeout) as s:
            s.ehlo()
            if cfg.smtp_starttls:
                s.starttls(context=ssl.create_default_context())
                s.ehlo()
            if cfg.smtp_user:
                s.login(cfg.smtp_user, cfg.smtp_password)
            s.sendmail(sender, rcpts, data)
    except smtplib.SMTPRecipientsRefused as exc:
        codes = [c for c, _m in exc.recipients.values()]
        err = f"all recipients refused: {exc.recipients}"
        raise (PermanentError if all(c >= 500 for c in codes) else TransientError)(err) from None
    except (smtplib.SMTPSenderRefused, smtplib.SMTPDataError) as exc:
        err = f"{exc.smtp_code} {exc.smtp_error!r}"
        raise (PermanentError if exc.smtp_code >= 500 else TransientError)(err) from None
    except (smtplib.SMTPException, OSError, socket.timeout, ssl.SSLError) as exc:
        raise TransientError(f"{cfg.smtp_host}:{cfg.smtp_port}: {exc}") from None


def write_dry_run(directory: Path, n: int, msgid: str, data: bytes) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    safe = re.sub(r"[^A-Za-z0-9._@-]+", "_", msgid)[:100]
    path = directory / f"{n:05d}-{safe}.eml"
    return fileio.atomic_write(path, data)


def log_sent(path: Path, msgid: str, rcpts: list[str]) -> None:
    """Append to the sent-log (fsync'd) once SMTP accepted the mail."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as f:
        f.write(f"{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())} <{msgid}> "
                f"{','.join(rcpts)}\n")
        f.flush()
        os.fsync(f.fileno())


def sent_ids(path: Path) -> set[str]:
    try:
        text = path.read_text(errors="replace")
    except FileNotFoundError:
        return set()
    return set(re.findall(r"<([^<>\s]+)>", text))
