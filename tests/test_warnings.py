"""napipatch test warnings: the netdev CI's build tests (gcc W=1 + sparse,
i386, clang allmodconfig), coccinelle and htmldocs, on the real 6.12 tree
with the real compilers.

One series per kind of warning, each in a small file (drivers/net/dummy.c,
drivers/net/eql.c) so the objects compile in seconds; the allmodconfig
trees are configured and prepared once per session (``warnings_tree`` in
conftest.py) and kept between runs. The first run costs about 2-4 min a
configuration on 2 cores; README.md ("Build warnings") has the numbers.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from conftest import commit_files, edit, format_patch

# The first test pays the cold allmodconfig + prepare of three configurations.
# the warnings trees are directories of their own: the second build group (tests/conftest.py)
pytestmark = [pytest.mark.timeout(3600), pytest.mark.side_build]

DUMMY = "drivers/net/dummy.c"
XMIT = "static netdev_tx_t dummy_xmit(struct sk_buff *skb, struct net_device *dev)\n{\n"
BODY = "\tdev_lstats_add(dev, skb->len);\n"


def _series(kernel_tree, base, tmp_path, name, patches) -> Path:
    parent = base
    for subject, changes in patches:
        parent = commit_files(kernel_tree, parent, changes, subject)
    return format_patch(kernel_tree, f"{base}..{parent}", tmp_path / name)


def _xmit(kernel_tree, base, add: str, text: str | None = None) -> str:
    """dummy.c with ``add`` at the top of dummy_xmit()."""
    text = text or edit(kernel_tree, base, DUMMY, XMIT, XMIT)
    assert XMIT + BODY in text
    return text.replace(XMIT + BODY, XMIT + add + BODY)


@pytest.fixture
def warnings_run(cli, warnings_tree, kernel_tree):
    def _run(series: Path, *only: str, env=None):
        args = [a for o in only for a in ("--only", o)]
        cp = cli("test", "warnings", series, "--tree", kernel_tree, *args, "--format", "json",
                 env={"NAPIPATCH_BUILD_DIR": str(warnings_tree), **(env or {})})
        assert cp.returncode in (0, 1), (cp.returncode, cp.stdout[-3000:], cp.stderr[-3000:])
        return cp.returncode, json.loads(cp.stdout)
    return _run


def _found(report, check, severity="warning"):
    return [f for f in report["findings"] if f["check"] == check and f["severity"] == severity]


def _forecast(report, context) -> list[str]:
    """The NIPA forecast's state of ``context`` on each patch."""
    return [p["nipa"][context]["state"] for p in report["series"]["patches"]]


def _said(report, context, n=1) -> str:
    return report["series"]["patches"][n - 1]["nipa"][context]["description"]


@pytest.mark.build
@pytest.mark.tree
def test_w1_warning_is_new_once_and_a_moved_one_is_not(warnings_run, kernel_tree, base_commit,
                                                        tmp_path):
    """Patch 1 adds a set-but-unused variable (a W=1 warning); patch 2 adds
    lines above it, so the same warning moves: not new."""
    warn = _xmit(kernel_tree, base_commit,
                 "\tint napipatch_set;\n\n\tnapipatch_set = skb->len;\n")
    moved = warn.replace(XMIT, "/* napipatch: a comment that moves what is below */\n\n" + XMIT)
    d = _series(kernel_tree, base_commit, tmp_path, "w1", [
        ("dummy: keep the length", {DUMMY: warn}),
        ("dummy: comment the xmit path", {DUMMY: moved}),
    ])
    rc, report = warnings_run(d, "build-w1", "sparse")
    assert rc == 0  # warnings, no errors
    found = _found(report, "build-w1")
    assert [(f["patch"], f["file"]) for f in found] == [(1, DUMMY)], found
    line = warn.splitlines().index("\tint napipatch_set;") + 1
    assert found[0]["line"] == line
    assert found[0]["message"] == ("variable 'napipatch_set' set but not used "
                                   "[-Wunused-but-set-variable]")
    assert "gcc x86_64 allmodconfig W=1 C=1" in found[0]["hint"]
    assert not _found(report, "sparse")
    # NIPA fails a patch whose warnings grow; napipatch's own severity is warning
    assert _forecast(report, "build_allmodconfig_warn") == ["fail", "success"]
    assert _said(report, "build_allmodconfig_warn") == (
        f"1 fail: {DUMMY}:{line}: [build-w1] variable 'napipatch_set' set but not used "
        "[-Wunused-but-set-variable]")
    assert set(report["series"]["patches"][0]["nipa"]) == {"build_allmodconfig_warn"}
    checks = {c["id"]: c for c in report["checks"]}
    assert checks["build-w1"]["status"] == "warn"
    assert checks["build-w1"]["nipa"] == checks["sparse"]["nipa"] == ["build_allmodconfig_warn"]


