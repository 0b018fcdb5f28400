"""Parsing a patch subject: ``[PATCH net-next v4 1/4] net: summary``.

The rules are b4's (``b4.LoreSubject``, b4 0.16), so napipatch and b4 agree
on what is a patch, its version and its counter; tests/test_subject.py
compares both on the forms netdev sees. They are restated here rather than
imported because ``mails`` is the bottom layer (b4 is reached only through
``napipatch.store.b4api``) and every archived mail passes through this.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

# Trees netdev and its neighbours accept in the subject tag (data, not
# code: add a tree here). A combined form such as ``bpf-next/net`` (a patch
# for one tree that another must also take) is a tree tag when each part is.
NETDEV_TREES = ("net", "net-next", "bpf", "bpf-next", "nf", "nf-next",
                "wireless", "wireless-next", "ipsec", "ipsec-next",
                "iwl-net", "iwl-next")

_BRACKET = re.compile(r"^\[([^\]]*)\]\s*")
_NESTED = (re.compile(r"\[([^\]]*)\[([^\[\]]*)\]"), re.compile(r"\[([^\]]*)\]([^\[\]]*)\]"))
_GLUED_VERSION = re.compile(r"(patch)(v\d+)", re.I)  # [PATCHv3] is [PATCH v3]
# b4 reads at most 4 digits a side; longer ones are still a counter here, so
# an absurd 1/10^30 is refused as too many patches instead of passing as a
# lone patch (int() of over 4300 digits would raise: 64 is plenty).
_COUNTER = re.compile(r"^(\d{1,64})/(\d{1,64})$")
_VERSION = re.compile(r"^v(\d+)$", re.I)
_REPLY = re.compile(r"^\s*((re|aw|fwd?)\s*:\s*)+", re.I)
_REPLY_TAG = re.compile(r"^\w{2,3}:\s*\[")  # b4: any "Xx: [" is a reply


@dataclass
class Subject:
    """The parts of a patch subject line.

    Attributes:
        raw: the whole subject, unfolded.
        is_reply: starts with ``Re:`` (or b4's ``Xx: [``).
        is_patch: has a ``PATCH`` (or ``RFC``) tag.
        rfc, resend: the tag says RFC / RESEND.
        tree: the tree tag (``net``, ``net-next``, ``bpf-next/net`` ...) or None.
        version: the ``vN`` number (1 when absent).
        index, total: ``M/T`` (1/1 when absent; ``02/10`` is 2/10).
        prefixes: every token of the tag, in order.
        title: what follows the tag.
    """

    raw: str
    is_reply: bool = False
    is_patch: bool = False
    rfc: bool = False
    resend: bool = False
    tree: str | None = None
    version: int = 1
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


def tree_tag(token: str) -> str | None:
    """``token`` lower-cased when it names a netdev tree (or a combination)."""
    low = token.lower()
    parts = low.split("/")
    return low if all(p in NETDEV_TREES for p in parts) else None


def _tokens(rest: str) -> tuple[list[str], str]:
    """The tokens of the leading ``[...]`` groups and the text after them."""
    while True:  # b4 flattens brackets inside brackets first
        old = rest
        for pat in _NESTED:
            rest = pat.sub(r"[\1\2]", rest)
        if rest == old:
            break
    tokens: list[str] = []
    while (m := _BRACKET.match(rest)):
        inner = _GLUED_VERSION.sub(r"\1 \2", m.group(1))
        tokens += [t.strip(",;") for t in inner.replace(",", " ").split() if t.strip(",;")]
        rest = rest[m.end():]
    return tokens, rest.strip()


def parse_subject(raw: str) -> Subject:
    raw = " ".join((raw or "").split())
    s = Subject(raw=raw)
    rest = raw
    if (m := _REPLY.match(rest)):
        s.is_reply = True
        rest = rest[m.end():]
    elif _REPLY_TAG.match(rest):
        s.is_reply = True
        rest = rest[rest.index("["):]
    s.prefixes, s.title = _tokens(rest)
    for tok in s.prefixes:
        low = tok.lower()
        if (mc := _COUNTER.match(tok)):
            s.index, s.total, s.has_counter = int(mc.group(1)), int(mc.group(2)), True
        elif (mv := _VERSION.match(tok)):
            s.version = int(mv.group(1))
        elif low.startswith("rfc"):
            s.rfc = True
        elif low.startswith("resend"):
            s.resend = True
        elif low.startswith("patch"):
            s.is_patch = True
        elif s.tree is None and (t := tree_tag(tok)):
            s.tree = t
    if s.rfc and not s.is_patch and s.prefixes:
        s.is_patch = True
    return s
