"""Addresses from mail and from the user, as data: parsed, formatted, never raised on.

A From:, To: or Cc: of a list mail may hold anything: an RFC 2047
encoded-word, a raw UTF-8 name or local part (RFC 6532), bytes a relay
damaged (decoded to U+FFFD). ``email.utils.formataddr`` raises on a
non-ASCII address, so napipatch formats addresses only here:

- ``readable`` is what a person reads (reports, the store, cache keys):
  the name as written, quoted when it needs quotes, never encoded;
- ``header`` is what goes into a header napipatch writes (the bot's
  replies, the format-patch copy git am reads): a non-ASCII name RFC
  2047-encoded, and None for an address that cannot be written in ASCII
  (the caller leaves it out or falls back to ``readable``);
- the list functions read address lists from series data,
  get_maintainer.pl and the command line, junk dropped;
- ``mailmap_aliases`` reads which addresses a .mailmap says are one person.
"""

from __future__ import annotations

import email.utils
import re
import unicodedata
from email.header import Header

from napipatch.errors import NapipatchError


def one_line(value: str | None, limit: int | None = 400) -> str:
    """Printable text on one line, fit for a header: control characters
    (CR and LF among them), line and paragraph separators become spaces (no
    header injection), runs of white space are joined, and the text is cut
    at ``limit`` (None: an address list, never cut)."""
    out = []
    for ch in str(value or ""):
        cat = unicodedata.category(ch)
        out.append(" " if cat in ("Cc", "Zl", "Zp") else ch)
    return " ".join("".join(out).split())[:limit]


def _quoted(name: str) -> str:
    if name and any(c in name for c in '()<>@,;:\\".[]'):
        return '"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return name


def readable(name: str | None, addr: str | None) -> str:
    """``Name <addr>`` as a person reads it, whatever the characters."""
    name, addr = one_line(name, 200), one_line(addr, 254)
    if not name:
        return addr
    return f"{_quoted(name)} <{addr}>"


def header(name: str | None, addr: str | None) -> str | None:
    """``Name <addr>`` for a header: a non-ASCII name RFC 2047-encoded;
    None when ``addr`` is empty or not ASCII (it needs SMTPUTF8, which
    neither git send-email nor the bot speaks)."""
    name, addr = one_line(name, 200), one_line(addr, 254)
    if not addr or not addr.isascii() or " " in addr:
        return None
    if name and not name.isascii():
        return f"{Header(name, 'utf-8').encode()} <{addr}>"
    return email.utils.formataddr((name, addr))


def _getaddresses(value: str) -> list[tuple[str, str]]:
    """(name, address) pairs of an address list, parsed leniently.

    Debian 12's Python (3.11.2-6+deb12u9, the CVE-2023-27043 fix) parses
    strictly and gives nothing at all for a list with one malformed entry,
    so a good address next to junk would be lost; the lenient parse keeps
    it, and split_addresses drops the junk. Older Pythons have no
    ``strict`` and are lenient already.
    """
    try:
        return email.utils.getaddresses([value], strict=False)
    except TypeError:
        return email.utils.getaddresses([value])


def split_addresses(value: str) -> list[str]:
    """``Name <addr>`` entries of an address list, made one line (CR, LF and
    every other control character a space), junk dropped."""
    out = []
    for name, addr in _getaddresses(one_line(value, None)):
        if "@" not in addr or any(c in addr for c in '<>", '):
            continue
        if name:
            name = name.replace("\\", "\\\\").replace('"', '\\"')
            out.append(f'"{name}" <{addr}>')
        else:
            out.append(addr)
    return out


def address_of(entry: str) -> str:
    """The lower-case address of one ``Name <addr>`` entry."""
    return (email.utils.parseaddr(entry)[1] or entry).strip().lower()


def addresses(values, where: str) -> list[str]:
    """Addresses from a list (or one string), made one line, one per entry."""
    if values is None:
        return []
    if isinstance(values, str):
        values = [values]
    if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
        raise NapipatchError(where, "must be a list of addresses")
    return [a for v in values for a in split_addresses(v)]


def dedupe(addrs: list[str], exclude: set[str] = frozenset()) -> list[str]:
    """``addrs`` with each address once, leaving out those in ``exclude``."""
    seen, out = set(exclude), []
    for a in addrs:
        key = address_of(a)
        if key not in seen:
            seen.add(key)
            out.append(a)
    return out


def mailmap_aliases(mailmap: str) -> dict[str, set[str]]:
    """address -> every address a .mailmap line names beside it (lower case)."""
    out: dict[str, set[str]] = {}
    for line in mailmap.splitlines():
        found = {a.lower() for a in re.findall(r"<([^<>\s]+@[^<>\s]+)>", line.split("#")[0])}
        for a in found:
            out.setdefault(a, set()).update(found - {a})
    return out
