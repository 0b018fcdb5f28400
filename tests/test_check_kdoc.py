"""The kdoc check: look-alike comments, new kernel-doc warnings, parameter names.

Fixtures are commits on the real 6.12 tree; kernel-doc is the tree's own
Perl scripts/kernel-doc, run from the trusted copy of the base commit.
In 6.12 ``int dev_set_threaded(struct net_device *dev, bool threaded);``
is line 558 of include/linux/netdevice.h and its definition line 6744 of
net/core/dev.c; ``netdev_priv()`` is documented at line 2602.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import ROOT, check_findings, edit, git, one_patch
from napipatch.kernel import kerneldoc
from napipatch.kernel.cparse_calls import find_functions

ND = "include/linux/netdevice.h"
DEV = "net/core/dev.c"
PROTO = "int dev_set_threaded(struct net_device *dev, bool threaded);\n"

LOOKALIKE = """/*
 * dev_set_threaded - set threaded NAPI polling for a device
 * @dev: the device
 * @threaded: whether its NAPIs poll in kthreads
 *
 * Return: 0 on success, negative errno on failure.
 */
"""


DOC_HUNK_PATCH = """\
From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001
From: Test Author <author@example.org>
Date: Thu, 1 Jan 2026 00:00:00 +0000
Subject: [PATCH net-next] net: add an offset to netdev_priv

Signed-off-by: Test Author <author@example.org>
---
 include/linux/netdevice.h | 2 +-
 1 file changed, 1 insertion(+), 1 deletion(-)

diff --git a/include/linux/netdevice.h b/include/linux/netdevice.h
index 1111111..2222222 100644
--- a/include/linux/netdevice.h
+++ b/include/linux/netdevice.h
@@ -2602,10 +2602,10 @@ static inline void netdev_lockdep_set_classes(struct net_device *dev)
 /**
  *	netdev_priv - access network device private data
  *	@dev: network device
  *
  * Get network device private data
  */
-static inline void *netdev_priv(const struct net_device *dev)
+static inline void *netdev_priv(const struct net_device *dev, int off)
 {
 	return (void *)dev->priv;
 }
