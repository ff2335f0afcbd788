"""How the simulator benchmarks time an engine: ``packets`` frames through one function,
``runs`` times, after a warm-up.

The switch is set up once per row (not timed) and every run sends to the same switch, so
that an engine that compiles what is installed (a JIT) pays that once, as a switch does;
the warm-up pays first-use costs (caches, lazy imports) outside the clock. The frames are
sent round-robin: ``packets`` need not be a multiple of their number.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from dpfc.backends.sim import Network

WARM_UP = 100  # packets run before the first timed run


def time_process(
    process: Callable[[bytes, int], object], frames: list[bytes], packets: int, runs: int
) -> list[float]:
    """Seconds of each of ``runs`` runs of ``packets`` frames arriving on port 0."""
    count = len(frames)
    for index in range(min(packets, WARM_UP)):
        process(frames[index % count], 0)
    seconds = []
    for _ in range(runs):
        start = time.perf_counter()
        for index in range(packets):
            process(frames[index % count], 0)
        seconds.append(time.perf_counter() - start)
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
