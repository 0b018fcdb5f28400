"""Showing recorded runs: the cover letter's table and results section,
JSON, two runs compared, the plot.

The table is laid out like the v4 cover letter's: modes as columns, load
points as row groups, one row per percentile. A cell is the median over
the repetitions and, after ``±``, half the range (max - min) / 2 over
them; values are round-trip latencies in ns. An emulated run's table is
headed by a line saying its numbers are not real-hardware latencies.
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path

from napipatch.bench import record
from napipatch.bench.experiment import pct_key
from napipatch.bench.record import ran_on
from napipatch.errors import NapipatchError
from napipatch.store.store import Store

EMULATED = ("EMULATED (QEMU TCG): these numbers are from an emulated CPU and NIC, "
            "not latencies of real hardware.")


def stat(run: dict, mode: str, load: str, key: str) -> tuple[float, float, float] | None:
    """(median, min, max) of ``key`` over the repetitions that got samples."""
    vals = [c[key] for c in run["cells"]
            if c["mode"] == mode and c["load"] == load and c.get(key) is not None]
    if not vals:
        return None
    return statistics.median(vals), min(vals), max(vals)


def _cell(s: tuple[float, float, float] | None) -> str:
    if s is None:
        return "-"
    med, lo, hi = s
    return f"{med:.0f} ±{(hi - lo) / 2:.0f}"


def grid(run: dict, against: dict | None) -> tuple[list[str], list[list[str]]]:
    """Header and rows: a group row per load point, a row per percentile."""
    modes = run["modes"]
    head = ["Experiment"] + [m["label"] for m in modes]
    rows = []
    for ld in run["loads"]:
        rows.append([ld["name"]] + [""] * len(modes))
        for p in run["percentiles"]:
            k = pct_key(p)
            row = [""]
            for m in modes:
                a = stat(run, m["name"], ld["name"], k)
                cell = f"{k}: {_cell(a)}"
                if against is not None:
                    b = stat(against, m["name"], ld["name"], k)
                    cell = f"{k}: {_diff(b, a)}"
                row.append(cell)
            rows.append(row)
    return head, rows


def _diff(old, new) -> str:
    """``old -> new (+x%)`` of two medians."""
    if old is None or new is None:
        return f"{_cell(old)} -> {_cell(new)}"
    pct = (new[0] - old[0]) / old[0] * 100 if old[0] else 0.0
    return f"{old[0]:.0f} -> {new[0]:.0f} ({pct:+.1f}%)"


def markdown_table(head: list[str], rows: list[list[str]]) -> str:
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    # empty cells as "| |", like the cover letter's group and percentile rows
    out += ["|" + "|".join(f" {c} " if c else " " for c in r) + "|" for r in rows]
    return "\n".join(out) + "\n"


def text_table(head: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(r[i]) for r in [head] + rows) for i in range(len(head))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in [head] + rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines) + "\n"


def table(run: dict, fmt: str = "text", against: dict | None = None) -> str:
    """The cover letter's table of ``run`` (against another run: old -> new)."""
    head, rows = grid(run, against)
    body = markdown_table(head, rows) if fmt == "markdown" else text_table(head, rows)
    lines = []
    if against is not None:
        lines.append(f"Compared: {against['series']} v{against['version']} (run {against['id']}) "
                     f"-> v{run['version']} (run {run['id']}); median latency in ns")
        lines += [EMULATED] if run.get("emulated") or against.get("emulated") else []
    else:
        lines.append(f"Ran on: {ran_on(run)}")
        lines += [EMULATED] if run.get("emulated") else []
        lines.append(f"Round-trip latency in ns: median over {run['repetitions']} repetitions "
                     f"of {run['duration']} s, ± half the range.")
    notes = [f"note: {n}" for n in run.get("notes", [])]
    return "\n".join(lines) + "\n\n" + body + ("\n" + "\n".join(notes) + "\n" if notes else "")


def as_json(runs: list[dict]) -> str:
    """The runs in the issue's shape (latencies in ns)."""
    out = []
    for r in runs:
        keys = [pct_key(p) for p in r["percentiles"]]
        out.append({
            "id": r["id"], "series": r["series"], "version": r["version"], "tip": r["tip"],
            "base": r["base"], "kernel": r.get("kernel"), "target": r["target"],
            "emulated": bool(r.get("emulated")), "date": r.get("date"),
            "modes": [m["name"] for m in r["modes"]], "loads": [ld["name"] for ld in r["loads"]],
            "cells": [{"mode": c["mode"], "load": c["load"], "rep": c["rep"],
                       **{k: c.get(k) for k in keys}, "samples": c.get("samples", 0)}
                      for c in r["cells"]]})
    return json.dumps({"runs": out}, indent=2) + "\n"


