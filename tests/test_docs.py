"""The README stays a front door and the docs stay true to the code.

README.md opens with the two commands (install and run the main job; the
test suite) and CI runs exactly its test command; every link between the
docs resolves, every command of the CLI is documented somewhere, and every
file of this repository the docs name exists.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import typer

from conftest import ROOT
from napipatch.cli import app

README = ROOT / "README.md"
DOCS = [README, ROOT / "benchmarks" / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
MAX_README_LINES = 220


def _code_blocks(text: str) -> list[str]:
    return re.findall(r"^```[a-z]*\n(.*?)^```", text, re.S | re.M)


def test_readme_is_short_and_opens_with_the_two_commands():
    text = README.read_text()
    assert len(text.splitlines()) <= MAX_README_LINES
    install, tests = _code_blocks(text)[:2]
    assert install.strip() == "scripts/install.sh && .venv/bin/napipatch check " \
                              "series/threaded-busy-poll-6.12@v4 --tree ~/.cache/napipatch/linux-6.12"
    assert tests.strip() == "scripts/test"
    # .ci/run installs as the README says, then runs exactly its test command.
    ci = [ln for ln in (ROOT / ".ci" / "run").read_text().splitlines()
          if ln and not ln.startswith(("#", "set ", "cd "))]
    assert ci == ["bash scripts/install.sh", tests.strip()]


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to -."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def _links(doc: Path):
    for target in re.findall(r"\]\(([^)\s]+)\)", doc.read_text()):
        if not re.match(r"[a-z]+:", target):
            yield target


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_link_resolves(doc):
    for target in _links(doc):
        path, _, anchor = target.partition("#")
        dest = (doc.parent / path).resolve() if path else doc
        assert dest.exists(), f"{doc.name}: link to {target}: no such file"
        if anchor and dest.suffix == ".md":
            headings = re.findall(r"^#+ (.*)$", dest.read_text(), re.M)
            assert anchor in {_slug(h) for h in headings}, f"{doc.name}: no heading #{anchor}"


def _commands(cmd, prefix):
    subs = getattr(cmd, "commands", None)
    if not subs:
        yield " ".join(prefix)
        return
    for name, sub in subs.items():
        yield from _commands(sub, prefix + [name])


def test_every_command_is_documented():
    text = " ".join(" ".join(d.read_text() for d in DOCS).split())
    commands = list(_commands(typer.main.get_command(app), ["napipatch"]))
    assert len(commands) > 20
    assert [c for c in commands if c not in text] == []


# Paths of this repository a document may name (kernel paths such as
# scripts/checkpatch.pl or tools/net/ynl/ are the kernel tree's).
OURS = ("napipatch/", "tests/", "benchmarks/", "checks/", "templates/", "targets/", "series/")


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_repository_path_named_exists(doc):
    missing = []
    for span in re.findall(r"`([^`\s]+)`", doc.read_text()):
        path = span.split("::")[0].rstrip(".,:;)")
        if not path.startswith(OURS) or re.search(r"[A-Z]{2,}|[<>*{]", path):
            continue  # placeholders: series/NAME/vN, tests/test_check_<id>.py
        if not (ROOT / path).exists():
            missing.append(span)
    assert missing == [], f"{doc.name} names files that do not exist"


def test_the_readme_checks_table_is_the_registrys():
    """The table is made from the checks' declarations, never kept by hand."""
    from napipatch.cli.check import checks_table
    from napipatch.engine.registry import discover

    table = checks_table(discover().values())
    readme = (ROOT / "README.md").read_text()
    assert table in readme, ("README.md's checks table differs from the registry: paste the "
                             "output of `napipatch checks list --format markdown`")
