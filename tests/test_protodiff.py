"""kernel.protodiff, kernel.includers' visibility and a caller's locals, without a tree.

The callsites check (tests/test_check_callsites.py, on the real 6.12 tree)
is built on these: which prototypes a patch changes in its headers, which
files can see a header's declarations, and how a caller declares (and
range-checks) the variable it passes.
"""

from __future__ import annotations

import difflib

from napipatch.kernel import protodiff
from napipatch.kernel.cparse_calls import local_at
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


CALLER = """\
static int knob_set(void *data, u64 val)
{
\tstruct foo *f = data;
\tunsigned long mode = val, *pm = &mode;
\tbool on = val;
\tint n;

\tif (f->mode != val)
\t\tfoo_set(f, val);
\tif (n > FOO_MODE_MAX || mode < 0)
\t\treturn -EINVAL;
\tfoo_set(f, mode);
\tfoo_set(f, on);
\treturn foo_set(f, n);
}
int g;
"""


def test_a_callers_locals_their_types_and_range_checks():
    val = local_at(CALLER, 9, "val")
    # a parameter; compared with a field, which is no range check
    assert (val.type, val.integer, val.bounded) == ("u64", True, False)
    mode = local_at(CALLER, 12, "mode")
    assert (mode.type, mode.integer, mode.bounded) == ("unsigned long", True, True)
    assert local_at(CALLER, 12, "pm").type == "unsigned long *" and not local_at(CALLER, 12, "pm").integer
    assert not local_at(CALLER, 13, "on").integer             # bool
    assert local_at(CALLER, 14, "n").bounded                  # against an UPPER_CASE constant
    assert not local_at(CALLER, 9, "n").bounded               # the check comes after line 9
    assert local_at(CALLER, 9, "f").type == "struct foo *"
    assert local_at(CALLER, 9, "g") is None                   # a global
    assert local_at(CALLER, 16, "g") is None                  # not in a function
