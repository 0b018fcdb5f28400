"""checkpatch on the real 6.12 tree, and the trusted-scripts guarantee."""

import json
import uuid
from pathlib import Path

import pytest

from conftest import commit_files, edit, format_patch

pytestmark = pytest.mark.tree


def _check(cli, d, tree, *extra):
    cp = cli("check", d, "--tree", tree, "--format", "json", *extra)
    assert cp.returncode in (0, 1), cp.stderr
    return json.loads(cp.stdout)


def test_checkpatch_finding_has_file_and_line(cli, kernel_tree, base_commit, tmp_path):
    path = "net/core/dev.c"
    text = edit(kernel_tree, base_commit, path, "static DEFINE_SPINLOCK(napi_hash_lock);",
                "static DEFINE_SPINLOCK(napi_hash_lock);\nint  napipatch_unused_with_a_name_long_enough_to_pass_the_eighty_columns_limit_x = 1 ;")
    c = commit_files(kernel_tree, base_commit, {path: text}, "net: core: add a badly styled line\n\nFor a test.\n")
    d = format_patch(kernel_tree, f"{base_commit}..{c}", tmp_path / "p")
    data = _check(cli, d, kernel_tree, "--only", "checkpatch")
    got = {(f["file"], f["line"], f["message"].split(":")[0]) for f in data["findings"]}
    line = text.splitlines().index(
        "int  napipatch_unused_with_a_name_long_enough_to_pass_the_eighty_columns_limit_x = 1 ;") + 1
    assert (path, line, "SPACING") in got
    assert (path, line, "LONG_LINE") in got


def test_clean_patch_has_no_checkpatch_findings(cli, kernel_tree, base_commit, tmp_path):
    path = "net/core/dev.c"
    text = edit(kernel_tree, base_commit, path, "static DEFINE_SPINLOCK(napi_hash_lock);",
                "static DEFINE_SPINLOCK(napi_hash_lock); /* napi_hash and its ids */")
    c = commit_files(kernel_tree, base_commit, {path: text}, "net: core: comment napi_hash_lock\n\nSay what it protects.\n")
    d = format_patch(kernel_tree, f"{base_commit}..{c}", tmp_path / "p",
                     "--subject-prefix=PATCH net-next")
    # (cc-maintainers would say the mail is not addressed yet)
    data = _check(cli, d, kernel_tree, "--skip", "cc-maintainers")
    assert data["findings"] == [], data["findings"]
    assert {c["id"]: c["status"] for c in data["checks"]}["checkpatch"] == "pass"


def test_patched_checkpatch_never_runs(cli, kernel_tree, base_commit, tmp_path):
    """A patch that rewrites scripts/checkpatch.pl to write outside the tree."""
    victim = Path("/tmp") / f"napipatch-pwned-{uuid.uuid4().hex}"
    script = f'#!/usr/bin/env perl\nopen(my $f, ">", "{victim}"); print $f "pwned\\n"; close($f);\n'
    c = commit_files(kernel_tree, base_commit, {"scripts/checkpatch.pl": script},
                     "scripts: checkpatch: replace it\n\nHostile.\n")
    d = format_patch(kernel_tree, f"{base_commit}..{c}", tmp_path / "p")
    data = _check(cli, d, kernel_tree)
    assert not victim.exists(), "the patched checkpatch.pl ran"
    status = {c["id"]: c["status"] for c in data["checks"]}
    assert status["apply"] == "pass" and status["checkpatch"] != "skipped"


def _typo_series(kernel_tree, base_commit, tmp_path):
    path = "net/core/dev.c"
    text = edit(kernel_tree, base_commit, path, "static DEFINE_SPINLOCK(napi_hash_lock);",
                "static DEFINE_SPINLOCK(napi_hash_lock); /* proctects the napi hash */")
    c = commit_files(kernel_tree, base_commit, {path: text},
                     "net: core: comment napi_hash_lock\n\nSay what it protects.\n")
    return format_patch(kernel_tree, f"{base_commit}..{c}", tmp_path / "p",
                        "--subject-prefix=PATCH net-next"), text.splitlines().index(
        "static DEFINE_SPINLOCK(napi_hash_lock); /* proctects the napi hash */") + 1


def test_codespell_finds_what_the_netdev_ci_finds(cli, kernel_tree, base_commit, tmp_path):
    """NIPA runs checkpatch --codespell: a typo in a new comment is a finding."""
    from napipatch.checks.checkpatch import codespell_dictionary
    assert codespell_dictionary() is not None, "codespell is not installed (scripts/install.sh)"
    d, line = _typo_series(kernel_tree, base_commit, tmp_path)
    data = _check(cli, d, kernel_tree, "--only", "checkpatch")
    got = [(f["file"], f["line"], f["message"]) for f in data["findings"]]
    assert got == [("net/core/dev.c", line,
                    "TYPO_SPELLING: 'proctects' may be misspelled - perhaps 'protects'?")], got


def test_without_a_dictionary_checkpatch_says_so_once(kernel_tree, base_commit, tmp_path,
                                                      monkeypatch):
    """No codespell: checkpatch still runs, and one warning says spelling was not checked."""
    import napipatch.checks.checkpatch as mod
    from napipatch import config as configmod
    from napipatch.engine import run as runmod
    from napipatch.mails.mail import read_patch_dir
    from napipatch.mails.series import assemble
    monkeypatch.setattr(mod, "codespell_dictionary", lambda: None)   # forked units inherit it
    d, _line = _typo_series(kernel_tree, base_commit, tmp_path)
    series = assemble(read_patch_dir(d), str(d))
    cfg = configmod.Config(cache_dir=str(tmp_path / "cache"))
    report = runmod.run_checks(series, cfg, tree=kernel_tree, only=["checkpatch"],
                               use_cache=False)
    assert [(f.severity.value, f.patch, f.message.split(":")[0]) for f in report.findings] == \
        [("warning", 1, "no codespell dictionary on this machine")]
