"""kernel.protodiff and kernel.includers' visibility, without a tree.

The callsites check (tests/test_check_callsites.py, on the real 6.12 tree)
is built on these two: which prototypes a patch changes in its headers,
and which files can see a header's declarations.
"""

from __future__ import annotations

import difflib

from napipatch.kernel import protodiff
from napipatch.kernel.includers import Sight, own_copy, reach
from napipatch.mails.hunks import parse_diff

HEADER = "include/linux/foo.h"
BEFORE = """\
int foo_set(struct foo *f, bool on);
void foo_old(struct foo *f);
void foo_gone(int x, int y);
static inline int foo_keep(void) { return 0; }
#ifndef CONFIG_FOO
static inline int foo_set(struct foo *f, bool on) { return 0; }
#endif
"""
AFTER = """\
int foo_set(struct foo *f, enum foo_mode mode);
void foo_new(struct foo *f);
static inline int foo_keep(void) { return 0; }
#ifndef CONFIG_FOO
static inline int foo_set(struct foo *f, bool on) { return 0; }
#endif
"""


def _diff(path: str, before: str, after: str) -> str:
    lines = difflib.unified_diff(before.splitlines(True), after.splitlines(True),
                                 f"a/{path}", f"b/{path}")
    return f"diff --git a/{path} b/{path}\n" + "".join(lines)


def test_a_header_diff_gives_changed_renamed_and_removed_prototypes():
    diff = parse_diff(_diff(HEADER, BEFORE, AFTER))
    added, removed = protodiff.line_sets(diff)
    assert added[HEADER] == {1, 2} and removed[HEADER] == {1, 2, 3}
    got = protodiff.changes(diff, {HEADER: BEFORE}.get, {HEADER: AFTER}.get, added, removed)
    # changed ones first, then the vanished ones by name
    assert [(c.kind, c.name, c.new_name) for c in got] == [
        ("changed", "foo_set", ""), ("removed", "foo_gone", ""),
        ("renamed", "foo_old", "foo_new")]
    changed = next(c for c in got if c.kind == "changed")
    assert changed.describe() == ("int foo_set(struct foo *f, bool on)  ->  "
                                  "int foo_set(struct foo *f, enum foo_mode mode)")
    # the !CONFIG_FOO stub kept the old prototype
    assert [(h, p.line) for h, p in changed.stale_decls] == [(HEADER, 5)]


def test_a_context_line_and_a_non_header_change_nothing():
    text = "int bar(int a);\n"
    diff = parse_diff(_diff("drivers/x/x.c", text, text + "int baz(int b);\n"))
    added, removed = protodiff.line_sets(diff)
    assert protodiff.changes(diff, lambda p: text, lambda p: text, added, removed) == []


def test_who_sees_a_header():
    own = "drivers/net/ethernet/intel/idpf/idpf_mem.h"
    assert reach(HEADER) == "" and reach(own) == "drivers/net/ethernet/intel"
    assert Sight("drivers/net/ethernet/intel/igb/igb_main.c", "").sees(HEADER)
    assert Sight("drivers/net/ethernet/intel/idpf/sub/a.c", "").sees(own)
    assert not Sight("drivers/net/ethernet/intel/igb/igb_main.c", "").sees(own)
    relative = Sight("drivers/net/ethernet/intel/libie/x.c", '#include "../idpf/idpf_mem.h"\n')
    assert relative.sees(own)
    assert own_copy("tools/lib/bpf/x.c", HEADER) and not own_copy("tools/testing/x.c", HEADER)
