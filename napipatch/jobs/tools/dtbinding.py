"""NIPA's dt_binding_check on the bindings a patch changes.

For every patch that adds or modifies a file under
Documentation/devicetree/bindings/ (NIPA's own rule), ``make
dt_binding_check DT_CHECKER_FLAGS=-m DT_SCHEMA_FILES=...`` runs at the
parent and at the patch on the touched schemas and on the schemas that
``$ref`` them (at most ``MAX_REFERRERS``; the rest are named). NIPA checks
every binding of the tree; what it prints for a binding not selected here
is not seen, so a bound that left referrers out makes NIPA's state unknown.

Nothing of the patched tree runs: the Makefiles, ``scripts/`` (so dtc,
built once per base from its ``scripts/dtc``) come from the trusted base,
and only the commit's data, ``Documentation/devicetree/bindings`` (less its
Makefile) and ``include/dt-bindings``, is exported into the source
directory at each run. The processed schema (``dt-mk-schema`` over every
binding, most of the cost) is kept per bindings tree, in an O= directory
named by the tree's git hash and the dtschema version; what its making
printed is kept beside it and counted in every run on that tree.

    <build root>/<tree>-<hash>/dt/<base12>/src            base's Makefile, scripts
                                          /obj-<bindings tree>-<dtschema>
                                          /results/<commit12>-<files>-v<n>.json
                                          /lock

A line is new when the parent's run did not print it (compared by text,
without paths' roots and positions); it is put at FILE:LINE of the binding.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

from napipatch import procs
from napipatch.errors import NapipatchError
from napipatch.jobs.build.builder import KeptTree
from napipatch.jobs.executor import OUTPUT, OWN, JobKind, JobResult
from napipatch.jobs.tools.lines import new_lines
from napipatch.jobs.warnings.job import could_not_run
from napipatch.jobs.warnings.seriesresult import SeriesJob
from napipatch.report.findings import Finding, Severity
from napipatch.report.status import NipaState, Status
from napipatch.tree import gitutil
from napipatch.tree.export import export_paths, lock_of

KIND = "dt-binding-check"
BINDINGS = "Documentation/devicetree/bindings/"
# The trusted side (from the base) and the data (from each commit).
TRUSTED = ("Makefile", "scripts", "arch/x86/Makefile", "arch/x86/Makefile_32.cpu",
           BINDINGS + "Makefile")
DATA = (BINDINGS.rstrip("/"), "include/dt-bindings")
# (program, installer, package): dtschema's programs and yamllint come from
# PyPI, found beside napipatch's interpreter first (pyproject.toml's ``dt``
# and ``lint`` extras).
TOOLS = (("make", "apt-get", "make"), ("gcc", "apt-get", "gcc"), ("flex", "apt-get", "flex"),
         ("bison", "apt-get", "bison"), ("dt-doc-validate", "pip", "dtschema"),
         ("dt-mk-schema", "pip", "dtschema"), ("dt-extract-example", "pip", "dtschema"),
         ("dt-validate", "pip", "dtschema"), ("yamllint", "pip", "yamllint"))
MAX_REFERRERS = 4
_NO_FILE = "napipatch-matches-no-binding"
_RESULTS = 1   # bumped when what a kept result holds changes
TIMEOUT = 1800
_REF = re.compile(r"\$ref:\s*[\"']?([^\"'#\s]+\.yaml)")
_POS = re.compile(r":\d+(?:[.:]\d+)?(?:-\d+(?:\.\d+)?)?:")
_YAML_POS = re.compile(r"^(?P<file>[^\s:]+\.yaml):(?P<line>\d+):\d+: ")
_EXAMPLE = re.compile(r"^(?P<file>[^\s:]+)\.example\.dt[bs]:(?:(?P<line>\d+)[.:]\S*:)?")
_QUOTED = re.compile(r"'([^']+)'")
_NAMED = re.compile(r"(?:\): |^ )([#\w][\w,.#+-]*): ")   # "node (compat): prop: ..."


def relevant(path: str) -> bool:
    return path.startswith(BINDINGS)


def _env() -> dict:
    """make finds dtschema's and yamllint's programs beside napipatch's interpreter."""
    here = str(Path(sys.executable).parent)
    return dict(os.environ, PATH=here + os.pathsep + os.environ.get("PATH", ""),
                LC_ALL="C", LANG="C")


def missing_tools() -> list[tuple[str, str, str]]:
    path = _env()["PATH"]
    return [t for t in TOOLS if shutil.which(t[0], path=path) is None]


