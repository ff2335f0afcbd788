"""The scaling plot (``docs/performance/scaling.png``): the one module that imports
matplotlib, an optional dependency (``pip install 'dpfc[bench]'``).

One panel per axis of :mod:`dpfc.bench.scaling` (EUs, tenants, installed DPFs), packets per
second against the amount of work, one line per engine with the runs' min..max as error
bars; the tenant and DPF axes are logarithmic. Drawn with the Agg back end (no display
needed) and without a timestamp, so that the same figures give the same file.
"""

from __future__ import annotations

from pathlib import Path

from .scaling import AXES, ScalingPoint


class PlotUnavailable(Exception):
    """matplotlib is not installed: the message says how to get it."""


def plot_scaling(points: list[ScalingPoint], path: Path, *, title: str) -> None:
    try:
        import matplotlib  # type: ignore[import-not-found, unused-ignore]

        matplotlib.use("Agg")
        from matplotlib import pyplot  # type: ignore[import-not-found, unused-ignore]
    except ImportError as missing:
        raise PlotUnavailable(
            f"matplotlib is not installed ({missing}); pip install 'dpfc[bench]' draws the plot"
        ) from missing
    axes_used = [a for a in AXES if any(p.axis == a for p in points)]
    figure, panels = pyplot.subplots(
        1, max(len(axes_used), 1), figsize=(4.2 * max(len(axes_used), 1), 3.6), squeeze=False
    )
    for panel, axis in zip(panels[0], axes_used, strict=False):
        mine = [p for p in points if p.axis == axis]
        for engine in sorted({p.result.engine for p in mine}):
            series = [p for p in mine if p.result.engine == engine]
            xs = [p.x for p in series]
            medians = [p.result.median for p in series]
            below = [p.result.median - p.result.min for p in series]
            above = [p.result.max - p.result.median for p in series]
            panel.errorbar(xs, medians, yerr=[below, above], marker="o", capsize=3, label=engine)
        if axis != "EUs":
            panel.set_xscale("log")
        else:
            panel.set_xticks([p.x for p in mine])
        panel.set_xlabel(axis)
        panel.set_ylabel("packets/s")
        lows = [p.result.min for p in mine]
        if min(lows) > 0 and max(p.result.max for p in mine) > 20 * min(lows):
            panel.set_yscale("log")  # engines orders of magnitude apart (the JIT) stay legible
        else:
            panel.set_ylim(bottom=0)
        panel.grid(True, alpha=0.3)
        panel.legend(fontsize="small")
    figure.suptitle(title, fontsize="medium")
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=100, metadata={"Software": None})
    pyplot.close(figure)
