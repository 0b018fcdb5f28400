"""The leftover check: a new helper replaced copies of a block but missed one.

The bad fixture is v5 of the threaded busy poll series with patch 2 edited
to leave napi_complete_done()'s copy of the GRO flush block open-coded (the
v4 review comment); v5 itself converts all three copies. Other fixtures are
commits on the real 6.12 tree.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest

from conftest import ROOT, check_findings, commit_files, edit, format_patch, git, one_patch
from napipatch.kernel.cblocks import find, functions, template

pytestmark = pytest.mark.tree

V5 = ROOT / "series" / "threaded-busy-poll" / "v5"
V4 = ROOT / "series" / "threaded-busy-poll" / "v4"
PATCH2 = "0002-net-core-add-a-helper-to-flush-GRO-and-the-normal.patch"
DEV = "net/core/dev.c"
# 6.12's napi_complete_done() block opens at line 6432; patch 2 adds the
# 16-line helper above it.
BLOCK_612 = 6432


def _v5_missing_one(tmp_path: Path) -> Path:
    """v5 with patch 2's napi_complete_done() hunk dropped (later hunks renumbered)."""
    out = tmp_path / "v5-missed"
    shutil.copytree(V5, out)
    p = out / PATCH2
    text = p.read_text()
    start, end = text.index("@@ -6429,15 +6445,11 @@"), text.index("@@ -6506,14")
    text = text[:start] + text[end:]
    text = text.replace("@@ -6506,14 +6518,10 @@", "@@ -6506,14 +6522,10 @@")
    text = text.replace("@@ -6999,14 +7007,10 @@", "@@ -6999,14 +7011,10 @@")
    p.write_text(text)
    return out


def test_v5_patch2_missing_a_copy_names_it(cli, kernel_tree, tmp_path):
    fs = check_findings(cli, _v5_missing_one(tmp_path), "leftover", "--tree", kernel_tree)
    assert [(f["severity"], f["patch"], f["file"], f["line"]) for f in fs] == [
        ("warning", 2, DEV, BLOCK_612 + 16)]
    f = fs[0]
    assert "napi_complete_done()" in f["message"]
    assert "napi_gro_flush_normal()" in f["message"]
    assert "2 other copies" in f["message"]
    assert f["hint"] == f"replace lines {BLOCK_612 + 16}-{BLOCK_612 + 24} with " \
                        "napi_gro_flush_normal(n, !!timeout)"
    assert "__busy_poll_stop()" in f["details"] and "__napi_poll()" in f["details"]


def test_v5_is_quiet(cli, kernel_tree):
    assert check_findings(cli, V5, "leftover", "--tree", kernel_tree) == []


def test_v4_is_quiet(cli, kernel_tree):
    # v4 does not apply on 6.12 (apply reports it); leftover then has nothing to read.
    assert check_findings(cli, V4, "leftover", "--tree", kernel_tree) == []
    assert check_findings(cli, V4, "leftover") == []


HELPER = """
static void napi_gro_flush_normal(struct napi_struct *napi, bool flush_old)
{
	if (napi->gro_bitmask)
		napi_gro_flush(napi, flush_old);

	gro_normal_list(napi);
}
"""
ANCHOR = "EXPORT_SYMBOL(__napi_schedule_irqoff);\n"


def test_helper_that_replaced_nothing_is_quiet(cli, kernel_tree, base_commit, tmp_path):
    """New code with the same body as three open-coded blocks, none replaced: no refactor."""
    text = edit(kernel_tree, base_commit, DEV, ANCHOR, ANCHOR + HELPER)
    p, _ = one_patch(kernel_tree, base_commit, tmp_path, {DEV: text}, "net: add a helper\n")
    assert check_findings(cli, p, "leftover", "--tree", kernel_tree) == []


def test_single_call_helper_is_quiet(cli, kernel_tree, base_commit, tmp_path):
    text = edit(kernel_tree, base_commit, DEV, ANCHOR, ANCHOR + """
static void napi_flush_normal(struct napi_struct *napi)
{
	gro_normal_list(napi);
}
""")
    text = text.replace("\tgro_normal_list(napi);\n\tclear_bit(NAPI_STATE_SCHED",
                        "\tnapi_flush_normal(napi);\n\tclear_bit(NAPI_STATE_SCHED")
    text = text.replace("\tgro_normal_list(n);\n\n\t/* Some drivers",
                        "\tnapi_flush_normal(n);\n\n\t/* Some drivers")
    assert text.count("napi_flush_normal(") == 3
    p, _ = one_patch(kernel_tree, base_commit, tmp_path, {DEV: text}, "net: add a helper\n")
    assert check_findings(cli, p, "leftover", "--tree", kernel_tree) == []


def _apply_cached(repo: Path, rev: str, patch: Path, path: str) -> str:
    """``path`` after ``git apply`` of ``patch`` on ``rev`` (temporary index)."""
    with tempfile.TemporaryDirectory() as td:
        env = {"GIT_INDEX_FILE": str(Path(td) / "index")}
        git(repo, "read-tree", rev, env=env)
        git(repo, "apply", "--cached", str(patch), env=env)
        blob = git(repo, "ls-files", "-s", path, env=env).split()[1]
    return git(repo, "cat-file", "blob", blob) + "\n"


def test_copy_in_the_same_directory(cli, kernel_tree, base_commit, tmp_path):
    """All of dev.c converted, but net/core/netpoll.c has a copy: named there."""
    np = "net/core/netpoll.c"
    copy = commit_files(kernel_tree, base_commit, {np: edit(
        kernel_tree, base_commit, np, "EXPORT_SYMBOL(netpoll_poll_dev);\n",
        "EXPORT_SYMBOL(netpoll_poll_dev);\n\nvoid netpoll_flush(struct napi_struct *np_napi)\n"
        "{\n\tif (np_napi->gro_bitmask) {\n\t\tnapi_gro_flush(np_napi, false);\n\t}\n"
        "\tgro_normal_list(np_napi);\n}\n")}, "netpoll: flush\n")
    refactor = commit_files(kernel_tree, copy,
                            {DEV: _apply_cached(kernel_tree, copy, V5 / PATCH2, DEV)},
                            "net: core: add a helper to flush GRO and the normal list\n")
    out = format_patch(kernel_tree, f"{base_commit}..{refactor}", tmp_path / "dir")
    fs = check_findings(cli, out, "leftover", "--tree", kernel_tree)
    assert [(f["patch"], f["file"]) for f in fs] == [(2, np)]
    assert "netpoll_flush()" in fs[0]["message"]
    assert "3 other copies" in fs[0]["message"]
    assert fs[0]["hint"].endswith("napi_gro_flush_normal(np_napi, false)")


def test_blocks_match_up_to_comments_braces_and_names():
    tpl = template(functions(HELPER)[0])
    code = """
void a(struct napi_struct *n, unsigned long t)
{
	int x = 1;
	if (n->gro_bitmask) {
		/* why */
		napi_gro_flush(n, !!t);
	}
	gro_normal_list(n);
}
void b(struct napi_struct *n)
{
	if (n->gro_bitmask)
		napi_gro_flush(n, 0);
	gro_normal_list(other);
}
"""
    got = find(tpl, code)
    assert [(c.function, c.line, c.args) for c in got] == [
        ("a", 5, {"napi": "n", "flush_old": "!!t"})]
