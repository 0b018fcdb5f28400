"""Kernel C before it is parsed: comments and annotations blanked, one tree-sitter parser per thread.

Every C reader in napipatch starts here, so they agree on what an
annotation is. Blanking (spaces, newlines kept) rather than deleting keeps
byte offsets and line numbers those of the file. Every pattern is bounded:
a hostile patch may bring a 100,000-line hunk full of ``__attribute__((``
that never closes, and each match attempt must stay short.
"""

from __future__ import annotations

import re
import threading

import tree_sitter_c
from tree_sitter import Language, Node, Parser

LANG = Language(tree_sitter_c.language())
_local = threading.local()

_COMMENT = re.compile(r"/\*.*?(?:\*/|\Z)|//[^\n]*", re.S)
# Annotations tree-sitter cannot know: attributes (two levels of nested
# parentheses), annotation macros with arguments, and bare annotation words.
_ANNOTATIONS = re.compile(
    r"__attribute__\s*\(\((?:[^()]|\((?:[^()]|\([^()]{0,200}\)){0,200}\)){0,400}\)\)"
    r"|\b(?:__printf|__scanf|__acquires|__releases|__must_hold|__cond_acquires|__cond_releases"
    r"|__alloc_size|__realloc_size|__counted_by\w*|__guarded_by|__section|__aligned|__diag_ignore"
    r"|__no_sanitize_or_inline|__assume_aligned)\s*\([^()]{0,400}\)"
    r"|\b_{2,4}cacheline_aligned\w*"
    r"|\b(?:__must_check|__cold|__hot|__init|__exit|__always_inline|noinline|__noinline"
    r"|__maybe_unused|__always_unused|__pure|__malloc|__weak|asmlinkage|notrace|__sched"
    r"|__net_init|__net_exit|__rcu|__user|__iomem|__percpu|__force|__bitwise|__deprecated"
    r"|__noreturn|__latent_entropy|__visible|__ref|__read_mostly|__ro_after_init|__initdata"
    r"|__initconst|__flatten|__no_kcsan|noinstr|__nocfi|__ksym|__packed|__nonstring"
    r"|__randomize_layout|__private|__bpf_kfunc|__kprobes|__meminit"
    r"|__devinit|__devexit|__exit_call|__must_be_array)\b"
)


def _blank(m: re.Match) -> str:
    return re.sub(r"[^\n]", " ", m.group(0))


def blank_comments(text: str) -> str:
    """``text`` with every comment replaced by spaces; newlines are kept."""
    return _COMMENT.sub(_blank, text)


def blank_annotations(text: str) -> str:
    """``text`` with kernel annotations blanked (same length, same lines)."""
    return _ANNOTATIONS.sub(_blank, text)


def parser() -> Parser:
    """This thread's tree-sitter-c parser (a Parser is not thread-safe)."""
    p = getattr(_local, "parser", None)
    if p is None:
        p = _local.parser = Parser(LANG)
    return p


def parse(text: str) -> tuple[Node, bytes]:
    """The parse tree of ``text`` with its annotations blanked, and those bytes."""
    src = blank_annotations(text).encode()
    return parser().parse(src).root_node, src
