"""Scheduling one DPF: the greedy baseline, the Z3 search, the checker, the choice.

:func:`schedule_problem` is the one entry point for a problem (:func:`.module.schedule_module`
calls it for each form of each DPF of a module):

1. :func:`.diagnose.precheck` and the earliest-EU bounds reject structural conflicts with a
   precise diagnostic;
2. the greedy list scheduler (:mod:`.greedy`) gives a baseline and an upper end;
3. with ``scheduler="z3"``, :func:`.z3.eu_search.search_eus` finds the fewest EUs it can,
   every question under the same deterministic resource limit, and says what it proved;
4. at that EU count the bundles, then the instructions, are lowered
   (:meth:`.z3.model.Z3Model.optimise`: first in the neighbourhood of the best schedule,
   then on the whole model) unless a schedule already meets their lower bounds
   (:func:`.measures.secondary_floor`);
5. where the descent stopped at its limit, :func:`.tidy.tidy` removes dead moves; the
   result is the Z3 schedule only if it is no worse than the greedy one in every measure
   (EUs, bundles, selectors, instructions, code bytes), or uses fewer EUs;
6. if nothing fits, the unsat core at the profile's EU count becomes DPF6020 (proven), or
   DPF6024 says which EU counts were left undecided (nothing proven);
7. the independent checker (:mod:`.check`) re-verifies the chosen schedule; a violation is
   a compiler bug and raises :class:`ScheduleBug`.

The wall-clock ``--timeout`` guard (:class:`.z3.limits.WallClockGuard`) only stops: DPF6028.
Results of unchanged problems come from the schedule cache (:mod:`.cache`) when asked.
"""

from __future__ import annotations

import time
from dataclasses import fields as fields_of
from dataclasses import replace

from dpfc.catalog import codes
from dpfc.diagnostics import Diagnostic, DiagnosticError
from dpfc.schedule.cache import cache_key, lookup, store
from dpfc.schedule.check import check_schedule
from dpfc.schedule.diagnose.chains import from_bounds
from dpfc.schedule.diagnose.solver import from_core, guard_fired
from dpfc.schedule.diagnose.solver import undecided as undecided_diagnostic
from dpfc.schedule.diagnose.structure import precheck
from dpfc.schedule.greedy.scheduler import greedy_schedule
from dpfc.schedule.measures import CodeBytes, measure, secondary_floor
from dpfc.schedule.problem.bounds import Bounds, compute_bounds
from dpfc.schedule.problem.tree import Problem
from dpfc.schedule.result import ScheduleOptions, ScheduleResult
from dpfc.schedule.schedule import Schedule
from dpfc.schedule.tidy import tidy
from dpfc.schedule.z3.eu_search import EuSearch, search_eus
from dpfc.schedule.z3.limits import GuardFired, WallClockGuard
from dpfc.schedule.z3.model import Z3Model


class ScheduleBug(Exception):
    """A schedule failed the independent checker: an internal compiler error."""


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


def schedule_problem(
    problem: Problem,
    options: ScheduleOptions | None = None,
    *,
    code_bytes: CodeBytes | None = None,
    guard: WallClockGuard | None = None,
) -> ScheduleResult:
    """Schedule one DPF (see the module docstring). Raises DiagnosticError if it cannot fit
    (or if the wall-clock guard fired). ``code_bytes`` measures the code a schedule
    generates, for the comparison with the greedy schedule. ``guard``: the wall-clock guard
    to run under (by default one of ``options.guard_s`` for this call)."""
    options = options or ScheduleOptions()
    problems = precheck(problem)
    bounds = compute_bounds(problem)
    problems += from_bounds(problem, bounds)
    if problems:
        raise DiagnosticError(problems)
    key = cache_key(problem, options) if options.cache else None
    if key is not None:
        hit = lookup(key, problem)
        if hit is not None:
            return ScheduleResult(**{**hit, "solve_seconds": 0.0, "cached": True})
    guard = guard or WallClockGuard(options.guard_s or None)
    result = _schedule_uncached(problem, options, bounds, code_bytes, guard)
    if key is not None:
        fields = {f.name: getattr(result, f.name) for f in fields_of(result)}
        store(key, {k: v for k, v in fields.items() if k != "cached"})
    return result


def _schedule_uncached(
    problem: Problem,
    options: ScheduleOptions,
    bounds: Bounds,
    code_bytes: CodeBytes | None,
    guard: WallClockGuard,
) -> ScheduleResult:
    _tell(options, problem, "greedy")
    greedy = greedy_schedule(problem)
    greedy_eus = greedy.eus_used if greedy is not None else None
    greedy_measures = measure(greedy, code_bytes) if greedy is not None else None
    if options.scheduler == "greedy":
        if greedy is None:
            raise DiagnosticError(_failure(problem, options, EuSearch(), WallClockGuard(None)))
        return ScheduleResult(
            _checked(greedy, options),
            greedy_eus,
            0.0,
            measures=greedy_measures,
            greedy_measures=greedy_measures,
        )
    started = time.perf_counter()
    try:
        search = search_eus(
            problem,
            bounds,
            greedy,
            seed=options.seed,
            rlimit=options.budget.feasibility,
            improve=options.budget.improve,
            guard=guard,
            max_eus=options.max_eus,
            progress=options.progress,
        )
        if search.best is None:
            raise DiagnosticError(_failure(problem, options, search, guard))
        try:
            best, secondary = _lower_secondary(problem, bounds, search, options, guard)
        except GuardFired as stop:
            stop.decided = [
                *search.summary(problem.profile.num_eus),
                "bundles and instructions were being lowered",
            ]
            raise
    except GuardFired as stop:
        raise DiagnosticError(guard_fired(problem, stop.seconds, stop.decided)) from None
    if secondary not in ("proven", "floor"):
        best = tidy(best)  # drop dead moves left where the secondary descent stopped
    chosen = best
    best_measures = measure(best, code_bytes)
    if greedy is not None and greedy_measures is not None and best is not greedy:
        same_eus = best_measures.eus == greedy_measures.eus
        if same_eus and not best_measures.no_worse_than(greedy_measures):
            chosen = tidy(greedy)
            best_measures = measure(chosen, code_bytes)
    return ScheduleResult(
        _checked(chosen, options),
        greedy_eus,
        time.perf_counter() - started,
        search.proof(bounds),
        tuple(search.open_below()),
        secondary,
        best_measures,
        greedy_measures,
    )