@pytest.mark.build
@pytest.mark.tree
def test_sparse_endianness_warning(warnings_run, kernel_tree, base_commit, tmp_path):
    """A __be32 stored in a u32: sparse says so, gcc does not."""
    text = _xmit(kernel_tree, base_commit,
                 "\tu32 napipatch_mark;\n\n\tnapipatch_mark = htonl(skb->len);\n"
                 "\tskb->mark = napipatch_mark;\n")
    d = _series(kernel_tree, base_commit, tmp_path, "sparse",
                [("dummy: mark packets with their length", {DUMMY: text})])
    rc, report = warnings_run(d, "build-w1", "sparse")
    assert rc == 0
    found = _found(report, "sparse")
    assert len(found) == 1, found
    f = found[0]
    assert (f["patch"], f["file"]) == (1, DUMMY)
    assert f["line"] == text.splitlines().index("\tnapipatch_mark = htonl(skb->len);") + 1
    assert f["message"] == "incorrect type in assignment (different base types)"
    assert "expected unsigned int" in f["details"] and "got restricted __be32" in f["details"]
    assert not _found(report, "build-w1")
    assert _forecast(report, "build_allmodconfig_warn") == ["fail"]
    assert "[sparse] incorrect type in assignment" in _said(report, "build_allmodconfig_warn")


@pytest.mark.build
@pytest.mark.tree
def test_clang_only_warning(warnings_run, kernel_tree, base_commit, tmp_path):
    """-Wsometimes-uninitialized: clang warns, gcc (W=1) stays silent."""
    text = _xmit(kernel_tree, base_commit,
                 "\tint napipatch_len;\n\n\tif (skb->len > 64)\n\t\tnapipatch_len = 64;\n"
                 "\tskb->mark = napipatch_len;\n")
    d = _series(kernel_tree, base_commit, tmp_path, "clang",
                [("dummy: clamp the mark", {DUMMY: text})])
    rc, report = warnings_run(d, "build-w1", "sparse", "build-clang")
    assert rc == 0
    found = _found(report, "build-clang")
    assert [(f["patch"], f["file"]) for f in found] == [(1, DUMMY)], found
    assert "napipatch_len" in found[0]["message"]
    assert "[-Wsometimes-uninitialized]" in found[0]["message"]
    assert "clang LLVM=1 allmodconfig W=1" in found[0]["hint"]
    assert not _found(report, "build-w1") and not _found(report, "sparse")
    assert _forecast(report, "build_clang") == ["fail"]
    assert _forecast(report, "build_allmodconfig_warn") == ["success"]


