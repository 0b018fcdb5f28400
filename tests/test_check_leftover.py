"""The leftover check: a new helper replaced copies of a block but missed one.

The bad fixture is v5 of the threaded busy poll series with patch 2 edited
to leave napi_complete_done()'s copy of the GRO flush block open-coded (the
v4 review comment); v5 itself converts all three copies. Other fixtures are
commits on the real 6.12 tree.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from conftest import (ROOT, check_findings, check_json, check_skipped, commit_files, edit,
                      format_patch, git, one_patch)
from napipatch.kernel.cblocks import find, functions, template

pytestmark = pytest.mark.tree

V5 = ROOT / "series" / "threaded-busy-poll" / "v5"
V4 = ROOT / "series" / "threaded-busy-poll" / "v4"
PATCH2 = "0002-net-core-add-a-helper-to-flush-GRO-and-the-normal.patch"
DEV = "net/core/dev.c"
TG3 = "drivers/net/ethernet/broadcom/tg3.c"
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


def test_v4_does_not_apply_so_leftover_reads_nothing_and_says_so(cli, kernel_tree):
    # v4 does not apply on 6.12 (apply reports it); leftover then has nothing
    # to read: it completes quiet and says why.
    data = check_json(cli, V4, "leftover", "--tree", kernel_tree)
    assert [(c["status"], c["reason"]) for c in data["checks"]] == [
        ("pass", "some patches did not apply")]
    assert data["findings"] == []
    # Without a tree it is not run at all.
    assert check_skipped(cli, V4, "leftover") == "needs --tree"


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


BUSY_POLL_BLOCK = """	if (napi->gro_bitmask) {
		/* flush too old packets
		 * If HZ < 1000, flush all packets.
		 */
		napi_gro_flush(napi, HZ >= 1000);
	}

	gro_normal_list(napi);
"""


def test_copies_removed_without_a_call_are_no_refactor(cli, kernel_tree, base_commit, tmp_path):
    """The helper is added and two copies go, but nothing calls it: code removed, not moved."""
    text = edit(kernel_tree, base_commit, DEV, ANCHOR, ANCHOR + HELPER)
    napi_poll = BUSY_POLL_BLOCK.replace("napi", "n").replace("n_gro_flush", "napi_gro_flush")
    assert text.count(BUSY_POLL_BLOCK) == 1 and text.count(napi_poll) == 1
    text = text.replace(BUSY_POLL_BLOCK, "").replace(napi_poll, "")
    p, _ = one_patch(kernel_tree, base_commit, tmp_path, {DEV: text}, "net: drop GRO flushes\n")
    assert check_findings(cli, p, "leftover", "--tree", kernel_tree) == []
    # The same edit with calls in their place is the refactor, and names the copy left.
    text = edit(kernel_tree, base_commit, DEV, ANCHOR, ANCHOR + HELPER)
    text = text.replace(BUSY_POLL_BLOCK, "\tnapi_gro_flush_normal(napi, HZ >= 1000);\n")
    text = text.replace(napi_poll, "\tnapi_gro_flush_normal(n, HZ >= 1000);\n")
    p, _ = one_patch(kernel_tree, base_commit, tmp_path, {DEV: text}, "net: add a helper\n", "b")
    fs = check_findings(cli, p, "leftover", "--tree", kernel_tree)
    assert [(f["file"], f["hint"]) for f in fs] == [
        (DEV, f"replace lines {BLOCK_612 + 8}-{BLOCK_612 + 16} with "
              "napi_gro_flush_normal(n, !!timeout)")]


def test_one_statement_helper_is_below_the_floor(cli, kernel_tree, base_commit, tmp_path):
    """A one-line body replaced twice while a dozen copies stay: a line, not a block."""
    st = "tp->nvram_jedecnum = JEDEC_ST;\n"
    text = edit(kernel_tree, base_commit, TG3, "static void tg3_get_5752_nvram_info(struct tg3 *tp)\n",
                "static void tg3_nvram_st(struct tg3 *tp)\n{\n\t" + st + "}\n\n"
                "static void tg3_get_5752_nvram_info(struct tg3 *tp)\n")
    assert text.count(st) > 8
    text = text.replace("\t\t" + st, "\t\ttg3_nvram_st(tp);\n", 2)
    p, _ = one_patch(kernel_tree, base_commit, tmp_path, {TG3: text}, "tg3: add a helper\n")
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


# ---------------------------------------------------------------- a large real diff
# tg3.c has the same three statements in seven of its *_nvram_info()
# functions: the refactor a reviewer would ask for is a helper for them. In the same patch,
# netdev_priv() becomes netdev_private() in every drivers/net/ethernet file
# (~650 files, ~15,000 changed lines), so the check runs on a diff of the
# size a tree-wide cleanup has.
ATMEL = re.compile(r"(?m)^(\t+)tp->nvram_jedecnum = JEDEC_ATMEL;\n\1tg3_flag_set\(tp, NVRAM_BUFFERED\);"
                   r"\n\1tg3_flag_set\(tp, FLASH\);\n")
TG3_HELPER = """static void tg3_nvram_atmel_flash(struct tg3 *tp)
{
	tp->nvram_jedecnum = JEDEC_ATMEL;
	tg3_flag_set(tp, NVRAM_BUFFERED);
	tg3_flag_set(tp, FLASH);
}

