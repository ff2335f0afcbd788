"""``python -m dpfc.bench sim``: packets per second of the simulator's engines on the
paper's DPFs, each on one tofino1 switch (workloads in :mod:`dpfc.bench.workloads`):

* ``counter``: the per-ID counter, in-switch and the same code in-packet;
* ``cache_get``: KVS cache-get (in-packet), hits (loaded, returned to the sender) and misses
  (the null segment's invalid tuple: passed on);
* ``lb3``: power-of-two-choices load balancing, in-packet and in-switch;
* ``paxos acceptor``: accepted proposals multicast to two learners, in-packet and in-switch;
* ``counter, N tenants``: the in-switch counter shared by 1 and 30,000 tenants, one
  direct-mapped word each (the permission and mapping tables at their working size).

Each row is one workload on one engine of :mod:`dpfc.bench.engines` (``switch.process``:
the data path alone), the rows timed interleaved, run by run; two more rows time the interpreter's
:class:`~dpfc.backends.sim.Network` loop (queueing, wiring, delivery to hosts). bmv2 rows
come from :mod:`dpfc.bench.p4` when p4c and simple_switch are installed; otherwise a
``skipped`` line says why. Numbers depend on the machine and its load; nothing here asserts
a speed.
"""

from __future__ import annotations

from dpfc.backends.p4 import ToolchainMissing
from dpfc.backends.sim import Switch
from dpfc.target import BUILTIN_PROFILES, DEFAULT_PROFILE, TargetProfile

from . import workloads as w
from .engines import ENGINES, Engine, bmv2_missing
from .p4 import baseline_result, p4_rows
from .progress import Progress
from .results import Result, Skipped, rate_result
from .timing import Prepare, time_interleaved, time_network

MANY_TENANTS = 30_000


def sim_workloads(profile: TargetProfile, many_tenants: int = MANY_TENANTS) -> list[w.Workload]:
    return [
        w.Workload("counter, in-switch", lambda: w.counter(profile)),
        w.Workload("counter, in-packet", lambda: w.counter(profile, "packet")),
        w.Workload("cache_get hits, in-packet", lambda: w.cache_get(profile, hits=True)),
        w.Workload("cache_get misses, in-packet", lambda: w.cache_get(profile, hits=False)),
        w.Workload("lb3, in-packet", lambda: w.lb3(profile)),
        w.Workload("lb3, in-switch", lambda: w.lb3(profile, "switch")),
        w.Workload("paxos acceptor, in-packet", lambda: w.paxos_acceptor(profile)),
        w.Workload("paxos acceptor, in-switch", lambda: w.paxos_acceptor(profile, "switch")),
        w.Workload("counter, 1 tenant", lambda: w.tenants(profile, 1)),
        w.Workload(f"counter, {many_tenants:,} tenants", lambda: w.tenants(profile, many_tenants)),
    ]


def network_workloads(profile: TargetProfile) -> list[w.Workload]:
    return [
        w.Workload("counter, in-switch, Network loop", lambda: w.counter(profile)),
        w.Workload(
            "cache_get hits, in-packet, Network loop", lambda: w.cache_get(profile, hits=True)
        ),
    ]


def engines(names: list[str] | None = None) -> tuple[list[Engine], list[Skipped]]:
    """The registered engines (or those named) that can run here, and those that cannot."""
    chosen = [ENGINES[n] for n in names] if names else list(ENGINES.values())
    ready, skipped = [], []
    for engine in chosen:
        reason = engine.missing()
        if reason is None:
            ready.append(engine)
        else:
            skipped.append(Skipped("sim", engine.name, reason))
    return ready, skipped


def sim_results(
    packets: int,
    runs: int,
    *,
    engine_names: list[str] | None = None,
    many_tenants: int = MANY_TENANTS,
    bmv2: bool = True,
    progress: Progress | None = None,
    profile_name: str = DEFAULT_PROFILE.name,
) -> tuple[list[Result], list[Skipped]]:
    profile = BUILTIN_PROFILES[profile_name]
    ready, skipped = engines(engine_names)
    progress = progress or Progress(0)
    rows: list[tuple[str, Engine, Prepare, Switch, list[bytes]]] = []
    for workload in sim_workloads(profile, many_tenants):
        progress.start(f"set up {workload.what}")
        _, switch, frames = workload.setup()
        rows += [(workload.what, e, e.prepare, switch, frames) for e in ready]
        progress.advance()

    def on_round(number: int) -> None:
        if number:
            progress.advance()
        progress.start(f"simulator: run {number + 1} of {runs}")

    # Interleaved, so that a burst of load hits one run of many rows, not one row
    seconds = time_interleaved([(r[2], r[3], r[4]) for r in rows], packets, runs, on_round)
    progress.advance()
    results = [
        rate_result("sim", what, engine.name, packets, times)
        for (what, engine, _, _, _), times in zip(rows, seconds, strict=True)
    ]
    if "interpreter" in {e.name for e in ready}:
        for workload in network_workloads(profile):
            progress.start(workload.what)
            network, _, frames = workload.setup()
            looped = time_network(network, frames, packets, runs)
            results.append(rate_result("sim", workload.what, "interpreter", packets, looped))
            progress.advance()
    if bmv2:
        more, missing = bmv2_results(packets, runs, progress)
        results += more
        skipped += missing
    return results, skipped


def sim_row_count(engine_names: list[str] | None = None, *, runs: int, bmv2: bool = True) -> int:
    """How many steps :func:`sim_results` takes (the progress bar's total): one per
    workload set up, one per round of runs, one per Network-loop row, one for bmv2."""
    ready, _ = engines(engine_names)
    profile = DEFAULT_PROFILE
    interpreted = any(e.name == "interpreter" for e in ready)
    steps = len(sim_workloads(profile)) + runs
    steps += len(network_workloads(profile)) if interpreted else 0
    return steps + (1 if bmv2 and bmv2_missing() is None else 0)


def bmv2_results(
    packets: int, runs: int, progress: Progress | None = None
) -> tuple[list[Result], list[Skipped]]:
    """The bmv2 rows of :mod:`dpfc.bench.p4` (with the interpreter on the same compiled
    DPFs), or why they were skipped."""
    reason = bmv2_missing()
    if reason is not None:
        return [], [Skipped("sim", "bmv2", reason)]
    if progress is not None:
        progress.start("bmv2 (p4c-bm2-ss, simple_switch)")
    try:
        figures = p4_rows(packets, runs, None)
    except ToolchainMissing as missing:
        return [], [Skipped("sim", "bmv2", str(missing))]
    results = [baseline_result(figures.baseline)]
    for row in figures.rows:
        what = f"{row.dpf}.dpf compiled, {row.placement}, {row.program} program (p4 bench)"
        results.append(rate_result("p4", what, "bmv2", packets, list(row.bmv2_seconds)))
        results.append(rate_result("p4", what, "interpreter", packets, list(row.sim_seconds)))
    if progress is not None:
        progress.advance()
    return results, []
