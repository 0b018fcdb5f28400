"""Coccinelle on the files a series touches: new reports only.

What ``make coccicheck MODE=report`` does (every semantic patch under
scripts/coccinelle, each with its ``// Options:``, skipped when its
``// Requires:`` names a newer spatch, ``--timeout 200`` from the tree's
.cocciconfig), limited to the series' ``.c`` and ``.h`` files, at the base
and at the tip, as the netdev CI's contest runs it (base against branch).
The semantic patches come from the trusted base (``tree.trusted``); the
checked files are exported per commit, with the headers of their
directories so that local includes resolve. The semantic patches NIPA
ignores as broken or too noisy are ignored here too.

A report is new when the base's run of the same files did not have it
(file and message, without the line); it is put on the patch that wrote its
line (``attribute``).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from napipatch import procs
from napipatch.jobs.build.builder import build_root, tree_key
from napipatch.jobs.executor import OUTPUT, JobKind, JobResult
from napipatch.jobs.warnings.configs import missing, missing_line
from napipatch.jobs.warnings.job import could_not_run
from napipatch.jobs.warnings.seriesresult import Attributor, SeriesJob, series_result
from napipatch.kernel.includers import kernel_file
from napipatch.kernel.kbuildout import Diag
from napipatch.tree import gitutil
from napipatch.tree.export import export_paths, is_exported
from napipatch.tree.trusted import scripts_root

KIND = "cocci"
TOOLS = (("spatch", "coccinelle"), ("ocamlfind", "ocaml-findlib"), ("ocamlopt", "ocaml-nox"))
# NIPA's contest ignores these (broken in report mode, or too many false positives).
IGNORED = ("minmax.cocci", "secs_to_jiffies.cocci", "mini_lock.cocci", "ff_race.cocci")
_REPORT = re.compile(r"^(?P<file>[^\s:]+):(?P<line>\d+):(?P<col>[\d-]+): (?P<msg>.+)$")
# Report lines coccicheck's users filter out (NIPA's clean_up_output).
_NOISE = re.compile(r": opportunity for str_|WARNING use flexible-array member instead")


@dataclass
class CocciJob(SeriesJob):
    kinds: ClassVar[tuple[JobKind, ...]] = (JobKind(
        KIND, 4, "coccicheck on the touched files, base against tip", queue="build",
        warnings=True, opt_in=True),)

    kind: str = KIND

    def run(self, progress) -> JobResult:
        t0 = time.monotonic()
        att = Attributor(self.repo, self.base, self.commits)
        files = att.changed(lambda p: p.endswith((".c", ".h")) and kernel_file(p))
        if not files:
            return series_result(KIND, "coccinelle", att, [], [], [], 0.0, "no C file changed")
        gone = missing(TOOLS)
        if gone:
            return could_not_run(OUTPUT, KIND, f"cocci could not run: {missing_line(gone)}",
                                 self.kind)
        trusted = scripts_root(self.repo, self.base, self.cache) / "scripts" / "coccinelle"
        scripts = sorted(p for p in trusted.rglob("*.cocci") if p.name not in IGNORED)
        before, f0 = self._reports(self.base, files, scripts, progress)
        after, f1 = self._reports(att.tip, files, scripts, progress)
        failed = sorted(set(f1) - set(f0))
        return series_result(KIND, "coccinelle", att, before, after, files,
                             round(time.monotonic() - t0, 1),
                             f"{len(scripts)} semantic patches on {len(files)} files",
                             notes=[f"{s} failed at the tip (not at the base)" for s in failed])

    def _reports(self, commit: str, files: list[str], scripts: list[Path], progress
                 ) -> tuple[list[Diag], list[str]]:
        """Every report of ``scripts`` on ``files`` at ``commit``, kept on disk
        (same commit, files and semantic patches: same reports)."""
        present = [f for f in files if gitutil.git(self.repo, "cat-file", "-e",
                                                   f"{commit}:{f}", check=False).returncode == 0]
        # the scripts' paths name the trusted base they come from
        key = hashlib.sha256(json.dumps([present, [str(s) for s in scripts],
                                         _spatch_version()]).encode()).hexdigest()[:12]
        dest = build_root(self.cache) / tree_key(self.repo) / "cocci" / f"{commit[:12]}-{key}"
        done = dest / ".napipatch-reports.json"
        if done.exists():
            data = json.loads(done.read_text())
            return [Diag.from_json(d) for d in data["reports"]], data["failed"]
        if not is_exported(dest):
            export_paths(self.repo, commit, _with_headers(self.repo, commit, present), dest)
        reports: list[Diag] = []
        failed: list[str] = []
        for i, s in enumerate(scripts, 1):
            progress(f"cocci {commit[:12]}: {s.name} ({i}/{len(scripts)})")
            got = self._spatch(s, present, dest)
            if got is None:
                failed.append(s.name)
            else:
                reports += got
        tmp = done.with_suffix(".tmp")
        tmp.write_text(json.dumps({"reports": [d.to_json() for d in reports], "failed": failed}))
        tmp.replace(done)
        return reports, failed

    def _spatch(self, script: Path, files: list[str], cwd: Path) -> list[Diag] | None:
        text = script.read_text(errors="replace")
        opts = re.search(r"^// Options:(.*)$", text, re.M)
        req = re.search(r"^// Requires:\s*(\S+)", text, re.M)
        if req and _version(req.group(1)) > _version(_spatch_version()):
            return []
        cmd = ["spatch", "-D", "report", "--no-show-diff", "--very-quiet", "--cocci-file",
               str(script), *(opts.group(1).split() if opts else []), "--timeout", "200",
               "--jobs", str(self.jobs), "--chunksize", "1", *files]
        try:
            cp = procs.run(cmd, timeout=1800, package="coccinelle", cwd=cwd,
                           env=dict(os.environ, LC_ALL="C"))
        except procs.ProcessTimeout:
            return None
        if cp.returncode != 0:
            return None
        out = []
        for line in cp.stdout.splitlines():
            m = _REPORT.match(line.strip())
            if m and not _NOISE.search(line):
                out.append(Diag("cocci", "warning", m.group("file"), int(m.group("line")),
                                f"{m.group('msg')} ({script.stem})"))
        return out


def _with_headers(repo: Path, commit: str, files: list[str]) -> list[str]:
    """``files`` and the headers beside them (local #include "x.h" resolve)."""
    dirs = sorted({os.path.dirname(f) for f in files})
    out = set(files)
    for d in dirs:
        names = gitutil.out(repo, "ls-tree", "--name-only", f"{commit}:{d}" if d else commit)
        out.update(f"{d}/{n}" if d else n for n in names.splitlines() if n.endswith(".h"))
    return sorted(out)


_VERSION: list[str] = []


def _spatch_version() -> str:
    if not _VERSION:
        cp = procs.run(["spatch", "--version"], timeout=None, package="coccinelle")
        m = re.search(r"version (\S+)", cp.stdout)
        _VERSION.append(m.group(1) if m else "0")
    return _VERSION[0]


def _version(v: str) -> tuple:
    return tuple(int(x) if x.isdigit() else 0 for x in re.split(r"[.-]", v))