static void tg3_get_5752_nvram_info(struct tg3 *tp)
"""


def _blobs(repo: Path, rev: str, paths: list[str]) -> dict[str, str]:
    """Many files of ``rev`` through one ``git cat-file --batch``."""
    out = subprocess.run(["git", "-C", str(repo), "cat-file", "--batch"], capture_output=True,
                         input="".join(f"{rev}:{p}\n" for p in paths).encode(), check=True).stdout
    texts, pos = {}, 0
    for p in paths:
        head = out[pos:out.index(b"\n", pos)].split()
        size, pos = int(head[2]), out.index(b"\n", pos) + 1
        texts[p] = out[pos:pos + size].decode()
        pos += size + 1
    return texts


def _commit_many(repo: Path, parent: str, texts: dict[str, str], message: str, work: Path) -> str:
    """commit_files for hundreds of files: one hash-object and one update-index."""
    work.mkdir(parents=True, exist_ok=True)
    names = []
    for i, text in enumerate(texts.values()):
        (work / str(i)).write_text(text)
        names.append(str(work / str(i)))
    blobs = git(repo, "hash-object", "-w", "--stdin-paths", input="\n".join(names) + "\n").split()
    with tempfile.TemporaryDirectory() as td:
        env = {"GIT_INDEX_FILE": str(Path(td) / "index")}
        git(repo, "read-tree", parent, env=env)
        git(repo, "update-index", "--index-info", env=env,
            input="".join(f"100644 {b}\t{p}\n" for b, p in zip(blobs, texts)))
        tree = git(repo, "write-tree", env=env)
    return git(repo, "commit-tree", tree, "-p", parent, "-m", message,
               env={"GIT_AUTHOR_NAME": "T", "GIT_AUTHOR_EMAIL": "t@example.org",
                    "GIT_COMMITTER_NAME": "T", "GIT_COMMITTER_EMAIL": "t@example.org",
                    "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
                    "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z"})


@pytest.fixture(scope="module")
def large(kernel_tree, base_commit, tmp_path_factory):
    """{"clean": series dir, "missed": series dir, "left": post-patch line of the copy left}."""
    tmp = tmp_path_factory.mktemp("large")
    paths = git(kernel_tree, "grep", "-l", "-w", "netdev_priv", base_commit, "--",
                "drivers/net/ethernet").split("\n")
    paths = [p.split(":", 1)[1] for p in paths]
    assert TG3 in paths and len(paths) > 600
    renamed = {p: re.sub(r"\bnetdev_priv\b", "netdev_private", t)
               for p, t in _blobs(kernel_tree, base_commit, paths).items()}
    tg3 = renamed[TG3].replace("static void tg3_get_5752_nvram_info(struct tg3 *tp)\n", TG3_HELPER)
    after = tg3.index(TG3_HELPER) + len(TG3_HELPER)      # not the helper's own body
    copies = [m for m in ATMEL.finditer(tg3) if m.start() > after]
    assert len(copies) == 7
    out = {}
    for name, keep in (("clean", None), ("missed", 3)):
        text, shift = tg3, 0
        for i, m in enumerate(copies):
            if i == keep:
                out["left"] = text.count("\n", 0, m.start() + shift) + 1
                continue
            call = f"{m.group(1)}tg3_nvram_atmel_flash(tp);\n"
            text = text[:m.start() + shift] + call + text[m.end() + shift:]
            shift += len(call) - (m.end() - m.start())
        c = _commit_many(kernel_tree, base_commit, {**renamed, TG3: text},
                         "net: ethernet: use netdev_private(); tg3: add an NVRAM helper\n\n"
                         "Signed-off-by: T <t@example.org>\n", tmp / f"blobs-{name}")
        out[name] = format_patch(kernel_tree, f"{base_commit}..{c}", tmp / name)
    return out


def test_large_refactor_that_converted_every_copy_is_quiet(cli, kernel_tree, large):
    assert check_findings(cli, large["clean"], "leftover", "--tree", kernel_tree) == []


def test_large_refactor_names_the_one_copy_left(cli, kernel_tree, large):
    fs = check_findings(cli, large["missed"], "leftover", "--tree", kernel_tree)
    assert [(f["severity"], f["file"], f["line"]) for f in fs] == [("warning", TG3, large["left"])]
    assert "tg3_get_5761_nvram_info()" in fs[0]["message"]
    assert "copy of the body of tg3_nvram_atmel_flash(), which this patch put in place of " \
           "6 other copies" in fs[0]["message"]
    assert fs[0]["hint"] == f"replace lines {large['left']}-{large['left'] + 2} with " \
                            "tg3_nvram_atmel_flash(tp)"


def test_anchor_in_a_later_statement_still_finds_the_copy():
    """The first statement is all holes; the copy is found through the name in the third."""
    tpl = template(functions("""
static void set_and_wake(int *slot, int v, struct wait_queue_head *wq)
{
	*slot = v;
	smp_wmb();
	wake_up_interruptible(wq);
}
""")[0])
    assert tpl.anchor == (2, "wake_up_interruptible")
    code = """
void f(struct dev *d)
{
	d->x = 0;
	*d->slot = d->val + 1;
	smp_wmb();
	wake_up_interruptible(&d->wq);
	wake_up_interruptible(&d->wq);
}
"""
    assert [(c.function, c.line, c.end, c.args) for c in find(tpl, code)] == [
        ("f", 5, 7, {"slot": "d->slot", "v": "d->val + 1", "wq": "&d->wq"})]
