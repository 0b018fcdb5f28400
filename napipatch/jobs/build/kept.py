"""A directory of the shared build root that a job holds for its whole run
(``build root / tree / NAME``): locked while entered, so two napipatch
processes never build in it at once, and with its results kept as JSON,
so a commit already judged is not built again."""

from __future__ import annotations

import json
from contextlib import ExitStack
from pathlib import Path

from napipatch.fileio import locked
from napipatch.jobs.build.builder import build_root, tree_key


class KeptTree:
    def __init__(self, repo: Path, cache: Path, *name: str):
        self.root = build_root(cache) / tree_key(repo) / Path(*name)
        self._held = ExitStack()

    def __enter__(self):
        self.root.mkdir(parents=True, exist_ok=True)
        self._held = ExitStack()
        # held for a whole job, which may build for an hour: wait as long as it takes
        self._held.enter_context(locked(self.root / "lock", timeout=None, remove=False))
        return self

    def __exit__(self, *exc):
        self._held.close()

    def kept(self, key: str) -> dict | list | None:
        """The result kept under ``key``, or None."""
        done = self.root / "results" / f"{key}.json"
        return json.loads(done.read_text()) if done.exists() else None

    def keep(self, key: str, data: dict | list) -> None:
        """Keep ``data`` under ``key``, whole or not at all."""
        done = self.root / "results" / f"{key}.json"
        done.parent.mkdir(parents=True, exist_ok=True)
        tmp = done.with_suffix(".tmp")
        tmp.write_text(json.dumps(data))
        tmp.replace(done)
