"""The documentation a series touches, built with the kernel's own Sphinx
setup: new warnings only.

``make htmldocs SPHINXDIRS=<dir>`` for each top-level Documentation
directory holding a touched ``.rst`` (a netlink spec counts for
``networking``, whose spec pages are generated from it), at the base and at
the tip, in the kept worktree (``warntree``) with an O= directory whose
Sphinx environment is kept: after the first (full) build only the touched
files, made out of date on purpose, and what depends on them are read and
written again, so a run costs seconds, and both runs print the warnings of
the same files. A warning is new when the base's run did not print it
(file and message, without the line); it is put on the patch that wrote its
line (``attribute``).
"""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from napipatch.errors import NapipatchError
from napipatch.jobs.executor import OUTPUT, JobKind, JobResult
from napipatch.jobs.warnings.configs import missing, missing_line
from napipatch.jobs.warnings.job import could_not_run
from napipatch.jobs.warnings.seriesresult import Attributor, SeriesJob, series_result
from napipatch.jobs.warnings.tree import WarnTree
from napipatch.kernel.kbuildout import Diag, Paths
from napipatch.tree import gitutil

KIND = "htmldocs"
TOOLS = (("sphinx-build", "python3-sphinx"), ("make", "make"), ("python3", "python3"))
_WARN = re.compile(r"^(?P<file>/[^:\s]+):(?:(?P<line>\d+):)?(?:[^:]*:\d+:)? ?"
                   r"(?P<kind>WARNING|ERROR|CRITICAL|SEVERE|warning|error): (?P<msg>.*)$")


def sphinx_dir(path: str, exists) -> str | None:
    """The SPHINXDIRS entry that builds ``path`` (None: not a docs source)."""
    if path.startswith("Documentation/netlink/specs/") and path.endswith(".yaml"):
        return "networking"
    parts = path.split("/")
    if len(parts) < 3 or parts[0] != "Documentation" or not path.endswith(".rst"):
        return None
    return parts[1] if exists(f"Documentation/{parts[1]}/index.rst") else None


@dataclass
class DocsJob(SeriesJob):
    kinds: ClassVar[tuple[JobKind, ...]] = (JobKind(
        KIND, 5, "the kernel's Sphinx build of the touched documents, base against tip",
        queue="build", warnings=True, opt_in=True),)

    kind: str = KIND

    def run(self, progress) -> JobResult:
        t0 = time.monotonic()
        att = Attributor(self.repo, self.base, self.commits)
        tip_has = _exists(self.repo, att.tip)
        docs = att.changed(lambda p: sphinx_dir(p, tip_has) is not None)
        dirs = sorted({sphinx_dir(p, tip_has) for p in docs})
        if not dirs:
            return series_result(KIND, "htmldocs", att, [], [], [], 0.0,
                                 "no Documentation/ rst file changed")
        gone = missing(TOOLS)
        if gone:
            return could_not_run(OUTPUT, KIND, f"htmldocs could not run: {missing_line(gone)}",
                                 self.kind)
        try:
            with WarnTree(self.repo, self.cache, progress, self.jobs) as wt:
                before = self._build(wt, self.base, docs, dirs, "base")
                after = self._build(wt, att.tip, docs, dirs, "tip")
        except NapipatchError as exc:
            return could_not_run(OUTPUT, KIND, f"htmldocs could not run: {exc}", self.kind)
        return series_result(KIND, "htmldocs", att, before, after, docs,
                             round(time.monotonic() - t0, 1),
                             f"SPHINXDIRS={' '.join(dirs)} for {len(docs)} touched files")

    def _build(self, wt: WarnTree, commit: str, docs: list[str], dirs: list[str],
               label: str) -> list[Diag]:
        wt.checkout(commit)
        now = time.time()
        for p in docs:  # out of date for Sphinx: read (and warned about) again
            if (wt.src / p).exists():
                os.utime(wt.src / p, (now, now))
        obj = wt.root / "obj-docs"
        log = wt.log(f"htmldocs-{label}")
        wt.progress(f"htmldocs: building SPHINXDIRS={' '.join(dirs)} at {commit[:12]}")
        rc, lines = wt.make(obj, [f"SPHINXDIRS={' '.join(dirs)}", "htmldocs"], log, KIND,
                            progress=label)
        if rc != 0:
            tail = "\n".join(lines[-6:])
            raise NapipatchError(f"make htmldocs at {commit[:12]}", f"failed (log: {log})\n{tail}")
        paths = Paths(str(wt.src), str(obj))
        out: dict[tuple, Diag] = {}  # docutils says some warnings twice
        for line in lines:
            m = _WARN.match(line.strip())
            if m:
                d = Diag("sphinx", "warning", paths.rel(m.group("file")),
                         int(m.group("line") or 0) or None,
                         f"{m.group('kind').upper()}: {m.group('msg')}")
                out.setdefault((d.file, d.line, d.message), d)
        return list(out.values())


def _exists(repo: Path, commit: str):
    def has(path: str) -> bool:
        return gitutil.git(repo, "cat-file", "-e", f"{commit}:{path}",
                           check=False).returncode == 0
    return has