def _lower_secondary(
    problem: Problem,
    bounds: Bounds,
    search: EuSearch,
    options: ScheduleOptions,
    guard: WallClockGuard,
) -> tuple[Schedule, str]:
    """The best schedule at the search's EU count after lowering bundles, then
    instructions, and how far that went ("proven", "floor", "limit" or "off")."""
    best = search.best
    assert best is not None
    eus = best.eus_used
    counts = _counts(best)
    floor = secondary_floor(problem, bounds, eus)
    if counts[0] <= floor[0] and counts[1] <= floor[1]:
        return best, "floor"
    if not options.secondary:
        return best, "off"
    _tell(options, problem, f"z3, lowering bundles at {eus} EU{'s' if eus != 1 else ''}")
    model = search.models.get(eus) or Z3Model(
        problem, eus, seed=options.seed, rlimit=options.budget.feasibility, guard=guard
    )
    # First the neighbourhood of the best schedule (its operations stay where they are;
    # the registers, moves and constants are chosen anew): a small question that removes
    # most register traffic. Then the whole model, with what is left of the budget: an
    # answer there is optimal.
    left = options.budget.secondary
    _, tidied, spent = model.optimise(left, fixed=model.placement(best))
    left -= spent
    if tidied is not None and _counts(tidied) < counts:
        best = tidied
    if left <= 0:
        return best, "limit"
    _, optimal, _ = model.optimise(left)
    if optimal is not None and _counts(optimal) <= _counts(best):
        return optimal, "proven"
    return best, "limit"


def _tell(options: ScheduleOptions, problem: Problem, what: str) -> None:
    if options.progress is not None:
        options.progress(f"scheduling {problem.module}.{problem.name} ({what})")


def _counts(schedule: Schedule) -> tuple[int, int]:
    """(bundles, instructions): the secondary objectives, compared lexicographically."""
    found = measure(schedule)
    return found.bundles, found.instructions


def _explained_core(
    problem: Problem, options: ScheduleOptions, guard: WallClockGuard
) -> list[str] | None:
    """The unsat core at the profile's EU count of a model built to explain (its redundant
    constraints, e.g. an epilog's register count, in their groups): what an empty core
    leaves unnamed. None if that model does not answer unsat within the limit."""
    model = Z3Model(
        problem,
        problem.profile.num_eus,
        seed=options.seed,
        rlimit=options.budget.feasibility,
        guard=guard,
        explaining=True,
    )
    outcome, _ = model.solve()
    return model.core() if outcome == "unsat" else None


def _failure(
    problem: Problem, options: ScheduleOptions, search: EuSearch, guard: WallClockGuard
) -> list[Diagnostic]:
    """Why nothing was scheduled: proven (DPF6020, with the core) or undecided (DPF6024)."""
    profile = problem.profile
    full = profile.num_eus
    if not options.explain_failure:
        return [undecided_diagnostic(problem, search.undecided, options.budget.feasibility)]
    proven, core = search.infeasible, None
    if proven:
        core = search.models[full].core()
        if core == []:  # nothing named: ask a model whose redundant constraints are grouped
            core = _explained_core(problem, options, guard) or core
    elif full not in search.undecided:
        model = search.models.get(full) or Z3Model(
            problem, full, seed=options.seed, rlimit=options.budget.feasibility, guard=guard
        )
        outcome, _ = model.solve()
        if outcome == "sat":  # only the greedy scheduler failed
            return [
                Diagnostic(
                    codes.SCHEDULE_GREEDY_FAILED,
                    f"the greedy scheduler cannot fit DPF `{problem.name}` on {profile.name}; "
                    "the Z3 scheduler can",
                    problem.span,
                    hint="use --scheduler z3 (the default)",
                )
            ]
        if outcome == "unsat":
            proven, core = True, model.core()
            if core == []:
                core = _explained_core(problem, options, guard) or core
        else:
            search.undecided.append(full)
    if not proven:
        return [undecided_diagnostic(problem, search.undecided, options.budget.feasibility)]
    needed: int | None = None
    wider_counts = range(full + 1, 2 * full + 1) if options.needed_eus else ()
    for eus in wider_counts:
        wider = replace(problem, profile=replace(profile, num_eus=eus))
        model = Z3Model(
            wider, eus, seed=options.seed, rlimit=options.budget.needed_eus, guard=guard
        )
        if model.solve()[0] == "sat":
            needed = eus
            break
    return [from_core(problem, core, needed)]
