"""Scheduling a DPF: the greedy baseline, the optimal Z3 search, the checker, the reports.

:func:`schedule_problem` is the one entry point the compiler uses:

1. :func:`dpfc.schedule.diagnose.precheck` rejects structural conflicts with a precise
   diagnostic;
2. the greedy list scheduler (:mod:`.greedy`) gives a baseline (and the fallback);
3. with ``scheduler="z3"``, :class:`~dpfc.schedule.z3model.Z3Model` is solved for 1, 2, ...
   EUs up to the profile's count. The first satisfiable count is optimal and the
   unsatisfiable count just below it is the proof (``proven_optimal``; counts below the
   earliest-EU bound of :mod:`.bounds` are infeasible by that bound and not solved); then the number of
   bundles and the number of instructions (selectors and ALU ops) are lowered one at a time
   while the time budget lasts. If Z3 times out before any schedule, the greedy schedule is
   used and the result says so (``fallback``);
4. if nothing fits, the unsat core at the profile's EU count becomes DPF6020;
5. the independent checker (:mod:`.check`) re-verifies the chosen schedule; a violation is
   a compiler bug and raises :class:`ScheduleBug`.

:func:`schedule_module` schedules every DPF of a module in order; an array bound by an
earlier DPF is pinned for the later ones ("the same binding for every DPF of a module").
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace

from dpfc.diagnostics import Diagnostic, DiagnosticError
from dpfc.ir.core import Module
from dpfc.schedule import diagnose
from dpfc.schedule.bounds import compute_bounds
from dpfc.schedule.build import build_problem
from dpfc.schedule.check import check_schedule
from dpfc.schedule.greedy import greedy_schedule
from dpfc.schedule.problem import Problem
from dpfc.schedule.schedule import Schedule
from dpfc.schedule.z3model import Z3Model
from dpfc.target.profile import TargetProfile

SECONDARY_MS = 1_500  # the most the secondary objectives (bundles, instructions) may take


class ScheduleBug(Exception):
    """A schedule failed the independent checker: an internal compiler error."""


@dataclass(frozen=True)
class ScheduleOptions:
    scheduler: str = "z3"  # "z3" | "greedy"
    timeout_ms: int = 20_000  # Z3 budget per DPF; on timeout the greedy schedule is used
    seed: int = 0
    check: bool = True  # run the checker on the result
    secondary: bool = True  # lower bundles and instructions after the EU count is optimal
    # On failure, find how many EUs the DPF would need (schedules it on wider profiles).
    needed_eus: bool = True
    # Take the greedy schedule without asking Z3 when it meets the earliest-EU bound (it is
    # then optimal in EUs, proven by the bound; bundles and instructions are not minimised).
    greedy_at_bound: bool = False


@dataclass(frozen=True)
class ScheduleResult:
    schedule: Schedule
    proven_optimal: bool  # UNSAT at schedule.eus_used - 1 (or it uses 1 EU)
    greedy_eus: int | None  # EUs of the greedy schedule (None: greedy found none)
    solve_seconds: float  # time spent in Z3
    fallback: str | None = None  # why the greedy schedule was used, if it was
    secondary_optimal: bool = False  # bundles and instructions proven minimal at that EU count
    # Why the EU count is minimal: "one EU"; "bound" (the earliest-EU bound of bounds.py
    # equals it: the dependence chain proves no fewer EUs can work); "z3" (unsat at one fewer)
    proof: str = ""

    @property
    def status(self) -> str:
        if self.fallback is not None:
            return f"greedy fallback: {self.fallback}"
        if self.schedule.scheduler == "greedy":
            return "greedy"
        return "proven optimal" if self.proven_optimal else "not proven optimal"


def _checked(schedule: Schedule, options: ScheduleOptions) -> Schedule:
    if options.check:
        violations = check_schedule(schedule)
        if violations:
            listing = "\n".join(f"  {v.code}: {v.message}" for v in violations)
            raise ScheduleBug(
                f"the {schedule.scheduler} schedule of `{schedule.problem.name}` fails the "
                f"checker:\n{listing}"
            )
    return schedule


def instruction_count(schedule: Schedule) -> int:
    """Prolog loads, EU selectors and ALU ops: the Z3 model's third objective."""
    return len(schedule.prolog) + sum(len(s.selectors) + len(s.alu) for s in schedule.steps)


