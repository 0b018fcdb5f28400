"""selftest-lists: new net selftests listed, their lists in the CI's format.

The format rules (napipatch.kernel.ksftlists) on small texts, then the
check on commits of the 6.12 tree. NIPA's check_selftest, run by hand on
the same commits, failed the bad ones and passed the good ones (except
where it checks a whole 6.12 file that was never in its format, which the
info line counts).
"""

from __future__ import annotations

import pytest

from conftest import ROOT, check_findings, check_json, edit, nipa_states, one_patch
from napipatch.kernel.ksftlists import config_problems, gitignore_problems, makefile_problems

FIX = ROOT / "tests" / "fixtures" / "checks"
DRV = "tools/testing/selftests/drivers/net"
NET = "tools/testing/selftests/net"


def _msgs(problems):
    return [(p.line, p.message) for p in problems]


def test_a_makefile_list_in_the_ci_format_has_no_problem():
    text = ("TEST_PROGS := \\\n\tnetcons_basic.sh \\\n\tping.py \\\n\tqueues.py \\\n"
            "# end of TEST_PROGS\n\nTEST_INCLUDES := $(wildcard lib/py/*.py) \\\n"
            "\t\t ../../net/lib.sh \\\n\nCFLAGS += -O2 -Wall\n")
    assert makefile_problems(text) == []


def test_makefile_problems_each_at_its_line():
    text = ("TEST_PROGS := \\\n\tqueues.py \\\n\tping.py \\\n  stats.py \\\n\ta.sh b.sh \\\n"
            "# end\n\nTEST_PROGS += late.sh\n"
            "TEST_FILES := \\\n\tx.sh \\\n\ty.sh\n")
    # "  stats.py \\": two blanks, no tab; what follows the first one is
    # stripped with the " \\", as the CI does
    assert _msgs(makefile_problems(text)) == [
        (3, "TEST_PROGS: 'ping.py' should come before 'queues.py'"),
        (4, "TEST_PROGS: 'stats.py' is not indented with a tab"),
        (5, "TEST_PROGS: 'a.sh b.sh' holds more than one item or a stray blank (one item a "
            "line, after one tab)"),
        (5, "TEST_PROGS: 'a.sh b.sh' should come before 'stats.py'"),
        (8, "TEST_PROGS is assigned in more than one block (one list a variable)"),
        (11, "TEST_FILES: the list does not end with a '# end of TEST_FILES' comment line"),
    ]


def test_consecutive_appends_are_one_block_sorted_by_depth_too():
    # the CI takes "shallower first, then case-blind" as sorted as well as
    # plain text, and reads TEST_X += lines one after another as one list
    text = ("TEST_GEN_FILES += \\\n\tB.c \\\n\ta.c \\\n\tz.c \\\n\tlib/a.c \\\n"
            "# end of TEST_GEN_FILES\nTEST_X := one\nTEST_X += two\n")
    assert _msgs(makefile_problems(text)) == [
        (8, "TEST_X: the list does not end with a '# end of TEST_X' comment line")]


def test_config_and_gitignore_order():
    assert _msgs(config_problems("CONFIG_NET_NS=y\n# CONFIG_X is not set\nCONFIG_BONDING=m\n"
                                 "CONFIG_IPV6=y\n")) == [
        (3, "CONFIG_BONDING=m should come before CONFIG_NET_NS=y")]
    # underscores do not count: NET_SCH_FQ after NETDEVSIM is sorted
    assert config_problems("CONFIG_NETDEVSIM=m\nCONFIG_NET_SCH_FQ=m\n") == []
    assert _msgs(gitignore_problems("# SPDX\nsocket\nso_netns_cookie\nbind_wildcard\n")) == [
        (4, "bind_wildcard should come before so_netns_cookie")]


@pytest.mark.tree
def test_bad_fixture_with_the_tree(cli, kernel_tree):
    got = check_findings(cli, FIX / "selftest-lists" / "bad.mbox", "selftest-lists",
                         "--tree", kernel_tree)
    assert sorted((f["severity"], f["file"], f["line"], f["message"]) for f in got) == [
        ("error", f"{DRV}/config", 7, f"{DRV}/config: CONFIG_BPF_SYSCALL=y should come before "
                                     "CONFIG_NETCONSOLE_EXTENDED_LOG=y"),
        ("error", f"{DRV}/napi_threaded.sh", 1, f"napi_threaded.sh is not in {DRV}/Makefile"),
        ("info", f"{DRV}/config", None, f"{DRV}/config: 1 format problem this patch did not add "
                                        "(the netdev CI checks the whole file)"),
    ]


