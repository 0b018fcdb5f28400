"""Every check runs on its good and bad fixtures, so none goes stale.

tests/fixtures/checks/<id>/good.mbox must give no finding of that check;
bad.mbox must give exactly the findings listed in bad.expected
("severity patch message-substring", one per line). Checks that need a
tree have their own test module (tests/test_check_<id>.py) on the 6.12 tree.
"""

import json
from pathlib import Path

import pytest

from napipatch.engine.registry import discover

FIX = Path(__file__).parent / "fixtures" / "checks"
TESTS = Path(__file__).parent
CHECKS = discover()


def _findings(cli, mbox, check_id):
    cp = cli("check", mbox, "--only", check_id, "--format", "json")
    assert cp.returncode in (0, 1), cp.stderr
    data = json.loads(cp.stdout)
    return [f for f in data["findings"] if f["check"] == check_id]


@pytest.mark.parametrize("check_id", sorted(CHECKS))
def test_every_check_has_fixtures_or_tests(check_id):
    own = TESTS / f"test_check_{check_id.replace('-', '_')}.py"
    assert (FIX / check_id / "bad.mbox").is_file() or own.is_file(), \
        f"check {check_id} has neither fixtures nor a test module"
    assert CHECKS[check_id].doc, f"check {check_id} has no docstring"


@pytest.mark.parametrize("check_id", sorted(p.name for p in FIX.iterdir() if p.is_dir()))
def test_good_fixture_is_clean(cli, check_id):
    assert _findings(cli, FIX / check_id / "good.mbox", check_id) == []


@pytest.mark.parametrize("check_id", sorted(p.name for p in FIX.iterdir() if p.is_dir()))
def test_bad_fixture_gives_expected_findings(cli, check_id):
    expected = []
    for line in (FIX / check_id / "bad.expected").read_text().splitlines():
        sev, patch, text = line.split(" ", 2)
        expected.append((sev, int(patch), text))
    got = _findings(cli, FIX / check_id / "bad.mbox", check_id)
    assert len(got) == len(expected), got
    for sev, patch, text in expected:
        assert any(f["severity"] == sev and f["patch"] == patch and text in f["message"]
                   for f in got), (sev, patch, text, got)