def missing_text(gone: list[tuple[str, str, str]]) -> str:
    """``dt-doc-validate, yamllint not installed (pip install dtschema yamllint)``."""
    hows = [f"{how} install {' '.join(dict.fromkeys(p for _t, h, p in gone if h == how))}"
            for how in dict.fromkeys(h for _t, h, _p in gone)]
    return f"{', '.join(t for t, _h, _p in gone)} not installed ({'; '.join(hows)})"


def dtschema_version() -> str:
    cp = procs.run(["dt-doc-validate", "--version"], timeout=60, package="dtschema",
                   env=_env())
    return (cp.stdout or "").strip() or "unknown"


@dataclass
class Picked:
    """The schemas one patch's run checks, and the referrers left out."""

    files: list[str]
    why: dict[str, str]
    dropped: list[str] = field(default_factory=list)


def pick(repo: Path, commit: str, touched: list[str]) -> Picked:
    """The touched schemas, then those whose ``$ref`` names one of them
    (a relative ref from its own directory, or /schemas/...), at most
    MAX_REFERRERS, nearest directory first."""
    schemas = [p for p in touched if p.endswith(".yaml")]
    why = {p: "changed" for p in schemas}
    names = {p.rsplit("/", 1)[1] for p in schemas}
    if not names:
        return Picked([], why)
    hits = gitutil.git(repo, "grep", "-l", "-F", *[x for n in names for x in ("-e", n)],
                       commit, "--", BINDINGS, check=False).stdout.splitlines()
    refs = []
    for hit in hits:
        path = hit.split(":", 1)[1]
        if path in why or not path.endswith(".yaml"):
            continue
        text = gitutil.out(repo, "show", f"{commit}:{path}")
        for ref in _REF.findall(text):
            target = _resolve(path, ref)
            if target in why and why[target] == "changed":
                refs.append((path, target))
                break
    refs.sort(key=lambda r: (r[0].rsplit("/", 1)[0] != r[1].rsplit("/", 1)[0], r[0]))
    for path, target in refs[:MAX_REFERRERS]:
        why[path] = f"$ref {target.rsplit('/', 1)[1]}"
    return Picked(list(why), why, [p for p, _t in refs[MAX_REFERRERS:]])


def _resolve(referrer: str, ref: str) -> str:
    if ref.startswith("/schemas/"):
        return BINDINGS + ref.removeprefix("/schemas/")
    if ref.startswith(("http:", "https:")):
        return BINDINGS + ref.split("/schemas/", 1)[-1]
    return os.path.normpath(os.path.join(referrer.rsplit("/", 1)[0], ref))


@dataclass
class CheckRun:
    lines: list[str]
    seconds: float


