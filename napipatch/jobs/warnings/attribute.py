"""Which patch of a series a line of the series' tip comes from.

Coccinelle and the documentation build run once per series, base against
tip, as the netdev CI's contest does; a new report is then put on the patch
that last wrote its line (``git blame base..tip``), or, for a line that
came from the base, on the last patch that touched its file.
"""

from __future__ import annotations

from pathlib import Path

from napipatch.tree import gitutil


class Attributor:
    def __init__(self, repo: Path, base: str, commits: list[str]):
        self.repo, self.base, self.commits = repo, base, commits
        self.tip = commits[-1] if commits else base
        self._touch: dict[str, list[int]] = {}
        parents = [base] + commits[:-1]
        for i, (p, c) in enumerate(zip(parents, commits), 1):
            for path in gitutil.out(repo, "diff", "--no-renames", "--name-only", p,
                                    c).splitlines():
                self._touch.setdefault(path, []).append(i)

    def touching(self, path: str) -> list[int]:
        """The patches that change ``path``, in order."""
        return self._touch.get(path, [])

    def last_touch(self, path: str) -> int:
        return (self.touching(path) or [len(self.commits)])[-1]

    def patch_of(self, path: str | None, line: int | None) -> int:
        """1..N; the last patch when nothing better is known."""
        if not path:
            return len(self.commits)
        if not line:
            return self.last_touch(path)
        cp = gitutil.git(self.repo, "blame", "--porcelain", "-L", f"{line},{line}",
                         f"{self.base}..{self.tip}", "--", path, check=False)
        head = cp.stdout.split(" ", 1)[0] if cp.returncode == 0 else ""
        if head in self.commits:
            return self.commits.index(head) + 1
        return self.last_touch(path)

    def changed(self, pred) -> list[str]:
        """Files the series changes that ``pred`` accepts, sorted."""
        return sorted(p for p in self._touch if pred(p))