def schedule_problem(problem: Problem, options: ScheduleOptions | None = None) -> ScheduleResult:
    """Schedule one DPF (see the module docstring). Raises DiagnosticError if it cannot fit."""
    options = options or ScheduleOptions()
    problems = diagnose.precheck(problem)
    bounds = compute_bounds(problem)
    problems += diagnose.from_bounds(problem, bounds)
    if problems:
        raise DiagnosticError(problems)
    greedy = greedy_schedule(problem)
    greedy_eus = greedy.eus_used if greedy is not None else None
    if options.scheduler == "greedy":
        if greedy is None:
            raise DiagnosticError(_failure(problem, options))
        return ScheduleResult(_checked(greedy, options), False, greedy_eus, 0.0)

    if options.greedy_at_bound and greedy is not None and greedy.eus_used == bounds.min_eus:
        proof = "one EU" if greedy.eus_used == 1 else "bound"
        return ScheduleResult(_checked(greedy, options), True, greedy_eus, 0.0, None, False, proof)

    started = time.perf_counter()
    deadline = started + options.timeout_ms / 1000

    def remaining_ms() -> int:
        return max(1, int((deadline - time.perf_counter()) * 1000))

    # Below the earliest-EU bound (bounds.py: a relaxation of the same rules) no schedule
    # exists, so the search starts there; a schedule at the bound is optimal by that proof,
    # one above it by Z3's unsat answer at one EU fewer.
    proven_below = bounds.min_eus - 1  # every EU count <= this is infeasible
    if greedy is not None and greedy.eus_used == bounds.min_eus and options.secondary:
        # The greedy schedule already meets the bound: the EU count is optimal, so Z3 only
        # has to improve bundles and instructions, starting from it (no feasibility solve).
        eus = greedy.eus_used
        model = Z3Model(problem, eus, seed=options.seed, timeout_ms=remaining_ms())
        model.last_counts = (greedy.bundle_count(), instruction_count(greedy))
        improved, secondary = _improve(model, greedy, remaining_ms)
        elapsed = time.perf_counter() - started
        proof = "one EU" if eus == 1 else "bound"
        return ScheduleResult(
            _checked(improved, options), True, greedy_eus, elapsed, None, secondary, proof
        )
    for eus in range(bounds.min_eus, problem.profile.num_eus + 1):
        model = Z3Model(problem, eus, seed=options.seed, timeout_ms=remaining_ms())
        outcome, schedule = model.solve()
        if outcome == "unsat":
            proven_below = eus
            continue
        if outcome != "sat" or schedule is None:
            elapsed = time.perf_counter() - started
            if greedy is None:
                raise DiagnosticError(diagnose.timed_out(problem, elapsed))
            reason = f"Z3 timed out after {elapsed:.1f} s at {eus} EUs"
            return ScheduleResult(_checked(greedy, options), False, greedy_eus, elapsed, reason)
        secondary = False
        if options.secondary:
            schedule, secondary = _improve(model, schedule, remaining_ms)
        elapsed = time.perf_counter() - started
        proven = proven_below == eus - 1
        proof = "one EU" if eus == 1 else "bound" if eus == bounds.min_eus else "z3"
        return ScheduleResult(
            _checked(schedule, options), proven, greedy_eus, elapsed, None, secondary, proof
        )
    raise DiagnosticError(_failure(problem, options))


def _improve(
    model: Z3Model, schedule: Schedule, remaining_ms: Callable[[], int]
) -> tuple[Schedule, bool]:
    """Lower the bundle count, then the instruction count, at the model's EU count.

    Returns the best schedule and whether both counts are proven minimal (Z3 finished
    rather than timed out; then the first schedule is kept if it found nothing better)."""
    return model.improve(schedule, min(remaining_ms(), SECONDARY_MS))


def _failure(problem: Problem, options: ScheduleOptions) -> list[Diagnostic]:
    profile = problem.profile
    model = Z3Model(problem, profile.num_eus, seed=options.seed, timeout_ms=options.timeout_ms)
    outcome, _ = model.solve()
    if outcome == "sat":  # only the greedy scheduler failed
        return [
            Diagnostic(
                "DPF6025",
                f"the greedy scheduler cannot fit DPF `{problem.name}` on {profile.name}; the "
                "Z3 scheduler can",
                problem.span,
                hint="use --scheduler z3 (the default)",
            )
        ]
    core = model.core() if outcome == "unsat" else []
    needed: int | None = None
    wider_counts = range(profile.num_eus + 1, 2 * profile.num_eus + 1) if options.needed_eus else ()
    for eus in wider_counts:
        wider = replace(problem, profile=replace(profile, num_eus=eus))
        if Z3Model(wider, eus, seed=options.seed, timeout_ms=2_000).solve()[0] == "sat":
            needed = eus
            break
    return [diagnose.from_core(problem, core, needed)]


def schedule_module(
    module: Module,
    profile: TargetProfile,
    options: ScheduleOptions | None = None,
    *,
    bindings: Mapping[str, tuple[int, int]] | None = None,
    bound_by: Mapping[str, str] | None = None,
) -> list[tuple[Problem, ScheduleResult]]:
    """Every DPF of ``module`` (results in module order); arrays stay bound across DPFs.

    ``bindings`` fixes arrays before any DPF is scheduled (where another module's object
    placed them; ``bound_by`` names who, for diagnostics).

    An unpinned array shared by several DPFs is bound by the first DPF scheduled that
    accesses it, and pinned for the others. DPFs are scheduled most constrained first: the
    one whose access to a shared, unpinned array can run latest (by the earliest-EU bounds)
    goes first, because a DPF can usually delay an access to a later EU but never run one
    earlier than its operands allow."""
    unbound = [
        name
        for name, decl in module.arrays.items()
        if decl.pin is None
        and name not in (bindings or {})
        and sum(any(i.symbol == name for i in f.instrs()) for f in module.functions) > 1
    ]

    def urgency(function_index: int) -> int:
        function = module.functions[function_index]
        if not unbound:
            return 0
        problem = build_problem(module, function, profile)
        bounds = compute_bounds(problem)
        runs = [bounds.run[o.id] for o in problem.ops if o.array in unbound]
        return max(runs, default=-1)

    order = sorted(range(len(module.functions)), key=lambda i: (-urgency(i), i))
    bound: dict[str, tuple[int, int]] = dict(bindings or {})
    by: dict[str, str] = {name: (bound_by or {}).get(name, "another module") for name in bound}
    results: dict[int, tuple[Problem, ScheduleResult]] = {}
    for index in order:
        function = module.functions[index]
        problem = build_problem(module, function, profile, bindings=bound, bound_by=by)
        result = schedule_problem(problem, options)
        for array, where in result.schedule.bindings.items():
            if array not in bound:
                bound[array] = where
                by[array] = function.name
        results[index] = (problem, result)
    return [results[i] for i in range(len(module.functions))]
