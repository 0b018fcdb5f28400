"""Every check runs on its good and bad fixtures: the bad one is flagged by
that check, the good one is not.

tests/fixtures/checks/<id>/ holds good.mbox, bad.mbox and bad.expected
("severity patch message-substring", one finding per line). bad.mbox must
give exactly the findings listed; good.mbox gives none, or only the infos
listed in good.expected (a check that always reports what it looked at,
e.g. ynl's "4 files match"). Checks that need only the diff run on the mbox
alone; the others (apply, checkpatch, ynl, callsites, leftover) run with
--tree on the 6.12 tree, whose fixtures are made by make_tree_fixtures.py
in that directory. The check's own test module has the finer cases.
"""

import json
from pathlib import Path

import pytest

from napipatch.engine.registry import discover

FIX = Path(__file__).parent / "fixtures" / "checks"
CHECKS = discover()
DIFF_ONLY = sorted(i for i, c in CHECKS.items() if c.needs == "diff")
WITH_TREE = sorted(i for i, c in CHECKS.items() if c.needs != "diff")


def _expected(path: Path) -> list[tuple[str, int, str]]:
    if not path.exists():
        return []
    out = []
    for line in path.read_text().splitlines():
        sev, patch, text = line.split(" ", 2)
        out.append((sev, int(patch), text))
    return out


def _findings(cli, mbox: Path, check_id: str, *args) -> list[dict]:
    cp = cli("check", mbox, "--only", check_id, "--format", "json", *args)
    assert cp.returncode in (0, 1), cp.stderr
    data = json.loads(cp.stdout)
    status = {c["id"]: c["status"] for c in data["checks"]}
    assert status.get(check_id) in ("pass", "info", "warn", "fail"), (mbox, status)
    return [f for f in data["findings"] if f["check"] == check_id]


def _match(got: list[dict], expected: list[tuple[str, int, str]], what: str) -> None:
    """Every expected finding matches one finding of its own, and none is left over."""
    left = list(got)
    for sev, patch, text in expected:
        hit = next((f for f in left if f["severity"] == sev and f["patch"] == patch
                    and text in f["message"]), None)
        assert hit, (what, "missing", sev, patch, text, left)
        left.remove(hit)
    assert left == [], (what, "unexpected", left)


def _good_and_bad(cli, check_id: str, *args) -> None:
    d = FIX / check_id
    assert CHECKS[check_id].doc, f"check {check_id} has no docstring"
    good, bad = _expected(d / "good.expected"), _expected(d / "bad.expected")
    assert all(sev == "info" for sev, _, _ in good), "a good fixture has no warning or error"
    assert set(bad) - set(good), "bad.expected must hold a finding the good fixture lacks"
    _match(_findings(cli, d / "good.mbox", check_id, *args), good, f"{check_id}/good.mbox")
    _match(_findings(cli, d / "bad.mbox", check_id, *args), bad, f"{check_id}/bad.mbox")


def test_every_fixture_directory_is_a_check():
    assert sorted(p.name for p in FIX.iterdir() if p.is_dir()) == sorted(CHECKS)


@pytest.mark.parametrize("check_id", DIFF_ONLY)
def test_diff_check_flags_its_bad_fixture_only(cli, check_id):
    _good_and_bad(cli, check_id)


@pytest.mark.tree
@pytest.mark.parametrize("check_id", WITH_TREE)
def test_tree_check_flags_its_bad_fixture_only(cli, kernel_tree, check_id):
    _good_and_bad(cli, check_id, "--tree", kernel_tree)
