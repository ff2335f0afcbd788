"""The EU search: the fewest EUs a DPF fits in, and what was proven about it.

Contract: given the problem, its earliest-EU bounds and the greedy schedule (or None), ask
the Z3 model "does the DPF fit in k EUs?" for well-chosen k, every question under a
deterministic resource limit (:mod:`.limits`), and return the best schedule found with an
honest account: which EU counts are proven infeasible, which were left undecided, and
whether the result is proven minimal.

**Rounds.** SAT solvers' running times on one question vary by orders of magnitude with
the encoding's details and the solver's configuration, and a schedule that exists must be
found even when proving that fewer EUs cannot work is beyond any limit (register-pressure
proofs are pigeonhole arguments that SAT solvers do badly). So the questions are asked in
rounds of growing resource limits (:func:`.limits.question_rounds`), alternating between
two of Z3's solver configurations (``QF_BV`` and ``QF_FD``: both bit-blast to SAT, with
different preprocessing, and where one takes long the other is often fast). Each round
asks every EU count still open:

* one below the best count found first (an unsat answer there proves the best count
  minimal: "fits in k EUs" is monotone in k, so it settles every count below);
* then the others from the lowest open count upwards (without any schedule yet, the
  smallest counts are asked first: a DPF that fits is usually found fast at a small count,
  while a question at the profile's full count has the most freedom and can be the hardest).

A sat answer lowers the best count and starts the round's list anew; an unsat answer at k
settles every count up to k; an unknown one leaves k open for the next round. The search
ends when nothing is open, or when the rounds are spent: all of them without any schedule,
up to the ``improve`` total of resource units once a schedule exists (then asking for
fewer EUs is an improvement, not a necessity). Counts left open are reported undecided.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from dpfc.schedule.problem.bounds import Bounds
from dpfc.schedule.problem.tree import Problem
from dpfc.schedule.schedule import Schedule
from dpfc.schedule.z3.limits import GuardFired, WallClockGuard, question_rounds
from dpfc.schedule.z3.model import Z3Model


@dataclass
class EuSearch:
    """The outcome of :func:`search_eus`."""

    best: Schedule | None = None  # the schedule with the fewest EUs found (Z3 or greedy)
    models: dict[int, Z3Model] = field(default_factory=dict)  # EU count -> its model
    lowest_open: int = 1  # every EU count below this is proven infeasible
    undecided: list[int] = field(default_factory=list)  # counts left open at the limit
    infeasible: bool = False  # Z3 proved that nothing fits in the EUs allowed
    z3_found: bool = False  # Z3 found ``best`` (else it is the greedy schedule)
    spent: int = 0  # resource units of every question asked

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

    def summary(self, full: int) -> list[str]:
        """What the search has decided so far (for a stop by the wall-clock guard)."""
        out = []
        if self.best is not None:
            out.append(f"a schedule in {self.best.eus_used} EUs was found ({self.best.scheduler})")
        else:
            out.append("no schedule was found yet")
        if self.lowest_open > 1:
            out.append(f"fewer than {self.lowest_open} EUs is proven impossible")
        still = self.open_counts(full)
        if still:
            out.append(f"not decided: {', '.join(map(str, sorted(still)))} EUs")
        return out

    def open_counts(self, full: int) -> list[int]:
        """The EU counts still worth asking, in the order a round asks them."""
        upper = full if self.best is None else self.best.eus_used - 1
        counts = list(range(self.lowest_open, upper + 1))
        if self.best is not None and counts:
            return [counts[-1], *counts[:-1]]
        return counts


def search_eus(
    problem: Problem,
    bounds: Bounds,
    greedy: Schedule | None,
    *,
    seed: int,
    rlimit: int,
    improve: int,
    guard: WallClockGuard,
    max_eus: int | None = None,
    progress: Callable[[str], None] | None = None,
) -> EuSearch:
    """See the module docstring. ``rlimit`` is the largest single question's resource
    limit, ``improve`` the total once a schedule exists; no count above ``max_eus`` (or
    the profile's EUs) is asked."""
    out = EuSearch(best=greedy, lowest_open=max(1, bounds.min_eus))
    full = min(problem.profile.num_eus, max_eus or problem.profile.num_eus)
    unknown: set[int] = set()

    def ask(eus: int, logic: str, limit: int) -> str:
        if progress is not None:
            asked = f"{eus} EU{'s' if eus != 1 else ''} asked"
            progress(f"scheduling {problem.module}.{problem.name} (z3, {asked})")
        model = out.models.get(eus)
        if model is None:
            model = out.models[eus] = Z3Model(problem, eus, seed=seed, rlimit=limit, guard=guard)
        outcome, schedule, spent = model.decide(logic, limit)
        out.spent += spent
        if outcome == "sat" and schedule is not None:
            # (a model at k EUs has eus_used <= k, and k is below the best count so far)
            if out.best is None or schedule.eus_used < out.best.eus_used:
                out.best, out.z3_found = schedule, True
        elif outcome == "unsat":
            out.lowest_open = max(out.lowest_open, eus + 1)
            if eus == full:
                out.infeasible = True
        else:
            unknown.add(eus)
        return outcome

    try:
        for logic, limit in question_rounds(rlimit):
            asked: set[int] = set()
            while True:
                pending = [k for k in out.open_counts(full) if k not in asked]
                if not pending or out.infeasible or _spent_enough(out, improve):
                    break
                asked.add(pending[0])
                ask(pending[0], logic, limit)
            if not out.open_counts(full) or out.infeasible or _spent_enough(out, improve):
                break
    except GuardFired as stop:
        stop.decided = out.summary(full)
        raise
    out.undecided = sorted(k for k in unknown if k >= out.lowest_open)
    return out


def _spent_enough(out: EuSearch, improve: int) -> bool:
    """Once a schedule exists, the search for fewer EUs stops at ``improve`` units."""
    return out.best is not None and out.spent >= improve