class DtTree(KeptTree):
    """The base's trusted source directory, the O= directories per bindings
    tree and the kept results."""

    def __init__(self, repo: Path, base: str, cache: Path, jobs: int, progress):
        super().__init__(repo, cache, "dt", base[:12])
        self.repo, self.base, self.jobs, self.progress = repo, base, jobs, progress
        self.src = self.root / "src"
        self._data_at = ""

    def __enter__(self):
        super().__enter__()
        self.version = dtschema_version()
        return self

    def check(self, commit: str, files: list[str]) -> CheckRun:
        """``make dt_binding_check`` on ``files`` (those ``commit`` has) at ``commit``."""
        have = [f for f in files if gitutil.git(self.repo, "cat-file", "-e", f"{commit}:{f}",
                                                check=False).returncode == 0]
        key = f"{commit[:12]}-{hashlib.sha256(chr(0).join(have).encode()).hexdigest()[:10]}" \
            f"-v{_RESULTS}"
        if (kept := self.kept(key)) is not None:
            return CheckRun(**kept)
        t0 = time.monotonic()
        obj = self._data(commit)
        lines = self._schema(obj)
        if have:
            for rel in have:   # examples and stamps: made again (their headers may differ)
                stem = obj / rel.removesuffix(".yaml")
                for suffix in (".example.dts", ".example.dtb"):
                    Path(str(stem) + suffix).unlink(missing_ok=True)
            for stamp in (".dt-binding.checked", ".yamllint.checked"):
                (obj / BINDINGS / stamp).unlink(missing_ok=True)
            self.progress(f"{KIND}: make dt_binding_check at {commit[:12]} "
                          f"({len(have)} schema{'s' * (len(have) != 1)})")
            out = self._make(obj, "dt_binding_check", "DT_CHECKER_FLAGS=-m",
                             "DT_SCHEMA_FILES=" + ":".join(f.removeprefix(BINDINGS)
                                                           for f in have))
            lines += self._clean(out)
        got = CheckRun(lines, round(time.monotonic() - t0, 1))
        self.keep(key, got.__dict__)
        return got

    def _data(self, commit: str) -> Path:
        """The source directory with ``commit``'s bindings and the base's
        trusted files; the O= directory of that bindings tree."""
        export_paths(self.repo, self.base, TRUSTED, self.root / "trusted")
        if not (self.src / "Makefile").exists():
            shutil.copytree(self.root / "trusted", self.src, symlinks=True)
        if self._data_at != commit:
            for d in DATA:
                shutil.rmtree(self.src / d, ignore_errors=True)
            export = self.root / "data" / commit[:12]
            export_paths(self.repo, commit, DATA, export, required=DATA[0])
            for d in DATA:
                if (export / d).exists():
                    shutil.copytree(export / d, self.src / d, symlinks=True)
            shutil.copy2(self.root / "trusted" / BINDINGS / "Makefile",
                         self.src / BINDINGS / "Makefile")
            shutil.rmtree(export, ignore_errors=True)
            lock_of(export).unlink(missing_ok=True)
            self._data_at = commit
        tree = gitutil.out(self.repo, "rev-parse", f"{commit}:{DATA[0]}").strip()
        obj = self.root / f"obj-{tree[:12]}-{self.version}"
        seeded = next((o for o in self.root.glob("obj-*/scripts/dtc/dtc")), None)
        if not obj.exists() and seeded is not None:
            # dtc is built once per base: a new O= starts with the first one's
            shutil.copytree(seeded.parents[2] / "scripts", obj / "scripts", symlinks=True)
        obj.mkdir(exist_ok=True)
        return obj

    def _schema(self, obj: Path) -> list[str]:
        """The processed schema of this bindings tree (made once) and the
        lines its making printed."""
        said = obj / ".napipatch-schema-lines.json"
        if said.exists():
            return json.loads(said.read_text())
        self.progress(f"{KIND}: dt-mk-schema over every binding ({obj.name})")
        # made again so that what it prints is seen
        (obj / BINDINGS / "processed-schema.json").unlink(missing_ok=True)
        # dt_binding_schemas needs a .config in 6.12: dt_binding_check on
        # no file (and no yamllint) makes the schema and dtc, checks nothing
        out = self._make(obj, "dt_binding_check", f"DT_SCHEMA_FILES={_NO_FILE}",
                         "DT_SCHEMA_LINT=")
        lines = self._clean(out)
        tmp = said.with_suffix(".tmp")
        tmp.write_text(json.dumps(lines))
        tmp.replace(said)
        return lines

    def _make(self, obj: Path, *args: str) -> str:
        cp = procs.run(["make", "-s", f"-j{self.jobs}", "-C", str(self.src), f"O={obj}", *args],
                       timeout=TIMEOUT, package="make", stderr="merge", env=_env())
        if cp.returncode != 0:
            tail = "\n".join((cp.stdout or "").splitlines()[-6:])
            raise NapipatchError(f"make {args[0]}", f"failed (exit {cp.returncode})\n{tail}")
        return cp.stdout or ""

    def _clean(self, out: str) -> list[str]:
        """make's lines, a continuation (a tab) joined to its line, the
        directories' roots removed."""
        lines: list[str] = []
        for ln in out.splitlines():
            ln = ln.replace(str(self.src) + "/", "").replace(str(self.root) + "/", "")
            ln = re.sub(r"^obj-[0-9a-f]+-[^/]+/", "", ln)
            if ln.startswith("\t") and lines:
                lines[-1] += " " + ln.strip()
            elif ln.strip() and not ln.startswith(("make[", "make:")):
                lines.append(ln.rstrip())
        return lines


def key(line: str) -> str:
    return _POS.sub(":", line).strip()


def where(repo: Path, commit: str, line: str) -> tuple[str | None, int | None]:
    """The binding and its line a message is about: yamllint's and
    dt-doc-validate's FILE:LINE; for an example's message, the line of the
    example in the binding (the property it names, else ``examples:``)."""
    m = _YAML_POS.match(line)
    if m:
        return m.group("file"), int(m.group("line"))
    m = _EXAMPLE.match(line)
    if not m:
        f = line.split(":", 1)[0]
        return (f, None) if f.endswith(".yaml") else (None, None)
    f = m.group("file") + ".yaml"
    text = gitutil.git(repo, "show", f"{commit}:{f}", check=False).stdout or ""
    rows = text.splitlines()
    start = next((i for i, r in enumerate(rows) if r.startswith("examples:")), 0)
    rest = line.split(":", 1)[1]
    for name in _NAMED.findall(rest) + _QUOTED.findall(rest):
        prop = re.compile(rf"^\s*{re.escape(name)}\s*[=;]")
        hit = next((i for i in range(start, len(rows)) if prop.match(rows[i])), None)
        if hit is not None:
            return f, hit + 1
    return f, (start + 1 if start else None)


