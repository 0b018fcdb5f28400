"""Boot the series tip in QEMU (``BootJob``): the target's test plan and,
with the vng backend, the kernel's selftests, in one guest.

A job is plain data plus ``run(progress) -> JobResult``; executors
(``jobs.executor``, ``jobs.distributed``) decide where it runs.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from napipatch.jobs.boot import qemu, selfrun
from napipatch.jobs.boot.result import BootResult
from napipatch.jobs.build import guestconfig
from napipatch.jobs.build.builder import Builder
from napipatch.jobs.executor import GUEST, JobKind, JobResult
from napipatch.jobs.results import choose
from napipatch.jobs.results import splats as splatmod
from napipatch.jobs.results.verdicts import (
    boot_findings,
    selftest_counts,
    selftest_findings,
    selftest_lines,
    splat_findings,
    tap_counts,
    tap_lines,
)
from napipatch.jobs.targets import Target
from napipatch.report.findings import Finding, Severity
from napipatch.report.status import Status


@dataclass
class BootJob:
    """Build the series tip for a bootable target and boot it: the target's
    test plan and (vng backend) the kernel's selftests, in one guest."""

    kinds: ClassVar[tuple[JobKind, ...]] = (JobKind(
        "boot", 10, "boots the series tip in QEMU for each bootable target: its test plan "
                    "and the kernel selftests", per_target=True),)

    repo: Path
    target: str
    commit: str  # what to boot (the series tip, or the base)
    patch: int  # the patch number findings are attached to (0 = series)
    cache: Path
    jobs: int = 2
    timeout: float | None = None
    kind: str = "boot"
    label: str = "tip"
    base: str | None = None  # the series' base: which selftests changed, and reruns of failures
    at: int = 0  # the patch number of ``commit`` (selftest findings name it)
    flavour: str = ""  # a [flavours.NAME] of the target ("": the plain build)

    def run(self, progress) -> JobResult:
        t0 = time.monotonic()
        # the base's selftest fragments merged (guestconfig): as BuildJob builds it
        target = guestconfig.load(self.target, self.repo, self.base or self.commit, self.flavour)
        guest = None
        found: list[splatmod.Splat] = []
        with Builder(self.repo, target, self.cache, jobs=self.jobs, progress=progress) as b:
            step = b.step(self.patch, self.commit, f"{self.label}-for-boot")
            kernel = b.dirs.obj / target.image
            if not step.ok:
                f = Finding(check=GUEST, severity=Severity.ERROR, patch=self.patch,
                            message=f"not booted: {self.commit[:12]} does not build for {target.name}",
                            hint=f"full log: {step.log}", details=step.error_excerpt)
                return JobResult("boot", target.name, Status.FAIL, [f], round(time.monotonic() - t0, 1))
            if target.boot is not None and target.boot.backend == "vng":
                guest = selfrun.boot_tip(b, kernel, self.commit, self.base, self.timeout,
                                         progress, self.cache)
                res = guest.res
            else:
                progress(f"{target.name}: booting {self.commit[:12]} in QEMU (TCG)")
                res = qemu.boot(kernel, target, b.dirs.root, timeout=self.timeout,
                                   progress=progress)
                found = splatmod.unique(splatmod.scan(res.console))
                if found:  # the boot's and the plan's: no selftests, no base to compare
                    selfrun.decode_splats(b, found, self.base, self.cache, progress)
        findings = boot_findings(target.name, res, self.patch) \
            + self._selftest_findings(guest, target) \
            + (splat_findings(target.name, found, self.at, self.commit, None, str(res.console_log))
               if guest is None else [])
        status = Status.FAIL if any(f.severity is Severity.ERROR for f in findings) else Status.PASS
        findings.append(Finding(
            check=GUEST, severity=Severity.INFO, patch=0,
            message=f"booted {target.label} ({self.commit[:12]}) with {res.backend} under "
                    f"{res.accel.upper()} in {res.seconds:.0f} s: {tap_counts(res.tests)}"
                    + (f"; selftests: {selftest_counts(guest.cases)} in "
                       f"{res.selftest_seconds or 0:.0f} s" if guest else ""),
            hint=f"console log: {res.console_log}",
            details=tap_lines(res.tests) + (f"\n{selftest_lines(guest.cases)}" if guest else "")))
        return JobResult("boot", target.name, status, findings, round(time.monotonic() - t0, 1),
                         data={**_boot_data(res, guest), "flavour": target.flavour})

    def _selftest_findings(self, guest: selfrun.GuestRun | None, target: Target
                           ) -> list[Finding]:
        if guest is None:
            return []
        chosen = [choose.finding(self.target, guest.chosen, self.at)] if guest.chosen else []
        chosen += guestconfig.findings(target, guest.lacking, guest.unmerged, self.at)
        log = str(guest.res.console_log)
        return chosen + selftest_findings(self.target, guest.cases, self.at, self.commit,
                                          guest.on_base, log, guest.base_note, guest.missing,
                                          guest.res.not_run, guest.leaks) \
            + splat_findings(self.target, guest.splats, self.at, self.commit, guest.base_splats,
                             log, guest.base_note)


def _boot_data(res: BootResult, guest: selfrun.GuestRun | None) -> dict:
    return {"seconds": res.seconds, "finished": res.finished, "timed_out": res.timed_out,
            "console_log": str(res.console_log), "backend": res.backend, "accel": res.accel,
            "tests": [{"n": t.n, "status": t.status, "name": t.description, "reason": t.reason,
                       "details": t.after} for t in res.tests],
            "selftest_seconds": res.selftest_seconds,
            "selftests_chosen": [{"name": c.name, "reason": c.reason}
                                 for c in (guest.chosen.tests if guest and guest.chosen else [])],
            "selftests": [{"name": c.name, "status": c.status, "reason": c.reason,
                           "excerpt": c.excerpt, "flaky": c.flaky}
                          for c in (guest.cases if guest else [])],
            "selftest_leaks": guest.leaks if guest else {},
            "splats": splatmod.as_data(guest.splats if guest else [])}