@pytest.mark.build
@pytest.mark.tree
def test_32bit_only_warning_and_a_build_error(warnings_run, kernel_tree, base_commit, tmp_path):
    """%lu with a size_t is fine on x86_64 and a -Wformat warning on i386;
    patch 2 then breaks the build, which is an error on patch 2."""
    text = _xmit(kernel_tree, base_commit,
                 "\tnetdev_dbg(dev, \"napipatch: %lu\\n\", sizeof(*skb) + skb->len);\n")
    broken = text.replace("\tskb_tx_timestamp(skb);\n",
                          "\tskb_tx_timestamp(skb);\n\tnapipatch_no_such_call(skb);\n")
    d = _series(kernel_tree, base_commit, tmp_path, "32bit", [
        ("dummy: say the size", {DUMMY: text}),
        ("dummy: call something that does not exist", {DUMMY: broken}),
    ])
    rc, report = warnings_run(d, "build-w1", "sparse", "build-32bit")
    assert rc == 1
    found = _found(report, "build-32bit")
    assert [(f["patch"], f["file"]) for f in found] == [(1, DUMMY)], found
    assert "%lu" in found[0]["message"] and "[-Wformat=]" in found[0]["message"]
    assert not _found(report, "build-w1")
    errors = _found(report, "build-32bit", "error") + _found(report, "build-w1", "error")
    assert {(f["check"], f["patch"], f["file"]) for f in errors} == {
        ("build-32bit", 2, DUMMY), ("build-w1", 2, DUMMY)}, errors
    assert all("napipatch_no_such_call" in f["message"] for f in errors)
    assert _forecast(report, "build_32bit") == ["fail", "fail"]
    assert _forecast(report, "build_allmodconfig_warn") == ["success", "fail"]
    assert "napipatch_no_such_call" in _said(report, "build_allmodconfig_warn", 2)
    assert {c["id"]: c["status"] for c in report["checks"]}["build-32bit"] == "fail"


@pytest.mark.build
@pytest.mark.tree
def test_clean_series_is_silent_in_all_three(warnings_run, kernel_tree, base_commit, tmp_path):
    """A comment in a .c and in a header: nothing new in any configuration;
    the header's one includer is compiled, and the report says so."""
    header = "include/linux/if_eql.h"
    c_text = _xmit(kernel_tree, base_commit, "\t/* napipatch: count the packet first */\n")
    h_text = edit(kernel_tree, base_commit, header, "#include <uapi/linux/if_eql.h>\n",
                  "#include <uapi/linux/if_eql.h>\n\n/* napipatch: eql is old */\n")
    d = _series(kernel_tree, base_commit, tmp_path, "clean", [
        ("dummy: comment the xmit path", {DUMMY: c_text}),
        ("eql: comment the header", {header: h_text}),
    ])
    rc, report = warnings_run(d, "build-w1", "sparse", "build-32bit", "build-clang")
    assert rc == 0, report["findings"]
    assert not [f for f in report["findings"] if f["severity"] != "info"], report["findings"]
    for context in ("build_allmodconfig_warn", "build_32bit", "build_clang"):
        assert _forecast(report, context) == ["success", "success"], context
    picks = [f for f in report["findings"] if f["file"] == header and f["check"] == "build-clang"]
    assert len(picks) == 1 and picks[0]["patch"] == 2, picks
    assert picks[0]["message"].startswith("1 .c files see it; compiled 1 (clang): "
                                          "drivers/net/eql.o"), picks
    assert report["summary"]["verdict"] == "clean"


@pytest.mark.build
@pytest.mark.tree
def test_new_coccinelle_report_only(warnings_run, kernel_tree, base_commit, tmp_path):
    """A NULL check before kfree(): ifnullfree.cocci reports it on patch 1;
    patch 2 only moves it."""
    text = edit(kernel_tree, base_commit, DUMMY, "\tdev_kfree_skb(skb);\n",
                "\tif (skb)\n\t\tkfree(skb);\n")
    moved = text.replace(XMIT, "/* napipatch: moved */\n" + XMIT)
    d = _series(kernel_tree, base_commit, tmp_path, "cocci", [
        ("dummy: free differently", {DUMMY: text}),
        ("dummy: comment", {DUMMY: moved}),
    ])
    rc, report = warnings_run(d, "cocci")
    assert rc == 0
    found = _found(report, "cocci")
    assert [(f["patch"], f["file"], f["line"]) for f in found] == [
        (1, DUMMY, moved.splitlines().index("\t\tkfree(skb);") + 1)], found
    assert "NULL check before some freeing functions is not needed" in found[0]["message"]
    # the contest's coccicheck is no patchwork test: nothing to forecast
    assert [p["nipa"] for p in report["series"]["patches"]] == [{}, {}]
    assert {c["id"]: c["status"] for c in report["checks"]}["cocci"] == "warn"