@dataclass
class PatchStep:
    patch: int
    commit: str
    picked: Picked
    before: CheckRun | None = None
    after: CheckRun | None = None


@dataclass
class DtBindingJob(SeriesJob):
    kinds: ClassVar[tuple[JobKind, ...]] = (JobKind(
        KIND, 8, "make dt_binding_check on the DT bindings a patch changes and those that "
                 "$ref them, at its parent and at the patch", queue="build", warnings=True,
        opt_in=True),)

    kind: str = KIND

    def run(self, progress) -> JobResult:
        t0 = time.monotonic()
        parents = [self.base] + self.commits[:-1]
        plans = []
        for i, (p, c) in enumerate(zip(parents, self.commits), 1):
            am = gitutil.out(self.repo, "diff", "--no-renames", "--diff-filter=AM",
                             "--name-only", p, c).splitlines()
            touched = [x for x in am if relevant(x)]
            if touched:
                plans.append((p, PatchStep(i, c, pick(self.repo, c, touched))))
        todo = [(p, st) for p, st in plans if st.picked.files]
        if todo:
            gone = missing_tools()
            if gone:
                return could_not_run(OUTPUT, KIND, f"{KIND} could not run: "
                                     f"{missing_text(gone)}", self.kind)
            try:
                with DtTree(self.repo, self.base, self.cache, self.jobs, progress) as dt:
                    for p, st in todo:
                        st.before = dt.check(p, st.picked.files)
                        st.after = dt.check(st.commit, st.picked.files)
            except NapipatchError as exc:
                return could_not_run(OUTPUT, KIND, f"{KIND} could not run: {exc}", self.kind)
        findings: list[Finding] = []
        for _p, st in plans:
            findings += step_findings(self.repo, st)
        bad = any(f.severity is Severity.ERROR for f in findings)
        warn = any(f.severity is Severity.WARNING for f in findings)
        return JobResult(kind=KIND, target=KIND,
                         status=Status.FAIL if bad else Status.WARN if warn else Status.PASS,
                         findings=findings, seconds=round(time.monotonic() - t0, 1),
                         data={"patches": [{"patch": st.patch, "files": st.picked.files,
                                            "dropped": st.picked.dropped,
                                            "before": st.before and st.before.__dict__,
                                            "after": st.after and st.after.__dict__}
                                           for _p, st in plans]})


def step_findings(repo: Path, st: PatchStep) -> list[Finding]:
    """One patch: each line its parent's run did not print, and what was checked."""
    pk = st.picked
    if not pk.files:
        return [Finding(check=OUTPUT, severity=Severity.INFO, patch=st.patch,
                        message="no DT schema (.yaml) changed under " + BINDINGS,
                        nipa={OWN: NipaState.SUCCESS})]
    new = new_lines([key(b) for b in st.before.lines], [key(a) for a in st.after.lines])
    raw = {key(a): a for a in st.after.lines}
    nipa = {OWN: NipaState.FAIL if new else NipaState.SUCCESS}
    out = []
    for k in new:
        ln = raw.get(k, k)
        f, line = where(repo, st.commit, ln)
        sev = Severity.ERROR if "error" in ln.lower() else Severity.WARNING
        out.append(Finding(check=OUTPUT, severity=sev, patch=st.patch, file=f, line=line,
                           message=f"dt_binding_check: {ln}", nipa=nipa,
                           hint="make dt_binding_check DT_SCHEMA_FILES=" +
                                (f or "").removeprefix(BINDINGS)))
    checked = ", ".join(f"{p.removeprefix(BINDINGS)} ({pk.why[p]})" for p in pk.files)
    out.append(Finding(check=OUTPUT, severity=Severity.INFO, patch=st.patch,
                       message=f"make dt_binding_check at the parent and the patch on {checked}: "
                               f"lines {len(st.before.lines)} -> {len(st.after.lines)}, "
                               f"{len(new)} new"))
    if pk.dropped:
        out.append(Finding(check=OUTPUT, severity=Severity.INFO, patch=st.patch,
                           message=f"not checked here: {len(pk.dropped)} more binding"
                                   f"{'s' * (len(pk.dropped) != 1)} that $ref the changed ones "
                                   f"({', '.join(p.removeprefix(BINDINGS) for p in pk.dropped[:3])}"
                                   f"{' ...' if len(pk.dropped) > 3 else ''}; bounded to "
                                   f"{MAX_REFERRERS})",
                           nipa=nipa if new else {OWN: NipaState.UNKNOWN}))
    return out