def check_comparable(a: dict, b: dict) -> None:
    """--against needs a mode and a load point in common (others show as -)."""
    for key, what in (("modes", "modes"), ("loads", "load points")):
        if not {x["name"] for x in a[key]} & {x["name"] for x in b[key]}:
            raise NapipatchError("--against", f"run {a['id']} and run {b['id']} have no "
                                 f"{what} in common")


# ----------------------------------------------------------------------
# A recorded run as the cover letter's results section (``series export --bench``).
#
# The section is rendered by templates/cover-letter.j2 from what this
# returns: a line saying what the run ran on and the table in the cover
# letter's markdown layout. An emulated run (QEMU TCG) is refused unless
# the user allows it, and is then labelled as emulated in the letter.


def results(store: Store, name: str, run_id: str, allow_emulated: bool = False) -> dict:
    """The template's ``results``: ``run_id`` of any version of ``name``, or
    ``latest`` (the newest run of the newest version that has one)."""
    run = record.find(store, name, None if run_id == "latest" else run_id)
    if run.get("emulated") and not allow_emulated:
        raise NapipatchError(f"--bench {run['id']}", "is an emulated run (QEMU TCG): its numbers "
                             "are not real-hardware latencies; pass --allow-emulated to use it "
                             "anyway (it is labelled emulated)")
    head, rows = grid(run, None)
    return {"ran_on": record.ran_on(run), "emulated": bool(run.get("emulated")),
            "warning": EMULATED, "table": markdown_table(head, rows).rstrip("\n"),
            "repetitions": run["repetitions"], "duration": run["duration"], "id": run["id"]}


# ----------------------------------------------------------------------
# ``bench show --plot FILE.png``: the percentiles per mode and load point.
#
# One panel per load point; in each, one group per mode and one marker per
# percentile at the median over repetitions, the min..max over repetitions
# as the error bar. matplotlib with the Agg backend (no display needed),
# imported only when a plot is drawn: it would cost every napipatch
# command half a second at start-up.


_MARKERS = "os^Dvx*+"


def _panel(ax, run: dict, load: dict, against: dict | None) -> None:
    modes = run["modes"]
    pcts = run["percentiles"]
    width = 0.8 / len(pcts)
    series = [(run, "")] + ([(against, " (v%d)" % against["version"])] if against else [])
    for si, (r, suffix) in enumerate(series):
        for pi, p in enumerate(pcts):
            xs, ys, lo, hi = [], [], [], []
            for mi, m in enumerate(modes):
                s = stat(r, m["name"], load["name"], pct_key(p))
                if s is None:
                    continue
                xs.append(mi - 0.4 + width * (pi + 0.5) + (0.05 if si else 0))
                ys.append(s[0] / 1000)
                lo.append((s[0] - s[1]) / 1000)
                hi.append((s[2] - s[0]) / 1000)
            ax.errorbar(xs, ys, yerr=[lo, hi], fmt=_MARKERS[pi % len(_MARKERS)], capsize=3,
                        color=f"C{pi}", alpha=0.45 if si else 1.0,
                        label=f"{pct_key(p)}{suffix}")
    ax.set_title(load["name"], fontsize=9)
    ax.set_xticks(range(len(modes)), [m["label"] for m in modes], rotation=20, fontsize=7,
                  ha="right")
    ax.set_ylabel("latency (us)", fontsize=8)
    ax.grid(axis="y", alpha=0.3)


def plot(run: dict, dest: Path, against: dict | None = None) -> Path:
    """Write the plot of ``run`` (and ``against``, faded) to ``dest`` (PNG)."""
    import matplotlib  # third-party, lazily: see this section's head

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    loads = run["loads"]
    fig, axes = plt.subplots(1, len(loads), figsize=(4.2 * len(loads) + 1, 4.2), squeeze=False)
    for ax, ld in zip(axes[0], loads):
        _panel(ax, run, ld, against)
    axes[0][-1].legend(fontsize=7, loc="best")
    title = f"{run['series']} v{run['version']} on {run['target']} (kernel {run.get('kernel')})"
    if run.get("emulated"):
        title += "\nEMULATED (QEMU TCG): not real-hardware latencies"
    fig.suptitle(title, fontsize=10, color="darkred" if run.get("emulated") else "black")
    fig.tight_layout()
    try:
        fig.savefig(dest, dpi=90)
    except OSError as exc:
        raise NapipatchError(dest, exc.strerror or str(exc)) from None
    finally:
        plt.close(fig)
    return dest
