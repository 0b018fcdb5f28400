"""``bench show --plot FILE.png``: the percentiles per mode and load point.

One panel per load point; in each, one group per mode and one marker per
percentile at the median over repetitions, the min..max over repetitions
as the error bar. matplotlib with the Agg backend (no display needed),
imported only when a plot is drawn: it would cost every napipatch
command half a second at start-up.
"""

from __future__ import annotations

from pathlib import Path

from napipatch.bench.experiment import pct_key
from napipatch.bench.render import stat
from napipatch.errors import NapipatchError

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
    import matplotlib  # third-party, lazily: see the module docstring

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
