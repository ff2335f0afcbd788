"""What the scheduler is asked and what it answers: :class:`ScheduleOptions` and
:class:`ScheduleResult`.

Options: which scheduler, the deterministic resource budget, the wall-clock guard (which
only stops), the seed, whether to check, lower the secondary objectives, explain a
failure, use the cache, how conditions used as words are built, and a progress callback
that never changes the result. A result: the schedule chosen, the greedy schedule's EUs,
what is proven about the EU count and the secondary objectives (:attr:`ScheduleResult.status`
is how the reports say it), the measures of both, whether it came from the cache.

:func:`dpfc.schedule.search.schedule_problem` turns options into a result for one DPF;
:mod:`.cache` stores results; :mod:`.presentation` shows them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from dpfc.schedule.measures import Measures
from dpfc.schedule.schedule import Schedule
from dpfc.schedule.z3.limits import Budget

DEFAULT_GUARD_S = 600.0  # the wall-clock guard's default (--timeout)


@dataclass(frozen=True)
class ScheduleOptions:
    scheduler: str = "z3"  # "z3" | "greedy"
    budget: Budget = field(default_factory=Budget)  # deterministic Z3 resource limits
    guard_s: float | None = DEFAULT_GUARD_S  # wall-clock guard: stops, never decides
    seed: int = 0
    check: bool = True  # run the checker on the result
    secondary: bool = True  # lower bundles and instructions after the EU count
    # On failure, find how many EUs the DPF would need (schedules it on wider profiles).
    needed_eus: bool = True
    cache: bool = False  # reuse and store results in the schedule cache (.cache)
    # Ask about no more EUs than this (None: the profile's); an alternative form of a DPF
    # is only of use if it needs no more EUs than the best form so far (.module).
    max_eus: int | None = None
    # On failure, explain it (unsat core, EUs needed) rather than just say it failed.
    explain_failure: bool = True
    # A word select/zext of a condition: "best" (both ways, the better kept), "branch" or
    # "alu" (.problem.boolwords).
    booleans: str = "best"
    # Told what the scheduler is doing ("scheduling kvs.get (z3, 3 EUs asked)") at each
    # step, for a progress line; it never changes the result (nor the cache key).
    progress: Callable[[str], None] | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class ScheduleResult:
    schedule: Schedule
    greedy_eus: int | None  # EUs of the greedy schedule (None: greedy found none)
    solve_seconds: float  # time spent in Z3 (reported, never used to decide)
    # Why the EU count is minimal: "one EU"; "bound" (the earliest-EU bound of bounds.py
    # equals it); "z3" (Z3 proved one EU fewer infeasible); "" (not proven).
    proof: str = ""
    undecided: tuple[int, ...] = ()  # smaller EU counts left open at the resource limit
    # Bundles and instructions at that EU count: "proven" (Z3 finished), "floor" (they meet
    # the lower bounds of measures.secondary_floor), "limit" (stopped at the resource
    # limit), "off" (not lowered), "" (the greedy scheduler was asked for).
    secondary: str = ""
    measures: Measures | None = None
    greedy_measures: Measures | None = None
    cached: bool = False  # read from the schedule cache (no solver ran)

    @property
    def greedy(self) -> str:
        """The greedy baseline as the reports print it after ``greedy:``: the EUs of its
        schedule (``3 EUs``), or that the list scheduler found none within the profile's
        EUs (``did not fit in 4 EUs``: the DPF needed Z3 to fit at all)."""
        if self.greedy_eus is not None:
            return f"{self.greedy_eus} EU{'s' if self.greedy_eus != 1 else ''}"
        limit = self.schedule.problem.profile.num_eus
        return f"did not fit in {limit} EU{'s' if limit != 1 else ''}"

    @property
    def proven_optimal(self) -> bool:
        """The EU count is proven minimal (the measure "proven optimal" always refers to)."""
        return self.proof != ""

    @property
    def status(self) -> str:
        if self.secondary == "":
            return "greedy scheduler"
        if self.proof:
            eus = f"EUs proven minimal ({self.proof})"
        elif self.undecided:
            open_counts = "/".join(str(k) for k in self.undecided)
            eus = f"EUs not proven minimal: {open_counts} undecided at the resource limit"
        else:
            eus = "EUs not proven minimal"
        secondary = {
            "proven": "bundles and instructions proven minimal",
            "floor": "bundles and instructions at their lower bounds",
            "limit": "bundles and instructions stopped at the resource limit",
            "off": "bundles and instructions not lowered",
        }[self.secondary]
        return f"{eus}; {secondary}; {self.schedule.scheduler} schedule kept"
