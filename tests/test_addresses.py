"""Address lists from series data, get_maintainer.pl or the command line."""

from __future__ import annotations

from napipatch.mails.addresses import split_addresses


def test_good_address_next_to_junk_is_kept_and_junk_dropped():
    # A line break in series.toml must not become a header; the address
    # before it still gets the mail (Debian's strict email.utils gave none).
    assert split_addresses("Reviewer <rev@example.org>\r\nX-Injected: yes") == [
        '"Reviewer" <rev@example.org>']
    assert split_addresses("A <a@example.org>, b@example.org, not an address") == [
        '"A" <a@example.org>', "b@example.org"]


def test_one_line_cleans_every_header_value_and_never_cuts_an_address_list():
    """One cleaner for all that napipatch writes into a header: every control
    character (not CR and LF only) is a space; an address list is not cut."""
    from napipatch.mails.addresses import one_line

    assert one_line("a\x00b\r\nc\x1b[2Jd\u2028e", None) == "a b c [2Jd e"
    many = ", ".join(f"p{i}@example.org" for i in range(100))
    assert one_line(many, None) == many and len(one_line(many)) == 400
    got = split_addresses("Rev <rev@example.org>\x00\x1b[2J, b@example.org")
    assert got == ['"Rev" <rev@example.org>', "b@example.org"]


# ----------------------------------------------- addresses from mail are data
import json  # noqa: E402
import re  # noqa: E402
from email.header import decode_header, make_header  # noqa: E402

import pytest  # noqa: E402

from conftest import LORE  # noqa: E402
from napipatch.bot.mailer import address  # noqa: E402
from napipatch.mails.addresses import header, readable  # noqa: E402

# What a From: can hold on the list: bytes a relay damaged, a UTF-8 name,
# a UTF-8 local part (RFC 6532), an encoded-word in the name and the address.
FROMS = {
    "damaged": b"Samiullah Khawaja <skhawaja\xff\xfe@google.com>",
    "utf8-name": b"J\xc3\xb6rg M\xc3\xbcller <skhawaja@google.com>",
    "utf8-local": b"Jorg <j\xc3\xb6rg@google.com>",
    "encoded-word": b"=?utf-8?q?J=C3=B6rg?= <j=?utf-8?q?=C3=B6?=rg@google.com>",
}


def test_readable_keeps_what_was_written_and_header_encodes_or_refuses():
    assert readable("Jörg Müller", "jm@example.org") == "Jörg Müller <jm@example.org>"
    assert readable("Jorg", "jörg@example.org") == "Jorg <jörg@example.org>"
    assert readable("Doe, J.", "j@example.org") == '"Doe, J." <j@example.org>'
    assert readable("Evil\r\nBcc: x@evil", "a@example.org") == '"Evil Bcc: x@evil" <a@example.org>'
    encoded = header("Jörg Müller", "jm@example.org")
    assert encoded.isascii() and encoded.endswith(" <jm@example.org>")
    assert str(make_header(decode_header(encoded))) == "Jörg Müller <jm@example.org>"
    assert header("Jorg", "jörg@example.org") is None          # needs SMTPUTF8
    assert header("x", "sk\ufffd@google.com") is None           # damaged bytes
    assert header("Doe, J.", "j@example.org") == '"Doe, J." <j@example.org>'
    # The bot's reply goes only to addresses it can write.
    assert address("Jorg", "jörg@example.org") is None
    assert str(make_header(decode_header(address("Jörg", "j@example.org")))) == "Jörg <j@example.org>"


@pytest.mark.parametrize("shape", sorted(FROMS))
def test_a_non_ascii_from_is_checked_and_reported(cli, tmp_path, shape):
    """The real v4 thread with its author's From: replaced: every check runs
    (the cache key, signoff and the report format the address), and the
    report names the author as written."""
    data = (LORE / "threaded-busy-poll-v4.mbox").read_bytes()
    frm = FROMS[shape]
    data = re.sub(rb"(?m)^From: Samiullah Khawaja <skhawaja@google.com>", lambda _m: b"From: " + frm, data)
    mbox = tmp_path / f"{shape}.mbox"
    mbox.write_bytes(data)
    cp = cli("check", mbox, "--format", "json")
    assert cp.returncode in (0, 1), (cp.returncode, cp.stderr[-2000:])
    assert "internal error" not in cp.stderr
    report = json.loads(cp.stdout)
    crashed = [c["id"] for c in report["checks"] if c["status"] == "crashed"]
    assert crashed == []
    if shape == "utf8-local":
        # signoff names the author as a person reads it, not encoded
        text = cli("check", mbox, "--only", "signoff").stdout
        assert "no Signed-off-by from the author Jorg <jörg@google.com>" in text
    imported = cli("series", "import", mbox, "--name", "n")
    assert imported.returncode == 0, imported.stderr
    shown = cli("series", "show", "n")
    assert shown.returncode == 0 and "Traceback" not in shown.stderr
