"""Remembering an apply: the commits a series made on a base, reused
while every one of them is still in the repository.

The commits are a function of the base and the patch texts (fixed dates
and identity, apply.py), so a re-check of an unchanged series skips
applying. An entry is a file ``applied/KEY.json`` in the cache directory.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict
from pathlib import Path

from napipatch import fileio
from napipatch.mails.series import Series
from napipatch.tree import gitutil
from napipatch.tree.applied import Applied, ApplyFailure


def entry(cache: Path, sha: str, series: Series) -> Path:
    """The cache file for ``series`` applied on ``sha``."""
    h = hashlib.sha256(f"apply-v2\0{sha}\0".encode())
    for p in series.patches:
        h.update(p.as_format_patch().encode(errors="replace") + b"\0")
    return cache / "applied" / f"{h.hexdigest()}.json"


def _all_commits(repo: Path, shas: list[str]) -> bool:
    cp = gitutil.git(repo, "cat-file", "--batch-check", input="\n".join(shas) + "\n",
                     check=False)
    return cp.returncode == 0 and \
        [ln.split()[1:2] for ln in cp.stdout.splitlines()] == [["commit"]] * len(shas)


def load(f: Path, res: Applied, patches: int) -> Applied | None:
    """``res`` with the recorded commits, if the entry is whole (one commit
    or None per patch) and every commit is still in the repository."""
    try:
        data = json.loads(f.read_text())
        commits = data["commits"]
        failure = ApplyFailure(**data["failure"]) if data["failure"] else None
    except (OSError, ValueError, TypeError, KeyError):
        return None
    if not isinstance(commits, list) or len(commits) != patches \
            or not all(c is None or isinstance(c, str) for c in commits):
        return None
    have = [c for c in commits if c]
    if have and not _all_commits(res.repo, have):
        return None    # garbage-collected: apply again
    res.commits, res.failure = list(commits), failure
    return res


def save(f: Path, res: Applied) -> None:
    f.parent.mkdir(parents=True, exist_ok=True)
    fileio.atomic_write(f, json.dumps({"commits": res.commits,
                                       "failure": asdict(res.failure) if res.failure else None}))
