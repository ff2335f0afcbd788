"""The greedy list scheduler: a fast, deterministic baseline and the Z3 fallback.

:func:`greedy_schedule` returns a complete :class:`~dpfc.schedule.schedule.Schedule` for a
:class:`~dpfc.schedule.problem.Problem` that obeys every machine rule of
:mod:`dpfc.schedule.schedule` (the checker, :mod:`dpfc.schedule.check`, must accept it), or
None when its heuristics cannot fit the DPF into the EUs allowed. It never raises on a valid Problem. It
is not optimal: the Z3 scheduler is compared against it.

**Algorithm.** The prolog (:mod:`.prolog`) loads every input, stack words in
register order, placing a word in the register its first use wants (PEEK+POP duplicates a
word). Then the tree is walked from the root, depth first, simulating the registers
symbolically (register -> operation id). For each tree node, EU after EU, one step is built
(:mod:`.step`) by adding actions one at a time — memory operations, the branch, pure
operations (speculatively those of descendants), a leaf's exit, staging moves for the next
EU — and keeping each only if the step can still be *realised* (:mod:`.realise`:
selectors that put every operand in place while every value still needed later stays in
some register). A branch continues the walk in both children from the next EU; an exit ends
the path.

A value is *live* after an EU if a consumer still pending on some path below needs it, or
needs a pure value not held anywhere that is computed from it (:mod:`.facts`). Live
values are never overwritten; constants may be (LOAD_IMM brings them back) unless they are
needed in an A register or by an epilog with no EU left. Several variants are tried and the
best schedule (EUs, then bundles, then selectors) is returned: with and without the prolog's
preferences, with and without speculation, and with pure operations ranked by the longest
chain of their users alone or also by what waits below a branch they decide
(:class:`~.facts.Facts`, ``branches_first``). Every tie is broken by operation id, and the
problem's ids are canonical (:mod:`dpfc.schedule.problem.canonical`), so the schedule does
not depend on the order the source writes independent statements in. This module owns the walk, the array bindings shared by all paths,
and the assembly of the :class:`~dpfc.schedule.schedule.Schedule`.
"""

from __future__ import annotations

from dataclasses import dataclass

from dpfc.schedule.greedy.facts import Facts, NoFit, Plan
from dpfc.schedule.greedy.prolog import greedy_prolog
from dpfc.schedule.greedy.realise import Realised
from dpfc.schedule.greedy.step import StepPlanner
from dpfc.schedule.problem.tree import Branch, Exit, Kind, Problem
from dpfc.schedule.schedule import ExitUse, LaneOp, NodeSpan, Schedule, Source, Step


@dataclass(frozen=True)
class _Variant:
    prolog_preferences: bool
    speculate: bool
    branches_first: bool


VARIANTS = tuple(
    _Variant(prolog_preferences=p, speculate=s, branches_first=b)
    for b in (False, True)
    for p in (True, False)
    for s in (True, False)
)


def greedy_schedule(problem: Problem, *, max_eus: int | None = None) -> Schedule | None:
    """A valid schedule of ``problem`` in at most ``max_eus`` EUs (default: the profile's),
    or None if the heuristics cannot fit it. Deterministic."""
    limit = problem.profile.num_eus if max_eus is None else min(max_eus, problem.profile.num_eus)
    if limit < 1:
        return None
    best: Schedule | None = None
    for variant in VARIANTS:
        try:
            schedule = _Scheduler(problem, variant).run()
        except NoFit:
            continue
        if schedule.eus_used > limit:
            continue
        if best is None or _quality(schedule) < _quality(best):
            best = schedule
    return best


def _quality(schedule: Schedule) -> tuple[int, int, int]:
    return (schedule.eus_used, schedule.bundle_count(), schedule.selector_count())


class _Scheduler:
    """One greedy run of one variant: the prolog, then the tree walked depth first."""

    def __init__(self, problem: Problem, variant: _Variant) -> None:
        self.p = problem
        self.variant = variant
        self.facts = Facts(problem, branches_first=variant.branches_first)
        self.bindings: dict[str, tuple[int, int]] = {
            name: info.pin for name, info in problem.arrays.items() if info.pin is not None
        }
        self.planner = StepPlanner(self.facts, self.bindings, speculate=variant.speculate)
        self.spans: dict[int, NodeSpan] = {}
        self.steps: list[Step] = []
        self.exits: list[ExitUse] = []

    def run(self) -> Schedule:
        prolog, state = greedy_prolog(
            self.facts, self.bindings, preferences=self.variant.prolog_preferences
        )
        self._node(0, 0, state)
        if self.p.placement == "packet":
            per_eu: dict[int, int] = {}
            for step in self.steps:
                per_eu[step.eu] = per_eu.get(step.eu, 0) + 1
            if any(n > self.facts.profile.packet_bundles_per_stage for n in per_eu.values()):
                raise NoFit
        accessed = {o.array for o in self.p.ops if o.kind is Kind.MEM and o.array is not None}
        return Schedule(
            self.p,
            tuple(prolog),
            tuple(self.spans[n.id] for n in self.p.nodes),
            tuple(sorted(self.steps, key=lambda s: (s.node, s.eu))),
            tuple(sorted(self.exits, key=lambda e: e.node)),
            {name: where for name, where in sorted(self.bindings.items()) if name in accessed},
            "greedy",
        )

    def _node(self, t: int, first_eu: int, state: list[int]) -> None:
        node = self.p.nodes[t]
        if first_eu > self.facts.last_eu:
            # The parent branched in the last EU: the epilog reads the registers it left.
            if not isinstance(node.end, Exit) or self.facts.mem_ops(t):
                raise NoFit
            self.spans[t] = NodeSpan(t, first_eu, self.facts.last_eu)
            self.exits.append(self._exit_use(t, state))
            return
        placed: set[int] = set()
        for eu in range(first_eu, self.facts.last_eu + 1):
            plan, realised = self.planner.plan_step(t, eu, state, placed)
            placed.update(plan.mem.values())
            self.steps.append(self._make_step(t, eu, plan, realised))
            state = realised.next_state
            if plan.branch:
                assert isinstance(node.end, Branch)
                self.spans[t] = NodeSpan(t, first_eu, eu)
                self._node(node.end.taken, eu + 1, state)
                self._node(node.end.not_taken, eu + 1, state)
                return
            if plan.end:
                self.spans[t] = NodeSpan(t, first_eu, eu)
                self.exits.append(self._exit_use(t, state))
                return
        raise NoFit

    def _exit_use(self, t: int, state: list[int]) -> ExitUse:
        end = self.p.nodes[t].end
        assert isinstance(end, Exit)
        push = tuple(self.facts.regs[self._find(state, v)] for v in end.push)
        steer: Source | None = None
        if end.steer_value is not None:
            steer = (
                end.steer_value
                if self.facts.steer_immediate(end.steer_value)
                else self.facts.regs[self._find(state, end.steer_value)]
            )
        return ExitUse(t, push, steer)

    @staticmethod
    def _find(state: list[int], value: int) -> int:
        if value not in state:
            raise NoFit
        return state.index(value)

    def _make_step(self, t: int, eu: int, plan: Plan, realised: Realised) -> Step:
        return Step(
            t,
            eu,
            realised.selectors,
            tuple(LaneOp(lane, op, swapped) for lane, (op, swapped) in sorted(plan.alu.items())),
            tuple(LaneOp(lane, op) for lane, op in sorted(plan.mem.items())),
            realised.branch,
        )
