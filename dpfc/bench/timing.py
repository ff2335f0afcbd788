"""How the simulator benchmarks time an engine: ``packets`` frames through one function,
``runs`` times, after a warm-up.

The switch is set up once per row (not timed) and every run sends to the same switch, so
that an engine that compiles what is installed (a JIT) pays that once, as a switch does;
each engine prepares its runs before the clock starts (the JIT packs the frames into one
buffer there) and the warm-up pays first-use costs (caches, lazy imports) outside the
clock. The frames are sent round-robin: ``packets`` need not be a multiple of their
number.

:func:`time_interleaved` times several rows run by run (run 1 of every row, then run 2,
...), so that a burst of load from other jobs on a shared machine slows one run of many
rows rather than every run of one row: rows meant to be compared (a scaling series) stay
comparable.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from dpfc.backends.sim import Network, Switch

WARM_UP = 100  # packets run before the first timed run


Run = Callable[[], object]  # one timed run: ``packets`` frames through an engine
# An engine's preparation of a run: the switch, the workload's frames and how many packets
# to send (round-robin over the frames); whatever it builds (a JIT's native code, a packed
# batch) is built here, before the clock starts.
Prepare = Callable[[Switch, list[bytes], int], Run]


def round_robin(frames: list[bytes], packets: int) -> list[bytes]:
    """``packets`` frames taken from ``frames`` in turn."""
    return [frames[index % len(frames)] for index in range(packets)]


def time_interleaved(
    rows: Sequence[tuple[Prepare, Switch, list[bytes]]],
    packets: int,
    runs: int,
    on_round: Callable[[int], None] | None = None,
) -> list[list[float]]:
    """The seconds of each run of each row (``rows[i]``'s runs at index i), every row warmed
    up first (a run of WARM_UP packets); ``on_round(n)`` is called before round n (the
    progress bar)."""
    for prepare, switch, frames in rows:
        prepare(switch, frames, min(packets, WARM_UP))()
    timed = [prepare(switch, frames, packets) for prepare, switch, frames in rows]
    seconds: list[list[float]] = [[] for _ in rows]
    for round_ in range(runs):
        if on_round is not None:
            on_round(round_)
        for index, run in enumerate(timed):
            start = time.perf_counter()
            run()
            seconds[index].append(time.perf_counter() - start)
    return seconds


def time_network(network: Network, frames: list[bytes], packets: int, runs: int) -> list[float]:
    """The same through the :class:`~dpfc.backends.sim.Network` loop: every frame sent by
    the client, queued, processed, and delivered to a host (records not kept)."""

    def one(count: int) -> float:
        start = time.perf_counter()
        for index in range(count):
            network.send("client", frames[index % len(frames)])
        network.run(keep=False)
        return time.perf_counter() - start

    one(min(packets, WARM_UP))
    return [one(packets) for _ in range(runs)]
