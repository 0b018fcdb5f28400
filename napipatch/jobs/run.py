"""Build and boot jobs: what to run, and how results become findings.

A job is plain data plus ``run(progress)``; executors (napipatch.executor)
decide where it runs. Findings use check ids ``build`` and ``boot`` so
``napipatch test`` reports look like ``napipatch check`` reports.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from napipatch.jobs import boot as bootmod
from napipatch.jobs import targets as targetsmod
from napipatch.jobs.build import Builder, Step
from napipatch.errors import NapipatchError
from napipatch.jobs.executor import JobResult
from napipatch.report.findings import Finding, Severity


@dataclass
class BuildJob:
    """Build the base, then each applied commit in order, for one target."""

    repo: Path
    target: str
    base: str
    commits: list[str]  # the applied patches' commits, in order
    cache: Path
    jobs: int = 2
    kind: str = "build"

    def run(self, progress) -> JobResult:
        t0 = time.monotonic()
        target = targetsmod.load(self.target)
        steps: list[Step] = []
        with Builder(self.repo, target, self.cache, jobs=self.jobs, progress=progress) as b:
            for i, commit in enumerate([self.base] + self.commits):
                label = "base" if i == 0 else f"patch-{i}"
                progress(f"{target.name}: building {label} ({commit[:12]})")
                steps.append(b.step(i, commit, label))
            obj = b.dirs.obj
        findings = step_findings(target.name, steps)
        status = "fail" if any(f.severity is Severity.ERROR for f in findings) else "pass"
        summary = "\n".join(
            f"{'base' if s.patch == 0 else f'patch {s.patch}':>9}  {s.commit[:12]}  "
            f"{'ok' if s.ok else 'FAILED':6} {s.seconds:7.1f} s  {s.rebuilt:5} compiled  "
            f"{len(s.new_warnings)} new warnings  log: {s.log}" for s in steps)
        findings.append(Finding(check="build", severity=Severity.INFO, patch=0,
                                message=f"built {target.name}: base + {len(self.commits)} patch"
                                        f"{'es' if len(self.commits) != 1 else ''}, {status}",
                                details=summary))
        return JobResult(kind="build", target=target.name, status=status, findings=findings,
                         seconds=round(time.monotonic() - t0, 1),
                         data={"steps": [_step_data(s) for s in steps], "obj": str(obj)})


def _step_data(s: Step) -> dict:
    return {"patch": s.patch, "commit": s.commit, "ok": s.ok, "seconds": s.seconds,
            "rebuilt": s.rebuilt, "log": str(s.log), "errors": [d.text for d in s.errors],
            "new_warnings": [d.text for d in s.new_warnings], "missing": s.missing}


def step_findings(target: str, steps: list[Step]) -> list[Finding]:
    out: list[Finding] = []
    prev_errors: set[str] = set()
    broken_since: int | None = None
    for s in steps:
        who = "the base" if s.patch == 0 else "this patch"
        if not s.ok:
            keys = {d.key for d in s.errors}
            new = [d for d in s.errors if d.key not in prev_errors]
            if new or broken_since is None:
                first = (new or s.errors)[0]
                out.append(Finding(
                    check="build", severity=Severity.ERROR, patch=s.patch,
                    file=first.file, line=first.line,
                    message=f"{who} does not build for {target}: {_short(first.text)}",
                    hint=f"full log: {s.log}",
                    details=s.error_excerpt or "\n".join(d.text for d in s.errors[:20])))
                broken_since = s.patch
            else:
                out.append(Finding(
                    check="build", severity=Severity.INFO, patch=s.patch,
                    message=f"still does not build for {target} (same errors as since "
                            f"{'the base' if broken_since == 0 else f'patch {broken_since}'})",
                    hint=f"full log: {s.log}"))
            prev_errors = keys
        else:
            prev_errors, broken_since = set(), None
        if s.patch == 0:
            continue  # the base's own warnings are the baseline, not findings
        for d in s.new_warnings[:20]:
            out.append(Finding(check="build", severity=Severity.WARNING, patch=s.patch,
                               file=d.file, line=d.line,
                               message=f"new compiler warning ({target}): {_short(d.text)}",
                               details=d.text, hint=f"full log: {s.log}"))
        if len(s.new_warnings) > 20:
            out.append(Finding(check="build", severity=Severity.WARNING, patch=s.patch,
                               message=f"{len(s.new_warnings) - 20} more new warnings ({target})",
                               hint=f"full log: {s.log}"))
        for m in s.missing:
            out.append(Finding(check="build", severity=Severity.ERROR, patch=s.patch, file=m,
                               message=f"{m} was not built for {target}",
                               hint="the target's must-build objects are missing after make"))
        for c in s.config_lost:
            out.append(Finding(check="build", severity=Severity.WARNING, patch=s.patch,
                               message=f"{target} config lost {c} after this patch",
                               hint="a Kconfig change dropped an option the target needs"))
    return out


def _short(text: str) -> str:
    for sep in (" error: ", " warning: "):
        if sep in text:
            return text.split(sep, 1)[1]
    return text


@dataclass
class BootJob:
    """Build the series tip for a bootable target and run its test plan in QEMU."""

    repo: Path
    target: str
    commit: str  # what to boot (the series tip, or the base)
    patch: int  # the patch number findings are attached to (0 = series)
    cache: Path
    jobs: int = 2
    timeout: float | None = None
    kind: str = "boot"
    label: str = "tip"

    def run(self, progress) -> JobResult:
        t0 = time.monotonic()
        target = targetsmod.load(self.target)
        with Builder(self.repo, target, self.cache, jobs=self.jobs, progress=progress) as b:
            step = b.step(self.patch, self.commit, f"{self.label}-for-boot")
            kernel = b.dirs.obj / target.image
            if not step.ok:
                f = Finding(check="boot", severity=Severity.ERROR, patch=self.patch,
                            message=f"not booted: {self.commit[:12]} does not build for {target.name}",
                            hint=f"full log: {step.log}", details=step.error_excerpt)
                return JobResult("boot", target.name, "fail", [f], round(time.monotonic() - t0, 1))
            progress(f"{target.name}: booting {self.commit[:12]} in QEMU (TCG)")
            res = bootmod.boot(kernel, target, b.dirs.root, timeout=self.timeout, progress=progress)
        findings = boot_findings(target.name, res, self.patch)
        status = "fail" if any(f.severity is Severity.ERROR for f in findings) else "pass"
        tap = "\n".join(f"{t.status:6} {t.n:2} - {t.name}" + (f"  ({t.skip})" if t.skip else "")
                        for t in res.tests)
        findings.append(Finding(
            check="boot", severity=Severity.INFO, patch=0,
            message=f"booted {target.name} ({self.commit[:12]}) in {res.seconds:.0f} s: "
                    f"{sum(t.ok and t.skip is None for t in res.tests)} ok, "
                    f"{sum(t.skip is not None for t in res.tests)} skip, {len(res.failed)} not ok",
            hint=f"console log: {res.console_log}", details=tap))
        return JobResult("boot", target.name, status, findings, round(time.monotonic() - t0, 1),
                         data={"seconds": res.seconds, "finished": res.finished,
                               "timed_out": res.timed_out, "console_log": str(res.console_log),
                               "tests": [{"n": t.n, "status": t.status, "name": t.name,
                                          "skip": t.skip, "details": t.details}
                                         for t in res.tests]})


def boot_findings(target: str, res: bootmod.BootResult, patch: int) -> list[Finding]:
    out: list[Finding] = []
    for t in res.failed:
        detail = "\n".join(t.details) if t.details else res.excerpt(f"not ok {t.n} - ")
        out.append(Finding(check="boot", severity=Severity.ERROR, patch=patch,
                           message=f"{target}: test failed: {t.name}",
                           hint=f"console log: {res.console_log}", details=detail))
    if not res.finished:
        why = (f"timed out after {res.seconds:.0f} s" if res.timed_out
               else "the guest stopped before the plan finished")
        splat = bootmod.splat(res.console)
        out.append(Finding(check="boot", severity=Severity.ERROR, patch=patch,
                           message=f"{target}: test plan did not finish: {why}"
                                   + (f" ({splat})" if splat else ""),
                           hint=f"console log: {res.console_log}",
                           details=res.excerpt(splat) if splat else res.excerpt()))
    elif res.plan_rc and not res.failed:
        out.append(Finding(check="boot", severity=Severity.ERROR, patch=patch,
                           message=f"{target}: test plan exited with status {res.plan_rc}",
                           hint=f"console log: {res.console_log}", details=res.excerpt()))
    return out


# ------------------------------------------------------------ running jobs
# Shared by `napipatch test` and the bot: jobs for every target through the
# configured executor, their results added to a Report.

def executor_for(cfg, prog, applied, commits, series):
    """The executor napipatch.executor names: local (default) or celery."""
    from napipatch.jobs.executor import LocalExecutor

    kind = (cfg.executor or "local").strip().lower()
    if kind == "local":
        return LocalExecutor(prog)
    if kind != "celery":
        raise NapipatchError("napipatch.executor", f"unknown executor {kind!r} (local, celery)")
    from napipatch.jobs.distributed import CeleryExecutor, app_from_config
    # Workers elsewhere re-apply the patches to get the same commits.
    patches = [m.as_format_patch() for m in series.patches[:len(commits)]]
    return CeleryExecutor(app_from_config(cfg), patches=patches, base=applied.base, progress=prog)


def run_remotes(cfg, applied, commits, names, jobs, report, executor) -> None:
    from napipatch.jobs.remote import RemoteHost, RemoteJob, host_dict

    tip = commits[-1] if commits else applied.base
    for name in names:
        host = RemoteHost.from_config(cfg, name)
        res = executor.submit(RemoteJob(repo=applied.repo, target=name, commit=tip, patch=0,
                                        cache=cfg.cache, host=host_dict(host), jobs=jobs))
        add_result(report, res)


def remote_targets(cfg) -> list[str]:
    from napipatch.jobs import targets as targets
    return [n for n in targets.names() if cfg.get(f"napipatch.{n}.host")]


def add_result(report, result) -> None:
    from napipatch.engine.run import CheckResult

    report.findings += result.findings
    report.checks.append(CheckResult(f"{result.kind}/{result.target}", result.status,
                                     result.seconds))


def run_builds(cfg, applied, commits, names, jobs, report, executor) -> dict[str, bool]:
    ok = {}
    for name in names:
        res = executor.submit(BuildJob(repo=applied.repo, target=name, base=applied.base,
                                       commits=commits, cache=cfg.cache, jobs=jobs))
        add_result(report, res)
        ok[name] = res.status == "pass"
    return ok


def run_boots(cfg, applied, commits, names, jobs, timeout, report, executor) -> None:
    tip = commits[-1] if commits else applied.base
    for name in names:
        res = executor.submit(BootJob(repo=applied.repo, target=name, commit=tip, patch=0,
                                      cache=cfg.cache, jobs=jobs, timeout=timeout,
                                      label=f"patch-{len(commits)}" if commits else "base"))
        add_result(report, res)
