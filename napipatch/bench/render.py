"""Showing recorded runs: the cover letter's table, JSON, two runs compared.

The table is laid out like the v4 cover letter's: modes as columns, load
points as row groups, one row per percentile. A cell is the median over
the repetitions and, after ``±``, half the range (max - min) / 2 over
them; values are round-trip latencies in ns. An emulated run's table is
headed by a line saying its numbers are not real-hardware latencies.
"""

from __future__ import annotations

import json
import statistics

from napipatch.bench.experiment import pct_key
from napipatch.bench.record import ran_on
from napipatch.errors import NapipatchError

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