@pytest.mark.tree
def test_good_fixture_with_the_tree(cli, kernel_tree):
    assert check_findings(cli, FIX / "selftest-lists" / "good.mbox", "selftest-lists",
                          "--tree", kernel_tree) == []


@pytest.mark.tree
def test_an_unsorted_item_in_a_clean_list(cli, kernel_tree, base_commit, tmp_path):
    mk = edit(kernel_tree, base_commit, f"{DRV}/Makefile", "\tstats.py \\\n",
              "\tstats.py \\\n\tirq.py \\\n")
    changes = {f"{DRV}/Makefile": mk, f"{DRV}/irq.py": "#!/usr/bin/env python3\n"}
    d, _ = one_patch(kernel_tree, base_commit, tmp_path, changes, "selftests: drv-net: irq")
    want = [("error", f"{DRV}/Makefile", 12,
             f"{DRV}/Makefile: TEST_PROGS: 'irq.py' should come before 'stats.py'")]
    got = check_findings(cli, d, "selftest-lists", "--tree", kernel_tree)
    assert [(f["severity"], f["file"], f["line"], f["message"]) for f in got] == want
    # the same from the diff alone: the hunk's items belong to the list its header names
    got = check_findings(cli, d, "selftest-lists")
    assert [(f["severity"], f["file"], f["line"], f["message"]) for f in got] == want


@pytest.mark.tree
def test_new_binary_needs_gitignore_and_a_lib_file_is_covered_above(cli, kernel_tree,
                                                                     base_commit, tmp_path):
    mk = edit(kernel_tree, base_commit, f"{DRV}/Makefile", "\tstats.py \\\n",
              "\tstats.py \\\n\ttoeplitz \\\n")
    changes = {f"{DRV}/Makefile": mk,
               f"{DRV}/toeplitz.c": "// SPDX-License-Identifier: GPL-2.0\nint main(void)\n{\n}\n",
               f"{DRV}/lib/py/napi_util.py": "\"\"\"NAPI helpers.\"\"\"\n"}
    d, _ = one_patch(kernel_tree, base_commit, tmp_path, changes, "selftests: drv-net: toeplitz")
    got = check_findings(cli, d, "selftest-lists", "--tree", kernel_tree)
    assert sorted((f["severity"], f["file"], f["message"]) for f in got) == [
        ("error", f"{DRV}/toeplitz.c", f"toeplitz is not in {DRV}/.gitignore"),
        ("info", f"{DRV}/lib/py/napi_util.py", f"napi_util.py is not in {DRV}/lib/py/Makefile, but "
                                          f"{DRV}/Makefile covers it (the netdev CI looks only "
                                          "in the file's own directory and would fail)"),
    ]


@pytest.mark.tree
def test_outside_net_is_not_the_ci_s_business(cli, kernel_tree, base_commit, tmp_path):
    d, _ = one_patch(kernel_tree, base_commit, tmp_path,
                     {"tools/testing/selftests/bpf/new_test.sh": "#!/bin/sh\n"},
                     "selftests: bpf: a test")
    assert check_findings(cli, d, "selftest-lists", "--tree", kernel_tree) == []


@pytest.mark.tree
def test_what_nipa_s_check_selftest_would_post(cli, kernel_tree, base_commit, tmp_path):
    """check_selftest has only success and fail: a file only a parent's
    Makefile covers fails there; a .gitignore's order is napipatch's own;
    problems the patch did not add, or a Makefile not read, leave it unknown."""
    def run(changes, name, *args):
        d, _ = one_patch(kernel_tree, base_commit, tmp_path, changes, f"selftests: {name}",
                         name=name)
        data = check_json(cli, d, "selftest-lists", *args)
        return [f["severity"] for f in data["findings"]], nipa_states(data, "check_selftest")

    tree = ("--tree", kernel_tree)
    assert run({f"{DRV}/lib/py/napi_util.py": "\"\"\"NAPI.\"\"\"\n"}, "lib", *tree) == \
        (["info"], ["fail"])
    config = edit(kernel_tree, base_commit, f"{DRV}/config", "CONFIG_NETCONSOLE_EXTENDED_LOG=y",
                  "CONFIG_NETCONSOLE_EXTENDED_LOG=y\nCONFIG_VXLAN=m")
    assert run({f"{DRV}/config": config}, "config", *tree) == (["info"], ["unknown"])
    assert run({f"{DRV}/.gitignore": "zeta\nalpha\n"}, "gitignore", *tree) == \
        (["warning"], ["success"])
    assert run({f"{DRV}/irq.py": "#!/usr/bin/env python3\n"}, "notree") == \
        (["warning"], ["unknown"])
