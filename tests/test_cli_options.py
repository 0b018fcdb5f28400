"""The options every command shares mean one thing everywhere: --only and
--skip take check ids repeated or comma separated, alike, on `check` and
`test`; --tree names the tree (--repo is a hidden old name for it);
`napipatch --version` says what napipatch found."""

from __future__ import annotations

import json

import pytest
from conftest import LORE

V4 = LORE / "threaded-busy-poll-v4.mbox"


def _ids(cp) -> set[str]:
    assert cp.returncode in (0, 1), cp.stderr
    return {c["id"] for c in json.loads(cp.stdout)["checks"]}


def test_only_is_repeatable_and_comma_separated_alike(cli):
    both = cli("check", V4, "--only", "subject", "--only", "signoff,split", "--format", "json")
    assert _ids(both) == {"subject", "signoff", "split"}  # the first --only is not dropped
    skip = cli("check", V4, "--only", "subject,signoff,split", "--skip", "split",
               "--skip", "signoff", "--format", "json")
    assert _ids(skip) == {"subject"}


@pytest.mark.parametrize("args", [
    ("check", str(V4), "--only", "subject,w1"),
    ("test", "warnings", str(V4), "--tree", ".", "--only", "32bit"),
    ("test", "build", str(V4), "--tree", ".", "--skip", "nope"),
])
def test_an_unknown_id_is_one_line_everywhere(cli, args):
    cp = cli(*args)
    assert cp.returncode == 2, (cp.stdout, cp.stderr)
    line, = cp.stderr.splitlines()
    assert "no such check (known: " in line and "build-32bit" in line, line


def test_the_tree_is_named_tree_and_repo_is_a_hidden_old_name(cli, tmp_path):
    for cmd in (["check"], ["send"], ["hook", "install"], ["series", "export"],
                ["series", "apply"], ["test", "build"], ["test", "warnings"]):
        shown = cli(*cmd, "--help").stdout
        assert "--tree" in shown and "--repo" not in shown, cmd
    cp = cli("series", "apply", "x", "--repo", tmp_path / "a", "--tree", tmp_path / "b")
    assert cp.returncode == 2
    assert cp.stderr.startswith("napipatch: error: --repo: is another name for --tree"), cp.stderr
    # the old name still works where the new one does
    old = cli("check", V4, "--repo", tmp_path / "nothing", "--only", "apply")
    new = cli("check", V4, "--tree", tmp_path / "nothing", "--only", "apply")
    assert (old.returncode, old.stderr) == (new.returncode, new.stderr) and old.returncode == 2


def test_version_names_napipatch_and_the_tools_it_found(cli):
    cp = cli("--version")
    assert cp.returncode == 0, cp.stderr
    got = dict(line.split(None, 1) for line in cp.stdout.splitlines())
    assert got["napipatch"] == "0.1.0"
    assert got["git"][0].isdigit() and got["b4"] == "0.16.0"
    assert set(got) >= {"python", "ruff", "pylint", "yamllint", "shellcheck", "patatt"}


def test_job_checks_are_listed_and_documented_like_the_others(cli):
    listed = cli("checks", "list").stdout
    for cid in ("build", "boot", "selftest", "remote", "build-w1", "sparse", "build-32bit",
                "build-clang", "cocci", "htmldocs", "ynl-build", "build-tools", "dt-binding-check",
                "kunit"):
        assert any(line.split()[0] == cid for line in listed.splitlines()), cid
        doc = cli("checks", "doc", cid)
        assert doc.returncode == 0 and "What it catches:" in doc.stdout and "Fix:" in doc.stdout
    assert "build-w1       patch  build" in listed
    # the job it reads, from the job registry
    assert "\njob: warnings-w1: gcc x86_64 allmodconfig W=1 C=1 on the objects each patch can " \
        "change\n" in cli("checks", "doc", "sparse").stdout
