"""New build warnings per patch, in the netdev CI's three configurations
(``warnconfigs``), on the objects each patch can change (``warnselect``).

For every patch: the chosen objects are built at its parent and at the
patch, in the kept tree (``warntree``), and the patch's warnings are those
the parent's build of the same objects did not print, compared as (tool,
file, message) without line numbers (``kernel.kbuildout``), so a warning
that only moved is not new, and one replaced by another is. An object the
patch stops building is a build error on the patch.

Results: findings on two channels, the compiler's (``COMPILER``) and C=1's
checker's (``CHECKER``), each with what it means to the netdev CI's build
test (``Finding.nipa``: a new warning fails it when the patch's warning
count grows, as NIPA's does, though napipatch calls it a warning). The job
checks reading them (checks/jobs/build_w1.py, sparse.py ...) declare which
NIPA test that is; the report's NIPA forecast reads them like any check's.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

from napipatch.errors import NapipatchError
from napipatch.jobs.executor import CHECKER, COMPILER, OWN, JobKind, JobResult
from napipatch.jobs.warnings.configs import CONFIGS, WarnConfig, missing, missing_line
from napipatch.jobs.warnings.select import PatchChanges, Pick, changes, select
from napipatch.jobs.warnings.tree import WarnTree
from napipatch.kernel.kbuildout import (
    Diag,
    LineMap,
    ObjectOutput,
    new_against,
    object_of_source,
)
from napipatch.report.findings import Finding, Severity
from napipatch.report.status import NipaState, Status

DEFAULT_LIMIT = 50


@dataclass
class Step:
    """One patch in one configuration."""

    patch: int
    commit: str
    objects: list[str] = field(default_factory=list)
    picks: list[Pick] = field(default_factory=list)
    new: list[tuple[Diag, list[str]]] = field(default_factory=list)  # (diag, objects)
    broken: list[tuple[Diag, list[str]]] = field(default_factory=list)  # new build errors
    still_broken: list[str] = field(default_factory=list)  # objects failing at the parent too
    # warnings at the parent and at the patch, per tool group (sparse, cc)
    counts: dict[str, tuple[int, int]] = field(default_factory=dict)
    seconds: float = 0.0
    logs: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        return {"patch": self.patch, "commit": self.commit, "objects": self.objects,
                "picks": [p.to_json() for p in self.picks],
                "new": [{**d.to_json(), "objects": o} for d, o in self.new],
                "errors": [{**d.to_json(), "objects": o} for d, o in self.broken],
                "still_broken": self.still_broken, "warnings": self.counts,
                "seconds": self.seconds, "logs": self.logs}


@dataclass
class WarningsJob:
    """Every patch of a series, one configuration (w1, 32bit or clang)."""

    kinds: ClassVar[tuple[JobKind, ...]] = tuple(JobKind(
        cfg.job, order, f"{cfg.describe} on the objects each patch can change",
        queue="build", warnings=True, opt_in=True, args=(("config", cfg.name),))
        for order, cfg in enumerate(CONFIGS.values(), start=1))

    repo: Path
    config: str
    base: str
    commits: list[str]
    cache: Path
    jobs: int = 2
    limit: int = DEFAULT_LIMIT  # objects a patch for its headers and build files
    kind: str = "warnings"

    @property
    def target(self) -> str:
        return self.config

    def run(self, progress) -> JobResult:
        t0 = time.monotonic()
        cfg = CONFIGS[self.config]
        parents = [self.base] + self.commits[:-1]
        plans = [changes(self.repo, p, c, i + 1)
                 for i, (p, c) in enumerate(zip(parents, self.commits))]
        if not any(pl.relevant for pl in plans):
            steps = [Step(pl.patch, pl.commit) for pl in plans]
            return _result(cfg, steps, 0.0, round(time.monotonic() - t0, 1))
        gone = missing(cfg.tools())
        if gone:
            return could_not_run(COMPILER, cfg.name, f"{cfg.describe} could not run: "
                                 f"{missing_line(gone)}", self.kind)
        try:
            with WarnTree(self.repo, self.cache, progress, self.jobs) as wt:
                wt.checkout(self.base)
                wt.configure(cfg)
                prep = wt.prepare(cfg)
                steps = self._walk(wt, cfg, plans, progress)
        except NapipatchError as exc:
            return could_not_run(COMPILER, cfg.name, f"{cfg.describe} could not run: {exc}",
                                 self.kind)
        return _result(cfg, steps, prep, round(time.monotonic() - t0, 1))

    def _walk(self, wt: WarnTree, cfg: WarnConfig, plans: list[PatchChanges], progress
              ) -> list[Step]:
        """Each commit once, base to tip: at commit K, one make builds the
        objects of patch K (at the patch) and of patch K+1 (at its parent),
        so a series of N patches costs N+1 makes, not 2N."""
        steps = [Step(pl.patch, pl.commit) for pl in plans]
        memo: dict[tuple[str, str], ObjectOutput] = {}
        commits = [self.base] + self.commits
        for k, commit in enumerate(commits):
            ending = plans[k - 1] if k >= 1 and plans[k - 1].relevant else None
            starting = plans[k] if k < len(plans) and plans[k].relevant else None
            if ending is None and starting is None:
                continue
            t0 = time.monotonic()
            wt.checkout(commit)
            wt.configure(cfg)
            kb = wt.kbuild(cfg)
            want: list[str] = []
            if ending is not None:
                st = steps[k - 1]
                # what only the patch builds: new files, objects a Makefile now names
                st.objects += [o for o in (object_of_source(p) for p in ending.sources)
                               if o and o not in st.objects and kb.builds(o)]
                want += st.objects
            if starting is not None:
                steps[k].objects, steps[k].picks = select(wt.src, kb, starting, self.limit)
                want += steps[k].objects
            want = list(dict.fromkeys(want))
            progress(f"{cfg.job}: building {len(want)} object(s) at "
                     f"{'the base' if k == 0 else f'patch {k}'} ({commit[:12]})")
            log = _build(wt, cfg, commit, want, memo, "base" if k == 0 else f"patch-{k}")
            # the time at commit K counts for the patch ending there (the base's for patch 1)
            steps[max(k - 1, 0)].seconds += round(time.monotonic() - t0, 1)
            for st in steps[max(k - 1, 0):k + 1]:
                if log:
                    st.logs.append(log)
        for st, pl in zip(steps, plans):
            if pl.relevant:
                _compare(st, _at(memo, pl.parent, st.objects), _at(memo, pl.commit, st.objects),
                         LineMap(pl.diff))
        return steps


def _at(memo: dict, commit: str, objs: list[str]) -> dict[str, ObjectOutput]:
    return {o: memo[(commit, o)] for o in objs if (commit, o) in memo}


def _build(wt: WarnTree, cfg: WarnConfig, commit: str, objs: list[str], memo: dict,
           label: str) -> str:
    """``objs`` whose source exists at ``commit`` (checked out), built once
    per commit and object in this job; the make log, if one ran."""
    todo = [o for o in objs if _has_source(wt.src, o) and (commit, o) not in memo]
    if not todo:
        return ""
    out, log = wt.compile(cfg, todo, label)
    for o, res in out.items():
        memo[(commit, o)] = res
    return str(log)


def _has_source(src: Path, obj: str) -> bool:
    stem = obj[:-2]
    return (src / f"{stem}.c").exists() or (src / f"{stem}.S").exists()


def _compare(step: Step, before: dict[str, ObjectOutput], after: dict[str, ObjectOutput],
             moved: LineMap) -> None:
    where: dict[int, str] = {}
    old_w, new_w, old_e, new_e = [], [], [], []
    for o, res in before.items():
        old_w += res.warnings
        old_e += [d for d in res.errors if d.tool != "sparse"]
        if not res.ok:
            step.still_broken.append(o)
    for o, res in after.items():
        for d in res.diags:
            where[id(d)] = o
        new_w += res.warnings + [d for d in res.errors if d.tool == "sparse"]
        new_e += [d for d in res.errors if d.tool != "sparse"]
    old_w += [d for r in before.values() for d in r.errors if d.tool == "sparse"]
    step.still_broken = [o for o in step.still_broken if o in after and not after[o].ok]
    step.counts = {g: (sum(_group_of(d) == g for d in old_w), sum(_group_of(d) == g for d in new_w))
                   for g in ("cc", "sparse")}
    step.new = _group(new_against(old_w, new_w, moved), where)
    step.broken = _group(new_against(old_e, new_e, moved), where)


def _group_of(d: Diag) -> str:
    return "sparse" if d.tool == "sparse" else "cc"


def _group(diags: list[Diag], where: dict[int, str]) -> list[tuple[Diag, list[str]]]:
    """One entry per warning, with every object that printed it (a header's)."""
    out: dict[tuple, tuple[Diag, list[str]]] = {}
    for d in diags:
        k = (d.key, d.line)
        if k not in out:
            out[k] = (d, [])
        if where.get(id(d)) and where[id(d)] not in out[k][1]:
            out[k][1].append(where[id(d)])
    return list(out.values())


def could_not_run(channel: str, target: str, why: str, kind: str) -> JobResult:
    """A job that found a tool or the tree missing: status error, never
    clean (its NIPA tests are then unknown in the forecast)."""
    f = Finding(check=channel, severity=Severity.WARNING, patch=0, message=why)
    return JobResult(kind=kind, target=target, status=Status.ERROR, findings=[f],
                     data={"reason": why})


# ---------------------------------------------------------------- results
def _result(cfg: WarnConfig, steps: list[Step], prep: float, seconds: float) -> JobResult:
    findings: list[Finding] = []
    for s in steps:
        findings += step_findings(cfg, s)
    compiled = sum(len(s.objects) for s in steps)
    new = sum(len(s.new) for s in steps)
    errors = sum(len(s.broken) for s in steps)
    summary = "\n".join(f"patch {s.patch}  {s.commit[:12]}  {len(s.objects):3} object(s)  "
                        f"{len(s.new)} new warnings  {len(s.broken)} new errors  "
                        f"{s.seconds:6.1f} s" for s in steps)
    findings.append(Finding(
        check=COMPILER, severity=Severity.INFO, patch=0,
        message=f"{cfg.describe}: {compiled} object{'s' * (compiled != 1)} built at parent "
                f"and patch over {len(steps)} patch{'es' * (len(steps) != 1)}: {new} new "
                f"warning{'s' * (new != 1)}, {errors} new error{'s' * (errors != 1)}",
        details=summary))
    status = Status.FAIL if errors else Status.WARN if new else Status.PASS
    return JobResult(kind="warnings", target=cfg.name, status=status, findings=findings,
                     seconds=seconds,
                     data={"config": cfg.name, "describe": cfg.describe,
                           "prepare_seconds": prep,
                           "patches": [s.to_json() for s in steps]})


def _channel_of(d: Diag) -> str:
    return CHECKER if d.tool == "sparse" else COMPILER


def nipa_state(s: Step) -> str:
    """What NIPA posts for this patch's new warnings: its build tests fail
    when the count of warning lines grows, so a warning that replaced
    another leaves NIPA at success, though napipatch still reports it."""
    before = sum(b for b, _a in s.counts.values())
    after = sum(a for _b, a in s.counts.values())
    return NipaState.FAIL if after > before else NipaState.SUCCESS


def step_findings(cfg: WarnConfig, s: Step) -> list[Finding]:
    out: list[Finding] = []
    nipa = {OWN: nipa_state(s)}
    for d, objs in s.new:
        if d.tool == "kdoc" and cfg.name != "w1":
            continue  # the same kernel-doc warning in every configuration: said once
        msg = ("kernel-doc: " if d.tool == "kdoc" else "") + d.message
        out.append(Finding(check=_channel_of(d), severity=Severity.WARNING, patch=s.patch,
                           file=d.file, line=d.line, message=msg, nipa=nipa,
                           hint=f"{cfg.describe}: {_objs(objs)}",
                           details="\n".join([d.text] + d.context)))
    for d, objs in s.broken:
        out.append(Finding(check=COMPILER, severity=Severity.ERROR, patch=s.patch,
                           file=d.file, line=d.line,
                           message=f"does not build ({cfg.describe}): {d.message}",
                           hint=_objs(objs), details="\n".join([d.text] + d.context)))
    for o in s.still_broken:
        # NIPA's count at a parent that does not build: not known here
        out.append(Finding(check=COMPILER, severity=Severity.INFO, patch=s.patch,
                           message=f"{o} does not build at the parent either ({cfg.describe})",
                           nipa={OWN: NipaState.UNKNOWN}))
    for p in s.picks:
        what = "objects in the directory" if p.why.endswith("/") else ".c files see it"
        out.append(Finding(check=COMPILER, severity=Severity.INFO, patch=s.patch,
                           file=p.why.rstrip("/") if "," not in p.why else None,
                           message=f"{p.candidates} {what}; compiled {len(p.picked)} "
                                   f"({cfg.name}): {_objs(p.picked)}",
                           # NIPA builds them all: on a bounded pick its state is not known
                           nipa={OWN: NipaState.UNKNOWN} if len(p.picked) < p.candidates
                           else None))
    return out


def _objs(objs: list[str]) -> str:
    if not objs:
        return "no object"
    return ", ".join(objs[:3]) + (f" and {len(objs) - 3} more" if len(objs) > 3 else "")