-- 
2.47.0
"""


def series(kernel_tree, base_commit, tmp_path, changes, name="p"):
    return one_patch(kernel_tree, base_commit, tmp_path, changes, "net: kdoc fixture\n", name)[0]


def findings(cli, target, *args, check="kdoc"):
    return check_findings(cli, target, check, *args)


def where(fs):
    return [(f["patch"], f["severity"], f["file"], f["line"]) for f in fs]


# ---------------------------------------------------------------- parsers

def test_parse_perl_and_python_output():
    perl = ("include/linux/netdevice.h:2608: warning: Function parameter or struct member 'x' "
            "not described in 'netdev_priv'\nsome other line\n")
    py = "Warning: include/linux/netdevice.h:2608 function parameter 'x' not described in 'netdev_priv'\n"
    assert kerneldoc.parse_output(perl) == [kerneldoc.KdocWarning(
        ND, 2608, "Function parameter or struct member 'x' not described in 'netdev_priv'")]
    assert kerneldoc.parse_output(py) == [kerneldoc.KdocWarning(
        ND, 2608, "function parameter 'x' not described in 'netdev_priv'")]


def test_new_warnings_multiset_without_line_numbers():
    W = kerneldoc.KdocWarning
    before = [W("a.c", 10, "m1"), W("a.c", 20, "m2")]
    after = [W("a.c", 14, "m1"), W("a.c", 24, "m2"), W("a.c", 30, "m2")]
    # One 'm2' is new; the one on an added line is the one reported.
    assert kerneldoc.new_warnings(before, after, {"a.c": {24}}) == [W("a.c", 24, "m2")]
    assert kerneldoc.new_warnings(before, after[:2]) == []


def test_comment_shape():
    s = kerneldoc.shape(LOOKALIKE.splitlines())
    assert (s.name, s.params, s.has_return, s.opens_kdoc) == (
        "dev_set_threaded", ["dev", "threaded"], True, False)
    assert s.looks_like_kdoc("dev_set_threaded")
    plain = kerneldoc.shape(["/* Note : dev->mtu is often read without holding a lock.",
                             " * Writers usually hold RTNL.", " */"])
    assert not plain.looks_like_kdoc("mtu")
    assert kerneldoc.shape(["/**", " * foo - bar", " */"]).opens_kdoc


def test_function_parameters():
    src = ("int napi_set_threaded(struct napi_struct *napi,\n\t\t      enum netdev_napi_threaded threaded);\n"
           "static void f(void)\n{\n}\n"
           "int g(struct net_device *, int (*cb)(int x), u8 buf[], ...);\n")
    fs = find_functions(src)
    assert [(f.name, f.params, f.line, f.last_line, f.is_definition) for f in fs] == [
        ("napi_set_threaded", ["napi", "threaded"], 1, 2, False),
        ("f", [], 3, 4, True),
        ("g", [None, "cb", "buf", None], 6, 6, False),
    ]


def test_functions_after_what_tree_sitter_misreads_are_still_read():
    """7.2's netdev_cmd_to_name() builds its switch's cases with a macro, which
    took the rest of dev.c into its parse (kdoc's warnings then fell back to
    kernel-doc's own line); a leading __bpf_kfunc left bbr_init() indented;
    a #define inside an initializer made a block at file scope. Each
    function is read at the line of its name, as the kdoc check names it."""
    text = (Path(__file__).parent / "fixtures" / "cparse" / "misread-7.2.c").read_text()
    assert [(f.name, f.line, f.is_definition) for f in find_functions(text)] == [
        ("netdev_cmd_to_name", 5, True), ("dev_nit_active_rcu", 34, True),
        ("bbr_init", 39, True), ("list_has_conn", 51, True)]


# ---------------------------------------------------------------- with the tree

@pytest.mark.tree
def test_lookalike_comment(kernel_tree, base_commit, tmp_path, cli):
    nd = edit(kernel_tree, base_commit, ND, PROTO, LOOKALIKE + PROTO)
    d = series(kernel_tree, base_commit, tmp_path, {ND: nd})
    fs = findings(cli, d, "--tree", kernel_tree)
    assert where(fs) == [(1, "warning", ND, 558)]
    assert fs[0]["message"] == ("comment above dev_set_threaded() is shaped like kernel-doc but "
                                "opens with /*, so kernel-doc never reads it")
    assert "/**" in fs[0]["hint"] and "drop it" in fs[0]["hint"]
    assert where(findings(cli, d)) == [(1, "warning", ND, 558)]


@pytest.mark.tree
def test_real_kdoc_comment_is_fine(kernel_tree, base_commit, tmp_path, cli):
    nd = edit(kernel_tree, base_commit, ND, PROTO, "/**" + LOOKALIKE[2:] + PROTO)
    d = series(kernel_tree, base_commit, tmp_path, {ND: nd})
    assert findings(cli, d, "--tree", kernel_tree) == []
    assert findings(cli, d) == []


@pytest.mark.tree
def test_undocumented_new_parameter(kernel_tree, base_commit, tmp_path, cli):
    nd = edit(kernel_tree, base_commit, ND, "static inline void *netdev_priv(const struct net_device *dev)",
              "static inline void *netdev_priv(const struct net_device *dev, int off)")
    d = series(kernel_tree, base_commit, tmp_path, {ND: nd})
    fs = findings(cli, d, "--tree", kernel_tree)
    # 6.12's "No description found for return value of 'netdev_priv'" was there before: not reported.
    assert where(fs) == [(1, "warning", ND, 2608)]
    assert fs[0]["message"] == ("new kernel-doc warning: Function parameter or struct member 'off' "
                                "not described in 'netdev_priv'")
    # Without a tree the comment's "/**" lies outside the hunk's three lines of
    # context: nothing to compare with, and nothing is guessed.
    assert findings(cli, d) == []


def test_undocumented_new_parameter_in_hunk(tmp_path, cli):
    """Without a tree, when the whole comment is in the hunk, the names are compared."""
    d = tmp_path / "p"
    d.mkdir()
    (d / "0001-net-x.patch").write_text(DOC_HUNK_PATCH)
    fs = findings(cli, d)
    assert where(fs) == [(1, "warning", ND, 2608)]
    assert fs[0]["message"] == "netdev_priv(): parameter 'off' not described"


@pytest.mark.tree
def test_lookalike_with_misnamed_parameter(kernel_tree, base_commit, tmp_path, cli):
    bad = LOOKALIKE.replace("@threaded:", "@thread:")
    nd = edit(kernel_tree, base_commit, ND, PROTO, bad + PROTO)
    d = series(kernel_tree, base_commit, tmp_path, {ND: nd})
    fs = findings(cli, d, "--tree", kernel_tree)
    assert where(fs) == [(1, "warning", ND, 558), (1, "warning", ND, 561)]
    assert fs[1]["message"] == ("dev_set_threaded(): parameter 'threaded' not described; "
                                "comment describes @thread which is not a parameter")


@pytest.mark.tree
def test_prototype_and_definition_disagree(kernel_tree, base_commit, tmp_path, cli):
    nd = edit(kernel_tree, base_commit, ND, PROTO,
              "int dev_set_threaded(struct net_device *dev, bool threded);\n")
    dev = edit(kernel_tree, base_commit, DEV, "int dev_set_threaded(struct net_device *dev, bool threaded)\n{\n",
               "int dev_set_threaded(struct net_device *dev, bool threaded)\n{\n\t/* hi */\n")
    d = series(kernel_tree, base_commit, tmp_path, {ND: nd, DEV: dev})
    fs = findings(cli, d, "--tree", kernel_tree)
    assert where(fs) == [(1, "warning", ND, 558)]
    assert fs[0]["message"] == (f"dev_set_threaded(): the prototype in {ND} and the definition in {DEV} "
                                "name parameters differently: 'threded' (prototype) vs 'threaded' (definition)")
    assert where(findings(cli, d)) == [(1, "warning", ND, 558)]


# ---------------------------------------------------------------- the real v4 series

def test_v4_series_without_tree(cli):
    cp = cli("--store", ROOT / "series", "check", "threaded-busy-poll@v4", "--only", "kdoc",
             "--format", "json")
    fs = [f for f in json.loads(cp.stdout)["findings"] if f["check"] == "kdoc"]
    # Patch 1 adds the look-alike; patch 3 edits it (said once more, as info).
    assert where(fs) == [(1, "warning", ND, 594), (3, "info", ND, 603)]
    assert "napi_set_threaded()" in fs[0]["message"]
    assert "opens with /*" in fs[0]["message"]


def test_kernel_doc_script_choice(tmp_path):
    """The newest layout wins; Perl or Python by the script's own first line."""
    assert kerneldoc.command(tmp_path) is None
    perl = tmp_path / "scripts" / "kernel-doc"
    perl.parent.mkdir()
    perl.write_text("#!/usr/bin/env perl\n")
    assert kerneldoc.command(tmp_path) == ["perl", str(perl)]
    py = tmp_path / "tools" / "docs" / "kernel-doc"
    py.parent.mkdir(parents=True)
    py.write_text("#!/usr/bin/env python3\n")
    assert kerneldoc.command(tmp_path) == ["python3", str(py)]


OPS_DOC = """/**
 * struct netdev_foo_ops - callbacks of a foo
 * @open: open it
 *\t@dev: the device
 * @close: close it
 *\t@dev: the device
 */
struct netdev_foo_ops {
\tint (*open)(struct net_device *dev);
\tvoid (*close)(struct net_device *dev);
};

"""


@pytest.mark.tree
def test_warning_kernel_doc_prints_twice_is_reported_once(kernel_tree, base_commit,
                                                           tmp_path, cli):
    # 6.12's perl kernel-doc prints "Excess struct member 'dev'" once per
    # @dev line, with the same line number (as it does for hwmon_ops and
    # vdpa_config_ops in 6.12): one comment for the reviewer.
    path = "include/net/netdev_queues.h"
    text = edit(kernel_tree, base_commit, path, "\n#endif\n", "\n" + OPS_DOC + "#endif\n")
    script = tmp_path / "kernel-doc"
    script.write_text(git(kernel_tree, "cat-file", "blob", f"{base_commit}:scripts/kernel-doc"))
    twice = kerneldoc.run(["perl", str(script)], {path: text})
    assert len(twice) == 2 and twice[0] == twice[1]
    d = series(kernel_tree, base_commit, tmp_path, {path: text})
    fs = findings(cli, d, "--tree", kernel_tree)
    close = text.splitlines().index("struct netdev_foo_ops {") + 4
    assert where(fs) == [(1, "warning", path, close)]
    assert fs[0]["message"] == ("new kernel-doc warning: Excess struct member 'dev' "
                                "description in 'netdev_foo_ops'")


# ---------------------------------------------------------------- what is looked at

@pytest.mark.tree
def test_what_kernel_doc_reads(kernel_tree, base_commit):
    """A change in a function body is outside every region; its /** comment,
    its prototype and the members of a documented struct are inside."""
    dev = git(kernel_tree, "cat-file", "blob", f"{base_commit}:{DEV}") + "\n"
    lines = dev.split("\n")
    head = lines.index("void dev_add_pack(struct packet_type *pt)") + 1
    doc = max(i for i in range(head) if lines[i - 1] == "/**")
    body = head + 4     # spin_lock(&ptype_lock);
    assert lines[body - 1].startswith("\t") and lines[head] == "{"
    assert kerneldoc.reads_any(dev, {doc}) and kerneldoc.reads_any(dev, {head})
    assert not kerneldoc.reads_any(dev, {body})
    assert not kerneldoc.reads_any(dev, {lines.index("EXPORT_SYMBOL(dev_add_pack);") + 1})
    nd = git(kernel_tree, "cat-file", "blob", f"{base_commit}:{ND}") + "\n"
    member = nd.split("\n").index("\tunsigned int\t\tflags;") + 1
    assert kerneldoc.reads_any(nd, {member})     # inside struct net_device, documented above it
    assert not kerneldoc.reads_any("int f(void)\n{\n\treturn 0;\n}\n", {1, 2, 3})


@pytest.mark.tree
def test_definition_with_its_return_type_on_a_line_of_its_own(kernel_tree, base_commit,
                                                               tmp_path, cli):
    """The parameter is renamed on the second line of a split signature; the
    header's prototype, elsewhere in a touched file, is found by name."""
    dev = edit(kernel_tree, base_commit, DEV,
               "int dev_set_threaded(struct net_device *dev, bool threaded)\n{\n",
               "int\ndev_set_threaded(struct net_device *dev,\n\t\t bool on)\n{\n\tbool threaded = on;\n\n")
    nd = edit(kernel_tree, base_commit, ND, "#endif\t/* _LINUX_NETDEVICE_H */",
              "/* end */\n#endif\t/* _LINUX_NETDEVICE_H */")
    d = series(kernel_tree, base_commit, tmp_path, {ND: nd, DEV: dev})
    fs = findings(cli, d, "--tree", kernel_tree)
    assert where(fs) == [(1, "warning", DEV, 6745)]
    assert fs[0]["message"].endswith("'threaded' (prototype) vs 'on' (definition)")
