"""Scheduling a module: its DPFs in order with shared array bindings, each in its best form.

:func:`schedule_module` is the compile driver's entry point to the scheduler. It schedules
every DPF of a module (:func:`.search.schedule_problem`); an array bound by an earlier DPF
is pinned for the later ones ("the same binding for every DPF of a module").

**Equivalent forms.** A DPF can be written to the machine in more than one equivalent way,
and which one schedules better is known only after scheduling (EUs first, then code bytes,
bundles, instructions: :func:`_rank`). Each DPF is scheduled in every form it has and the
best result is kept, so the reported EU count is minimal over the forms:

* re-associated (``reassociate``: lower trees, but more values alive at once) or as written
  (the caller passes the function optimised without that pass when it differs);
* a word select/zext of a condition as branches (a path per outcome) or as ALU operations
  (:mod:`.problem.boolwords`: no paths, more EUs per compare), per ``ScheduleOptions.booleans``.

A form that fails is dropped; if every form fails, the first one's diagnostics are raised.
"""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping
from dataclasses import replace

from dpfc.catalog import codes
from dpfc.diagnostics import DiagnosticError, Note
from dpfc.ir import Function, Module
from dpfc.schedule.measures import CodeBytes, measure
from dpfc.schedule.problem.bounds import compute_bounds
from dpfc.schedule.problem.build import build_problem
from dpfc.schedule.problem.tree import Problem
from dpfc.schedule.result import ScheduleOptions, ScheduleResult
from dpfc.schedule.search import schedule_problem
from dpfc.schedule.z3.limits import WallClockGuard
from dpfc.target import TargetProfile

GUARD_CODE = codes.SCHEDULE_TIMEOUT  # the wall-clock guard fired (diagnose.guard_fired)
BOOLEAN_WAYS = {"best": ("branch", "alu"), "branch": ("branch",), "alu": ("alu",)}

Scheduled = tuple[Function, Problem, ScheduleResult]


def _schedule_function(
    module: Module,
    forms: list[Function],
    profile: TargetProfile,
    options: ScheduleOptions,
    bound: Mapping[str, tuple[int, int]],
    by: Mapping[str, str],
    code_bytes: CodeBytes | None,
) -> Scheduled:
    """One DPF in each of its forms (see the module docstring); the best result.

    After the first result, a form is only asked about schedules in no more EUs than the
    best so far, and a form that fails is not explained (no unsat core, no wider
    profiles): only when every form fails is the first one scheduled again, explained."""

    def build(function: Function, booleans: str) -> Problem:
        return build_problem(
            module, function, profile, bindings=bound, bound_by=by, booleans=booleans
        )

    # One wall-clock guard for all forms of the DPF (--timeout is per DPF); when it fires
    # the compile stops: which form is kept must never depend on the clock.
    guard = WallClockGuard(options.guard_s or None)
    candidates: list[tuple[Function, Problem | None, str]] = []
    for function in forms:
        as_words = build(function, "alu")
        # Without conditions used as words the two ways are one problem.
        for booleans in BOOLEAN_WAYS[options.booleans] if as_words.value_conditions else ("alu",):
            candidates.append((function, as_words if booleans == "alu" else None, booleans))
    best: Scheduled | None = None
    for function, built, booleans in candidates:
        quiet = replace(
            options,
            explain_failure=False,
            max_eus=None if best is None else best[2].schedule.eus_used,
        )
        try:
            problem = built or build(function, booleans)
            result = schedule_problem(problem, quiet, code_bytes=code_bytes, guard=guard)
        except DiagnosticError as error:
            if any(d.code == GUARD_CODE for d in error.diagnostics):
                raise
            continue
        if best is None or _rank(result) < _rank(best[2]):
            best = (function, problem, result)
    if best is None:  # every form failed: the first one's diagnostics
        function, built, booleans = candidates[0]
        try:
            problem = built or build(function, booleans)
            schedule_problem(problem, options, code_bytes=code_bytes, guard=guard)
        except DiagnosticError as error:
            if len(candidates) == 1 or any(d.code == GUARD_CODE for d in error.diagnostics):
                raise
            note = _other_forms(len(forms), len(candidates))
            raise DiagnosticError(
                [replace(d, notes=(*d.notes, note)) for d in error.diagnostics]
            ) from None
        raise AssertionError("a DPF that failed quietly was scheduled when explained")
    return best


def _other_forms(forms: int, candidates: int) -> Note:
    """The note a failure explained in its first form adds: the others failed too."""
    ways = []
    if forms > 1:
        ways.append("re-associated and as written")
    if candidates > forms:
        ways.append("with conditions used as values as branches and as ALU words")
    return Note(
        f"dpfc tried this DPF in {candidates} equivalent forms ({'; '.join(ways)}) and none "
        "fits; this explains the first"
    )


def _rank(result: ScheduleResult) -> tuple[int, ...]:
    found = result.measures or measure(result.schedule)
    return (found.eus, found.code_bytes, found.bundles, found.instructions)


def schedule_module(
    module: Module,
    profile: TargetProfile,
    options: ScheduleOptions | None = None,
    *,
    bindings: Mapping[str, tuple[int, int]] | None = None,
    bound_by: Mapping[str, str] | None = None,
    code_bytes: CodeBytes | None = None,
    alternatives: Mapping[str, Function] | None = None,
    chosen: MutableMapping[str, Function] | None = None,
) -> list[tuple[Problem, ScheduleResult]]:
    """Every DPF of ``module`` (results in module order); arrays stay bound across DPFs.

    ``bindings`` fixes arrays before any DPF is scheduled (where another module's object
    placed them; ``bound_by`` names who, for diagnostics). ``alternatives`` gives another
    form of a DPF (by name: the function optimised without re-association); ``chosen``
    receives the form each DPF was scheduled in.

    An unpinned array shared by several DPFs is bound by the first DPF scheduled that
    accesses it, and pinned for the others. DPFs are scheduled most constrained first: the
    one whose access to a shared, unpinned array can run latest (by the earliest-EU bounds)
    goes first, because a DPF can usually delay an access to a later EU but never run one
    earlier than its operands allow."""
    options = options or ScheduleOptions()
    if options.booleans not in BOOLEAN_WAYS:
        raise ValueError(f"booleans must be one of {', '.join(BOOLEAN_WAYS)}")
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
        forms = [function]
        other = (alternatives or {}).get(function.name)
        if other is not None:
            forms.append(other)
        form, problem, result = _schedule_function(
            module, forms, profile, options, bound, by, code_bytes
        )
        if chosen is not None:
            chosen[function.name] = form
        for array, where in result.schedule.bindings.items():
            if array not in bound:
                bound[array] = where
                by[array] = function.name
        results[index] = (problem, result)
    return [results[i] for i in range(len(module.functions))]
