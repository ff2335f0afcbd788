"""``python -m dpfc.bench scaling``: how the simulator's cost grows with the work.

Three axes, each a series of switches built by :mod:`dpfc.bench.workloads` and timed like
the ``sim`` rows (``switch.process`` per engine):

* ``EUs``: an in-switch DPF whose packets run 1..N EUs (N = the profile's EU count, 4 on
  tofino1), one FAADD on each EU's lane 0;
* ``tenants``: the in-switch counter shared by 1..30,000 tenants, one direct-mapped word
  each, packets from up to 256 tenants spread over the range;
* ``installed DPFs``: 1..2,000 distinct in-switch DPFs (those of ``dpfc.bench link``)
  linked into one image and deployed, packets to up to 256 of them.

The points are timed interleaved, run by run, so that load from other jobs spreads over
the series instead of distorting one point. Each point is a :class:`ScalingPoint` (the axis, the x value and its :class:`Result`); the
table lists them and :mod:`dpfc.bench.plot` draws them, one panel per axis.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

from dpfc.backends.sim import Network, Switch
from dpfc.target import BUILTIN_PROFILES, DEFAULT_PROFILE, TargetProfile

from . import workloads as w
from .engines import Engine
from .progress import Progress
from .results import Result, rate_result
from .timing import Prepare, time_interleaved

TENANT_STEPS = (1, 10, 100, 1_000, 10_000, 30_000)
DPF_STEPS = (1, 10, 100, 1_000, 2_000)
AXES = ("EUs", "tenants", "installed DPFs")


@dataclass(frozen=True)
class ScalingPoint:
    axis: str  # one of AXES
    x: int
    result: Result


def _steps(limit: int, steps: tuple[int, ...]) -> list[int]:
    """The standard steps up to ``limit``, and ``limit`` itself."""
    return sorted({s for s in steps if s <= limit} | {limit})


def scaling_plan(
    profile: TargetProfile, max_tenants: int, max_dpfs: int
) -> list[tuple[str, int, Callable[[], tuple[Network, Switch, list[bytes]]]]]:
    plan: list[tuple[str, int, Callable[[], tuple[Network, Switch, list[bytes]]]]] = []
    for eus in range(1, profile.num_eus + 1):
        plan.append(("EUs", eus, partial(w.eu_chain, profile, eus)))
    for count in _steps(max_tenants, TENANT_STEPS):
        plan.append(("tenants", count, partial(w.tenants, profile, count)))
    for count in _steps(max_dpfs, DPF_STEPS):
        plan.append(("installed DPFs", count, partial(w.installed, profile, count)))
    return plan


def scaling_points(
    packets: int,
    runs: int,
    engines: list[Engine],
    *,
    max_tenants: int = TENANT_STEPS[-1],
    max_dpfs: int = DPF_STEPS[-1],
    progress: Progress | None = None,
    profile_name: str = DEFAULT_PROFILE.name,
) -> list[ScalingPoint]:
    """Every point's switch is set up first (one step of the progress bar each), then the
    points are timed run by run (one step per round), interleaved (see
    :func:`~dpfc.bench.timing.time_interleaved`)."""
    profile = BUILTIN_PROFILES[profile_name]
    progress = progress or Progress(0)
    rows: list[tuple[str, int, Engine, Prepare, Switch, list[bytes]]] = []
    for axis, x, setup in scaling_plan(profile, max_tenants, max_dpfs):
        progress.start(f"set up {axis} = {x:,}")
        _, switch, frames = setup()
        rows += [(axis, x, e, e.prepare, switch, frames) for e in engines]
        progress.advance()

    def on_round(number: int) -> None:
        if number:
            progress.advance()
        progress.start(f"scaling: run {number + 1} of {runs}")

    seconds = time_interleaved([(r[3], r[4], r[5]) for r in rows], packets, runs, on_round)
    progress.advance()
    return [
        ScalingPoint(axis, x, rate_result("scaling", f"{axis} = {x}", engine.name, packets, s))
        for (axis, x, engine, _, _, _), s in zip(rows, seconds, strict=True)
    ]


def scaling_row_count(max_tenants: int, max_dpfs: int, runs: int) -> int:
    """The progress bar's steps: one per point set up, one per round of runs."""
    profile = DEFAULT_PROFILE
    return len(scaling_plan(profile, max_tenants, max_dpfs)) + runs


def format_scaling_table(points: list[ScalingPoint], *, packets: int, runs: int) -> str:
    """One block per axis: x, engine, packets/s, and the cost per packet relative to the
    axis's first point (1.00 = as cheap as the smallest work)."""
    lines = [
        f"How the simulator's cost grows with the work: tofino1, one switch, {packets} "
        f"packets per run, median of {runs} run(s)"
    ]
    for axis in AXES:
        mine = [p for p in points if p.axis == axis]
        if not mine:
            continue
        lines.append(f"{axis:>14}  {'engine':<12}  {'pkt/s':>9}  {'min':>9}  {'max':>9}  cost x")
        base: dict[str, float] = {}
        for point in mine:
            r = point.result
            first = base.setdefault(r.engine, r.median)
            relative = first / r.median if r.median else float("inf")
            lines.append(
                f"{point.x:>14,}  {r.engine:<12}  {r.median:>9,.0f}  {r.min:>9,.0f}  "
                f"{r.max:>9,.0f}  {relative:.2f}"
            )
    return "\n".join(lines) + "\n"
