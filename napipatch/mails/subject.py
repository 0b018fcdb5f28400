"""Parsing a patch subject: ``[PATCH net-next v4 1/4] net: summary``."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

# Trees netdev (and its neighbours) accept in the subject tag.
KNOWN_TREES = ("net-next", "net", "bpf-next", "bpf", "wireless-next", "wireless",
               "iwl-next", "iwl-net", "ipsec-next", "ipsec")

_BRACKET = re.compile(r"^\s*\[([^\]]*)\]\s*")
_COUNTER = re.compile(r"^(\d+)/(\d+)$")
_VERSION = re.compile(r"^v(\d+)$", re.I)
_REPLY = re.compile(r"^\s*((re|aw|fwd?)\s*:\s*)+", re.I)


@dataclass
class Subject:
    """The parts of a patch subject line.

    Attributes:
        raw: the whole subject, unfolded.
        is_reply: starts with ``Re:``.
        is_patch: has a ``[... PATCH ...]`` tag.
        rfc: the tag says RFC.
        tree: the tree tag (``net``, ``net-next`` ...) or None.
        version: the ``vN`` number (1 when absent).
        index, total: ``M/T`` (1/1 when absent).
        prefixes: every token of the tag, in order.
        title: what follows the tag.
    """

    raw: str
    is_reply: bool = False
    is_patch: bool = False
    rfc: bool = False
    tree: str | None = None
    version: int = 1
    has_version: bool = False
    index: int = 1
    total: int = 1
    has_counter: bool = False
    prefixes: list[str] = field(default_factory=list)
    title: str = ""

    @property
    def subsystem(self) -> str | None:
        """The ``subsys:`` prefix of the title (``net: core``), or None."""
        m = re.match(r"^((?:[\w.\-/]+:\s+)+)\S", self.title)
        if not m:
            return None
        return m.group(1).strip().rstrip(":")


def parse_subject(raw: str) -> Subject:
    raw = " ".join((raw or "").split())
    s = Subject(raw=raw)
    rest = raw
    m = _REPLY.match(rest)
    if m:
        s.is_reply = True
        rest = rest[m.end():]
    tokens: list[str] = []
    while True:
        m = _BRACKET.match(rest)
        if not m:
            break
        tokens += m.group(1).replace(",", " ").split()
        rest = rest[m.end():]
    s.prefixes = tokens
    s.title = rest.strip()
    for tok in tokens:
        low = tok.lower()
        if low == "patch":
            s.is_patch = True
        elif low == "rfc":
            s.rfc = True
        elif low in KNOWN_TREES and s.tree is None:
            s.tree = low
        elif (mv := _VERSION.match(tok)):
            s.version, s.has_version = int(mv.group(1)), True
        elif (mc := _COUNTER.match(tok)):
            s.index, s.total, s.has_counter = int(mc.group(1)), int(mc.group(2)), True
    if s.rfc and not s.is_patch and tokens:
        s.is_patch = True
    return s
