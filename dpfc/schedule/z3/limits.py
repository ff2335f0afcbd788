"""The scheduler's limits: deterministic solver budgets, and the one wall-clock guard.

Every Z3 call of the scheduler runs under a *resource* limit (Z3's ``rlimit``: a count of
the solver's internal steps), never under a clock, so the same DPF, profile and z3 version
give the same answers and the same schedule on any machine under any load
(docs/scheduling.md, "Determinism"). The budgets below were chosen on the 2-core
development machine, where one million units take about 0.1-0.5 s (the limits are
counted in the solver's steps, so a slower machine takes longer and answers the same).

The wall-clock ``--timeout`` is only an outer guard (:class:`WallClockGuard`): when it fires
it interrupts the solver and the compile stops with DPF6028, saying so; it never changes
which schedule is chosen, because a result that depended on it is never returned.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

# Resource units (Z3 rlimit) for the largest feasibility question "does the DPF fit in k
# EUs?" (the last round of :func:`question_rounds`).
FEASIBILITY_RLIMIT = 20_000_000
# ... in all, for asking about fewer EUs than a schedule already found uses.
IMPROVE_RLIMIT = 12_000_000
# ... for lowering bundles and instructions at the chosen EU count.
SECONDARY_RLIMIT = 5_000_000
# ... for each wider virtual profile tried to say how many EUs a DPF that does not fit needs.
NEEDED_EUS_RLIMIT = 5_000_000


@dataclass(frozen=True)
class Budget:
    """The deterministic resource limits of one DPF's scheduling (Z3 rlimit units)."""

    feasibility: int = FEASIBILITY_RLIMIT
    secondary: int = SECONDARY_RLIMIT
    needed_eus: int = NEEDED_EUS_RLIMIT
    improve: int = IMPROVE_RLIMIT

    def scaled(self, factor: float) -> Budget:
        """Every limit times ``factor`` (``--effort``)."""
        return Budget(
            max(1, int(self.feasibility * factor)),
            max(1, int(self.secondary * factor)),
            max(1, int(self.needed_eus * factor)),
            max(1, int(self.improve * factor)),
        )


# The solver configurations a round alternates between (both bit-blast to SAT).
LOGICS = ("QF_BV", "QF_FD")
ROUND_STEPS = 4  # question limits rlimit/8, rlimit/4, rlimit/2, rlimit


def question_rounds(rlimit: int) -> list[tuple[str, int]]:
    """The rounds of the EU search (:mod:`.eu_search`): (solver configuration, resource limit
    of each question), limits doubling up to ``rlimit``, each limit once per configuration.
    Restarting with a larger limit repeats at most the work already done, and running
    times that vary by orders of magnitude between configurations (and grow with the
    question's difficulty unpredictably) make short questions first the better bet."""
    rounds: list[tuple[str, int]] = []
    for step in range(ROUND_STEPS):
        limit = max(1, rlimit >> (ROUND_STEPS - 1 - step))
        rounds += [(logic, limit) for logic in LOGICS]
    return rounds


class GuardFired(Exception):
    """The wall-clock guard stopped the scheduler (see :class:`WallClockGuard`)."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"stopped by the wall-clock guard after {seconds:.1f} s")
        self.seconds = seconds
        self.decided: list[str] = []  # what the scheduler had decided when it stopped


class WallClockGuard:
    """Stops the scheduler after ``seconds`` of wall-clock time (None: never).

    ``watch(interrupt)`` runs a solver call with a timer that calls ``interrupt`` (Z3's
    ``Context.interrupt``) at the deadline; afterwards :meth:`check` raises
    :class:`GuardFired` if the guard fired, so an interrupted answer is never used."""

    def __init__(self, seconds: float | None) -> None:
        self.seconds = seconds
        self.started = time.perf_counter()
        self.fired = False

    def remaining(self) -> float | None:
        if self.seconds is None:
            return None
        return self.seconds - (time.perf_counter() - self.started)

    def check(self) -> None:
        remaining = self.remaining()
        if self.fired or (remaining is not None and remaining <= 0):
            self.fired = True
            raise GuardFired(time.perf_counter() - self.started)

    @contextmanager
    def watch(self, interrupt: Callable[[], None]) -> Iterator[None]:
        self.check()
        remaining = self.remaining()
        if remaining is None:
            yield
            self.check()
            return

        def fire() -> None:
            self.fired = True
            interrupt()

        timer = threading.Timer(remaining, fire)
        timer.daemon = True
        timer.start()
        try:
            yield
        finally:
            timer.cancel()
        self.check()
