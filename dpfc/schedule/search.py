"""The EU search: the fewest EUs a DPF fits in, and what was proven about it.

Contract: given the problem, its earliest-EU bounds and the greedy schedule (or None), ask
the Z3 model "does the DPF fit in k EUs?" for well-chosen k, each question under the same
deterministic resource limit (:mod:`.limits`), and return the best schedule found with an
honest account: which EU counts are proven infeasible, which were left undecided, and
whether the result is proven minimal.

Order of the questions. A schedule that exists must be found even when proving that fewer
EUs cannot work is beyond the limit (register-pressure proofs are pigeonhole arguments that
SAT solvers do badly), so the search never waits for an infeasibility proof before asking
about more EUs:

1. an upper end: the greedy schedule's EU count, or, without one, a question at the
   earliest-EU bound and then one at the profile's full EU count (sat: a schedule; unsat:
   nothing fits, proven, with a core; unknown: undecided);
2. the earliest-EU bound ``lo`` (often the answer: then it is minimal by the bound);
3. downward from one below the best count found: each sat lowers the best count, the first
   unsat proves the best count minimal, the first unknown stops the search (the count is
   reported undecided, the best count "feasible, minimality not proven").

Since "fits in k EUs" is monotone in k, an unsat at k also settles every count below it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from dpfc.schedule.bounds import Bounds
from dpfc.schedule.limits import WallClockGuard
from dpfc.schedule.problem import Problem
from dpfc.schedule.schedule import Schedule
from dpfc.schedule.z3model import Z3Model


@dataclass
class EuSearch:
    """The outcome of :func:`search_eus`."""

    best: Schedule | None = None  # the schedule with the fewest EUs found (Z3 or greedy)
    models: dict[int, Z3Model] = field(default_factory=dict)  # EU count -> its model
    lowest_open: int = 1  # every EU count below this is proven infeasible
    undecided: list[int] = field(default_factory=list)  # counts left open at the limit
    infeasible: bool = False  # Z3 proved that nothing fits in the profile's EUs
    core: list[str] | None = None  # ... and the unsat core's group keys (if computed)
    z3_found: bool = False  # Z3 found ``best`` (else it is the greedy schedule)

    @property
    def eus(self) -> int | None:
        return None if self.best is None else self.best.eus_used

    def proof(self, bounds: Bounds) -> str:
        """Why the EU count is minimal: "one EU", "bound" (the earliest-EU bound equals
        it), "z3" (Z3 proved one EU fewer infeasible), or "" (not proven)."""
        eus = self.eus
        if eus is None:
            return ""
        if eus == 1:
            return "one EU"
        if eus <= bounds.min_eus:
            return "bound"
        return "z3" if self.lowest_open >= eus else ""

    def open_below(self) -> list[int]:
        """Undecided EU counts below the best one that no unsat answer settled."""
        eus = self.eus if self.eus is not None else 1 << 30
        return sorted(k for k in set(self.undecided) if self.lowest_open <= k < eus)


def search_eus(
    problem: Problem,
    bounds: Bounds,
    greedy: Schedule | None,
    *,
    seed: int,
    rlimit: int,
    guard: WallClockGuard,
) -> EuSearch:
    """See the module docstring."""
    out = EuSearch(best=greedy, lowest_open=max(1, bounds.min_eus))
    full = problem.profile.num_eus

    def ask(eus: int) -> str:
        model = Z3Model(problem, eus, seed=seed, rlimit=rlimit, guard=guard)
        out.models[eus] = model
        outcome, schedule = model.solve()
        if outcome == "sat" and schedule is not None:
            # (a model at k EUs has eus_used <= k, and k is below the best count so far)
            if out.best is None or schedule.eus_used <= out.best.eus_used:
                out.best, out.z3_found = schedule, True
        elif outcome == "unsat":
            out.lowest_open = max(out.lowest_open, eus + 1)
        else:
            out.undecided.append(eus)
        return outcome

    if out.best is None and out.lowest_open < full:
        # Without a greedy schedule, the bound first: when the DPF fits there, that question
        # is often easy, while the one at the full count can be hard (more freedom).
        ask(out.lowest_open)
    if out.best is None:
        outcome = ask(full)
        if outcome == "unsat":
            out.infeasible = True
            out.core = out.models[full].core()
            return out
        if outcome != "sat":
            return out
    assert out.best is not None
    if out.lowest_open < out.best.eus_used:
        ask(out.lowest_open)
    while out.best.eus_used - 1 >= out.lowest_open:
        below = out.best.eus_used - 1
        if below in out.undecided:
            break
        if ask(below) == "unknown":
            break
    return out
