"""Where netdev developers work: format-patch -vN directories, standard
input, b4's per-patch check commands, the current repository."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from conftest import format_patch, git, small_repo


def _series_repo(path: Path, subjects=("net: a: set a", "net: b: set b")) -> tuple[Path, str]:
    """A repository with a base commit and one commit per subject; (repo, base)."""
    repo = small_repo(path)
    (repo / "a.c").write_text("int a;\n")
    (repo / "b.c").write_text("int b;\n")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "base")
    base = git(repo, "rev-parse", "HEAD")
    for i, subj in enumerate(subjects):
        f = repo / ("a.c" if i % 2 == 0 else "b.c")
        f.write_text(f.read_text() + f"int x{i};\n")
        git(repo, "commit", "-q", "-am", f"{subj}\n\nBody {i}.\n\nSigned-off-by: T <t@example.org>")
    return repo, base


def test_format_patch_v2_directory_with_other_files(cli, tmp_path):
    repo, base = _series_repo(tmp_path / "repo")
    out = format_patch(repo, f"{base}..HEAD", tmp_path / "outgoing", "-v2", "--cover-letter",
                       "--subject-prefix=PATCH net-next")
    names = sorted(p.name for p in out.iterdir())
    assert names[0] == "v2-0000-cover-letter.patch" and names[1].startswith("v2-0001-")
    (out / "notes.txt").write_text("to: netdev\n")
    (out / "v2-0000-cover-letter.patch.orig").write_text("junk\n")
    data = json.loads(cli("check", out, "--only", "subject", "--format", "json").stdout)
    assert data["series"]["version"] == 2
    assert [p["subject"] for p in data["series"]["patches"]] == [
        "[PATCH net-next v2 1/2] net: a: set a", "[PATCH net-next v2 2/2] net: b: set b"]
    cp = cli("series", "import", out, "--name", "ab", check=0)
    assert "ab/v2:" in cp.stdout and "(2 patches, cover letter)" in cp.stdout
    assert sorted(p.name for p in (cli.store / "ab" / "v2").iterdir())[1] == "0001-net-a-set-a.patch"
