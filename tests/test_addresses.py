"""Address lists from series data, get_maintainer.pl or the command line."""

from __future__ import annotations

from napipatch.kernel.maintainers import split_addresses


def test_good_address_next_to_junk_is_kept_and_junk_dropped():
    # A line break in series.toml must not become a header; the address
    # before it still gets the mail (Debian's strict email.utils gave none).
    assert split_addresses("Reviewer <rev@example.org>\r\nX-Injected: yes") == [
        '"Reviewer" <rev@example.org>']
    assert split_addresses("A <a@example.org>, b@example.org, not an address") == [
        '"A" <a@example.org>', "b@example.org"]
