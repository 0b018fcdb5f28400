"""maintainers on the real 6.12 tree: a new file's smallest MAINTAINERS section.

NIPA's tests/series/maintainers: success when a section of 1-74 files
covers each new file; a warning otherwise, a fail when the smallest is
500 files or more.
"""

import pytest

from conftest import check_findings, commit_files, format_patch, git

pytestmark = pytest.mark.tree

C = "// SPDX-License-Identifier: GPL-2.0\nint acme;\n"


def _series(cli, tree, base, changes, tmp_path, name="p"):
    c = commit_files(tree, base, changes, "net: acme: add a driver\n\nNew code.\n")
    d = format_patch(tree, f"{base}..{c}", tmp_path / name, "--subject-prefix=PATCH net-next")
    return check_findings(cli, d, "maintainers", "--tree", tree)


def _with_entry(tree, base, entry):
    text = git(tree, "cat-file", "blob", f"{base}:MAINTAINERS") + "\n"
    return text.replace("ACER ASPIRE", entry + "\nACER ASPIRE", 1)


def test_new_driver_under_the_subsystem_entry_fails(cli, kernel_tree, base_commit, tmp_path):
    got = _series(cli, kernel_tree, base_commit,
                  {"drivers/net/ethernet/acme/acme_main.c": C,
                   "drivers/net/ethernet/acme/Makefile": "obj-y += acme_main.o\n",
                   "Documentation/networking/device_drivers/ethernet/acme.rst": "ACME\n"},
                  tmp_path)
    assert [(f["severity"], f["file"]) for f in got] == \
        [("error", "drivers/net/ethernet/acme/acme_main.c")], got
    assert "NETWORKING DRIVERS, covers 500+ files" in got[0]["message"]


def test_new_driver_with_its_own_entry_passes(cli, kernel_tree, base_commit, tmp_path):
    entry = ("ACME ETHERNET DRIVER\nM:\tAda <ada@example.org>\nL:\tnetdev@vger.kernel.org\n"
             "S:\tMaintained\nF:\tdrivers/net/ethernet/acme\n")   # no trailing /: a directory
    got = _series(cli, kernel_tree, base_commit,
                  {"drivers/net/ethernet/acme/acme_main.c": C,
                   "MAINTAINERS": _with_entry(kernel_tree, base_commit, entry)}, tmp_path)
    assert got == []


def test_a_mid_sized_section_is_a_warning(cli, kernel_tree, base_commit, tmp_path):
    # A section of 75..499 files: NIPA warns ("Intel and nVidia drivers").
    files = {f"drivers/net/ethernet/acme/f{i:03}.c": C for i in range(80)}
    entry = ("ACME ETHERNET DRIVER\nM:\tAda <ada@example.org>\nS:\tMaintained\n"
             "F:\tdrivers/net/ethernet/acme/\n")
    base = commit_files(kernel_tree, base_commit,
                        {**files, "MAINTAINERS": _with_entry(kernel_tree, base_commit, entry)},
                        "net: acme: a big driver\n\nFor a test.\n")
    got = _series(cli, kernel_tree, base, {"drivers/net/ethernet/acme/new.c": C}, tmp_path)
    assert [(f["severity"], f["file"]) for f in got] == \
        [("warning", "drivers/net/ethernet/acme/new.c")], got
    assert "ACME ETHERNET DRIVER, covers 81 files" in got[0]["message"]


def test_many_new_files_with_one_verdict_are_one_finding(cli, kernel_tree, base_commit,
                                                         tmp_path):
    files = {f"drivers/net/ethernet/acme/f{i:02}.c": C for i in range(20)}
    got = _series(cli, kernel_tree, base_commit, files, tmp_path)
    assert [(f["severity"], f["file"]) for f in got] == \
        [("error", "drivers/net/ethernet/acme/f00.c")], got
    assert "and 19 more new file(s)" in got[0]["message"]
    assert got[0]["details"].split("\n") == sorted(files)


def test_selftests_docs_and_changed_files_are_not_judged(cli, kernel_tree, base_commit,
                                                         tmp_path):
    dev = git(kernel_tree, "cat-file", "blob", f"{base_commit}:net/core/gro_cells.c") + "\n"
    got = _series(cli, kernel_tree, base_commit,
                  {"tools/testing/selftests/net/acme.sh": "#!/bin/sh\n",
                   "net/core/gro_cells.c": dev + "/* end */\n"}, tmp_path)
    assert got == []
