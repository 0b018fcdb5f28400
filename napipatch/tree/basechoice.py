"""Which commit a series is applied on: its own base-commit when the tree
has it, else the one the user named, else HEAD, with the reason said."""

from __future__ import annotations

from pathlib import Path

from napipatch.errors import NapipatchError
from napipatch.mails.series import Series
from napipatch.tree import gitutil


def choose_base(repo: Path, series: Series, base: str | None) -> tuple[str, str]:
    """(commit, why): the series' base-commit when the tree has it, else
    --base, else HEAD."""
    bc = series.base_commit
    if bc:
        sha = gitutil.resolve(repo, bc)
        if sha:
            return sha, f"base-commit {bc[:12]}"
    if base:
        sha = gitutil.resolve(repo, base)
        if not sha:
            raise NapipatchError(base, f"no such revision in {repo}")
        return sha, f"--base {base}"
    sha = gitutil.resolve(repo, "HEAD")
    if not sha:
        raise NapipatchError(repo, "has no commits")
    why = "HEAD"
    if bc:
        why = f"HEAD (base-commit {bc[:12]} is not in the tree)"
    return sha, why
