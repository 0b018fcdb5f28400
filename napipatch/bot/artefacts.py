"""What the bot keeps of a checked series for its web pages: the report's
data (``report.render.to_data``, the same the JSON report gives) and one
output file per check that ran, under ``STATE/logs/<series id>/<name>.log``.

A check's output is its findings written as the text report writes them
(``FILE:LINE: severity: ...``), then, for a job, the logs its findings
point at (``full log: PATH``, ``console log: PATH``) copied in, tail
first cut to ``MAX_LOG`` bytes: the pages serve only files under the
state dir, and the job's cache may be pruned. So every check has an
output to link to, a static check too. Only files under the tree's
napipatch cache are copied, where the jobs write their logs: a finding's
text may quote what a patch or the kernel under test printed, and must not
name a file for the bot to publish.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path

from napipatch import fileio
from napipatch.bot.state import State
from napipatch.report.findings import Finding
from napipatch.report.model import SKIPPED, CheckResult, Report
from napipatch.report.render import to_data

log = logging.getLogger("napipatch.bot")

MAX_LOG = 4 << 20  # bytes of one job log kept (its tail)
# A kept output's name: a check id with its target (build/virtio-net -> build-virtio-net).
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,100}$")
_LOG_REF = re.compile(r"(?:full|console) log: ([^\s;]+)")


def log_dir(state_dir: Path, sid: int) -> Path:
    return state_dir / "logs" / str(int(sid))


def name_of(check_id: str) -> str:
    return check_id.replace("/", "-")


def _line(f: Finding, total: int) -> str:
    label = "SERIES" if f.patch == 0 else f"PATCH {f.patch}/{total}"
    where = f"{f.file}:{f.line}" if f.file and f.line else f.file or ""
    head = f"{where}: {f.severity.value}: {label}" if where else f"{label}: {f.severity.value}:"
    out = [f"{head} [{f.check}] {f.message}"]
    out += [f"    hint: {f.hint}"] if f.hint else []
    out += [f"    | {t}" for t in f.details.rstrip().splitlines()]
    return "\n".join(out)


def _mine(c: CheckResult, findings: list[Finding]) -> list[Finding]:
    """A result's findings: its check's, and for a per-target result
    (``build/virtio-net``) those that name its target."""
    check, _, target = c.id.partition("/")
    return [f for f in findings if f.check == check
            and (not target or target in f.message or target in f.hint)]


def _tail(path: Path) -> str:
    with open(path, "rb") as fh:
        fh.seek(0, 2)
        size = fh.tell()
        fh.seek(max(0, size - MAX_LOG))
        data = fh.read()
    cut = f"[first {size - MAX_LOG} bytes not kept]\n" if size > MAX_LOG else ""
    return cut + data.decode("utf-8", "replace")


def _copied(ref: str, logs_under: Path | None) -> Path | None:
    """The job log ``ref`` names, when it is a file under ``logs_under``."""
    path = Path(ref)
    if logs_under is None or not path.is_absolute():
        return None
    path = path.resolve()
    return path if path.is_relative_to(logs_under.resolve()) and path.is_file() else None


def output_of(c: CheckResult, report: Report, logs_under: Path | None = None) -> str:
    """The text of one check's output page; the job logs its findings name
    under ``logs_under`` (the tree's napipatch cache) copied in."""
    mine = _mine(c, report.findings)
    total = len(report.series.patches)
    out = [f"{c.id}: {c.status.words}" + (f" ({c.reason})" if c.reason else "")
           + f" in {c.seconds:.1f} s", ""]
    out += [_line(f, total) for f in mine] or ["no findings"]
    logs = dict.fromkeys(m for f in mine for m in _LOG_REF.findall(f.hint))
    for ref in logs:
        path = _copied(ref, logs_under)
        if path is not None:
            out += ["", f"== {ref} ==", _tail(path).rstrip("\n")]
    return "\n".join(out) + "\n"


def keep(state_dir: Path, state: State, sid: int, report: Report,
         logs_under: Path | None = None) -> list[str]:
    """Store ``report`` for series ``sid`` and write its checks' outputs
    (with the job logs under ``logs_under``); the names of the outputs kept."""
    names = []
    where = log_dir(state_dir, sid)
    try:
        where.mkdir(parents=True, exist_ok=True)
        for c in report.checks:
            if c.status == SKIPPED:
                continue
            name = name_of(c.id)
            fileio.atomic_write(where / f"{name}.log", output_of(c, report, logs_under))
            names.append(name)
    except OSError as exc:  # the pages lose an output; the reply still goes out
        log.error("series #%d: check outputs not kept: %s", sid, exc)
    state.save_report(sid, to_data(report), names)
    return names
