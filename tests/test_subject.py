"""Subjects are read the way b4 reads them (b4.LoreSubject's rules)."""

from __future__ import annotations

import pytest

from napipatch.mails.subject import NETDEV_TREES, parse_subject
from napipatch.store import b4api

FORMS = [
    # subject, version, index, total, tree, rfc, resend, title
    ("[PATCHv3 net-next 2/4] net: a", 3, 2, 4, "net-next", False, False, "net: a"),
    ("[PATCH v3 net-next 2/4] net: a", 3, 2, 4, "net-next", False, False, "net: a"),
    ("[RFC PATCH net-next v2 0/5] net: a", 2, 0, 5, "net-next", True, False, "net: a"),
    ("[PATCH RESEND net] net: a", 1, 1, 1, "net", False, True, "net: a"),
    ("[PATCH bpf-next/net v2 1/3] bpf: a", 2, 1, 3, "bpf-next/net", False, False, "bpf: a"),
    ("[PATCH net-next 02/10]  net:  a ", 1, 2, 10, "net-next", False, False, "net: a"),
]


@pytest.mark.parametrize("raw,version,index,total,tree,rfc,resend,title", FORMS)
def test_netdev_forms_parse_and_agree_with_b4(raw, version, index, total, tree, rfc, resend,
                                              title):
    s = parse_subject(raw)
    assert (s.is_patch, s.is_reply, s.version, s.index, s.total, s.tree, s.rfc, s.resend,
            s.title) == (True, False, version, index, total, tree, rfc, resend, title)
    b4 = b4api.lore_subject(raw)
    assert (b4["is_patch"], b4["version"], b4["index"], b4["total"], b4["rfc"], b4["resend"],
            b4["title"]) == (s.is_patch, s.version, s.index, s.total, s.rfc, s.resend, s.title)


@pytest.mark.parametrize("raw", [
    "Re: [PATCHv3 net-next 2/4] net: a", "AW: [PATCH] x",
    "[PATCH] [net-next] x", "[PATCH [net] v2] x", "[patch v2 1/2] x", "net: plain subject",
])
def test_other_subjects_agree_with_b4(raw):
    s, b4 = parse_subject(raw), b4api.lore_subject(raw)
    assert (s.is_reply, s.is_patch, s.version, s.index, s.total) == \
        (b4["is_reply"], b4["is_patch"], b4["version"], b4["index"], b4["total"])


def test_every_netdev_tree_is_a_tree_tag():
    for tree in NETDEV_TREES:
        assert parse_subject(f"[PATCH {tree.upper()} 1/2] x: y").tree == tree
    assert parse_subject("[PATCH net-next/bpf-next] x").tree == "net-next/bpf-next"
    assert parse_subject("[PATCH foo-next] x").tree is None