@pytest.mark.build
@pytest.mark.tree
def test_new_htmldocs_warning_only(warnings_run, kernel_tree, base_commit, tmp_path):
    """A title underline too short in netlabel's docs: a new Sphinx warning
    on the patch that wrote it, from a SPHINXDIRS=netlabel build."""
    path = "Documentation/netlabel/introduction.rst"
    old = edit(kernel_tree, base_commit, path, "Overview\n", "Overview\n")
    text = old + "\nA new section\n====\n\nText.\n"
    d = _series(kernel_tree, base_commit, tmp_path, "docs", [
        ("doc: netlabel: add a section", {path: text}),
    ])
    rc, report = warnings_run(d, "htmldocs")
    assert rc == 0
    found = _found(report, "htmldocs")
    assert [(f["patch"], f["file"], f["message"]) for f in found] == [
        (1, path, "WARNING: Title underline too short.")], found
    assert found[0]["line"] == len(old.splitlines()) + 3  # docutils names the underline
    assert {c["id"]: c["status"] for c in report["checks"]}["htmldocs"] == "warn"


def test_a_warning_that_replaced_another_is_new_here_and_success_for_nipa():
    """NIPA compares counts: a new warning fails its build test only when
    the patch's warning count grows; napipatch reports it either way."""
    from napipatch.jobs.warnings.configs import CONFIGS
    from napipatch.jobs.warnings.job import Step, step_findings
    from napipatch.kernel.kbuildout import Diag

    d = Diag("cc", "warning", DUMMY, 61, "unused variable 'b' [-Wunused-variable]")
    grew = Step(1, "c1", new=[(d, ["drivers/net/dummy.o"])],
                counts={"cc": (0, 1), "sparse": (0, 0)})
    same = Step(2, "c2", new=[(d, ["drivers/net/dummy.o"])],
                counts={"cc": (1, 1), "sparse": (0, 0)})
    for step, state in ((grew, "fail"), (same, "success")):
        found = [f for f in step_findings(CONFIGS["w1"], step) if f.severity.value == "warning"]
        assert [(f.check, f.message, f.nipa) for f in found] == [
            ("compiler", d.message, {"*": state})]


@pytest.mark.tree
def test_missing_toolchain_is_one_line_naming_the_package(cli, kernel_tree, base_commit,
                                                          tmp_path):
    """No clang on PATH: the clang job could not run (exit 2), never clean."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    for tool in ("git", "make", "gcc", "flex", "bison", "bc", "sparse", "sh"):
        if shutil.which(tool):
            os.symlink(shutil.which(tool), bindir / tool)
    d = _series(kernel_tree, base_commit, tmp_path, "noclang", [
        ("dummy: comment", {DUMMY: _xmit(kernel_tree, base_commit, "\t/* napipatch */\n")}),
    ])
    cp = cli("test", "warnings", d, "--tree", kernel_tree, "--only", "build-clang",
             env={"PATH": str(bindir), "NAPIPATCH_BUILD_DIR": str(tmp_path / "build")})
    assert cp.returncode == 2, (cp.stdout, cp.stderr)
    assert "clang LLVM=1 allmodconfig W=1 could not run: clang, ld.lld, llvm-ar" in cp.stdout
    assert "(apt-get install clang lld llvm)" in cp.stdout
    assert "1 could not run: build-clang" in cp.stdout
    assert "Traceback" not in cp.stderr
    assert not (tmp_path / "build").exists()  # nothing was built
