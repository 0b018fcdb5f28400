"""The ``apply`` check: a registered check like the others, on the real tree."""

import pytest
from conftest import check_findings, commit_files, edit, one_patch

pytestmark = pytest.mark.tree

NETDEV_C = "net/core/dev.c"


def test_listed_and_documented(cli):
    listed = cli("checks", "list", check=0).stdout
    assert any(line.split()[:3] == ["apply", "series", "tree"] for line in listed.splitlines())
    doc = cli("checks", "doc", "apply", check=0).stdout
    assert "Why a reviewer cares" in doc


def test_good_a_patch_made_on_the_base_applies(cli, kernel_tree, base_commit, tmp_path):
    text = edit(kernel_tree, base_commit, NETDEV_C, "static DEFINE_SPINLOCK(ptype_lock);",
                "static DEFINE_SPINLOCK(ptype_lock); /* packet types */")
    d, _ = one_patch(kernel_tree, base_commit, tmp_path, {NETDEV_C: text}, "net: comment ptype_lock")
    assert check_findings(cli, d, "apply", "--tree", kernel_tree) == []


def test_bad_a_patch_made_on_another_base_names_file_and_hunk(cli, kernel_tree, base_commit,
                                                              tmp_path):
    # The patch is made on a commit that changed the line it touches; on the
    # real base its context does not match.
    other = commit_files(kernel_tree, base_commit, {NETDEV_C: edit(
        kernel_tree, base_commit, NETDEV_C, "static DEFINE_SPINLOCK(ptype_lock);",
        "static DEFINE_SPINLOCK(ptype_lock_renamed);")}, "net: elsewhere\n\nTest fixture.\n")
    text = edit(kernel_tree, other, NETDEV_C, "static DEFINE_SPINLOCK(ptype_lock_renamed);",
                "static DEFINE_SPINLOCK(ptype_lock_renamed); /* packet types */")
    d, _ = one_patch(kernel_tree, other, tmp_path, {NETDEV_C: text}, "net: comment ptype_lock")
    for f in d.glob("*.patch"):  # as mailed without --base: the tree picks --base
        f.write_text("".join(ln for ln in f.read_text().splitlines(True)
                             if not ln.startswith("base-commit:")))
    found = check_findings(cli, d, "apply", "--tree", kernel_tree, "--base", base_commit)
    assert [(f["patch"], f["severity"], f["file"]) for f in found] == [(1, "error", NETDEV_C)]
    assert "hunk #1" in found[0]["message"] and "rebase the series onto" in found[0]["hint"]


def test_without_a_tree_it_is_skipped_and_says_why(cli, lore_dir):
    import json
    mbox = lore_dir / "threaded-busy-poll-v4.mbox"
    # left out by default, it is skipped...
    cp = cli("check", mbox, "--format", "json", check=0)
    got = {c["id"]: (c["status"], c["reason"]) for c in json.loads(cp.stdout)["checks"]}
    assert got["apply"] == ("skipped", "needs --tree")
    # ...but asked for by name, it did not run, and the run is not called clean
    cp = cli("check", mbox, "--only", "apply", "--format", "json", check=2)
    got = {c["id"]: (c["status"], c["reason"]) for c in json.loads(cp.stdout)["checks"]}
    assert got == {"apply": ("error", "needs --tree (--only apply)")}
    assert cp.stderr == "napipatch: error: needs --tree (--only apply)\n"
