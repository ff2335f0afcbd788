"""The compile driver: the only code that orders the phases of the compiler.

    load (dpfc.sema.loader) -> resolve the profile (dpfc.driver.profile), once
      -> check (dpfc.sema) -> lower (dpfc.lower) -> optimise (dpfc.passes)
      -> schedule (dpfc.schedule) -> generate and encode (dpfc.codegen) -> object

Each step is a function of the previous step's result, so ``dpfc check`` stops after the
check, ``--emit ir`` after lowering, and the benchmarks and tests call the same functions
as the CLI. Every phase gets the one :class:`~dpfc.target.profile.TargetProfile` object
that :func:`~dpfc.driver.profile.resolve_profile` returned (carried by
:class:`~dpfc.sema.CheckedProgram`).

Options that change what is scheduled:

* ``only`` (``--dpf NAME``) schedules that DPF and the DPFs it shares unpinned arrays with
  (their bindings depend on each other), and generates code for ``NAME`` alone;
* ``objects`` (``--bindings OBJ``) fix the arrays those objects bound (by module-qualified
  name) before scheduling, so a module compiled against another module's object binds a
  shared array where the other did; a conflicting ``@pin`` is DPF5221.

Chain targets stay relocations (resolved by ``dpfc link``) unless ``chain_targets`` names
their PCs. ``time_passes`` receives the pass manager's table, then one for the back end
(scheduling, with each DPF's time in the solver, and code generation).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TextIO

from dpfc.codegen.emit import CompiledDPF, generate, qualified
from dpfc.codegen.objfile import module_object
from dpfc.diagnostics import Diagnostic, DiagnosticError, SourceFile
from dpfc.driver.profile import resolve_profile
from dpfc.ir.core import Function, Module
from dpfc.ir.printer import format_function
from dpfc.isa.bundle import PC
from dpfc.lower import lower_program
from dpfc.objfile.model import ObjectFile
from dpfc.passes.manager import DEFAULT_PIPELINE, run_pipeline
from dpfc.schedule import Problem, Schedule, ScheduleOptions, ScheduleResult, schedule_module
from dpfc.sema import CheckedProgram, check_program, load_program
from dpfc.sema.codes import Code
from dpfc.target.profile import TargetProfile

Source = str | Path | SourceFile


@dataclass(frozen=True)
class CompileOptions:
    target: TargetProfile | None = None  # --target: wins over @target
    schedule: ScheduleOptions = field(default_factory=ScheduleOptions)
    only: str | None = None  # --dpf NAME
    objects: tuple[ObjectFile, ...] = ()  # --bindings OBJ
    chain_targets: Mapping[str, PC] = field(default_factory=dict)
    print_after_all: TextIO | None = None
    time_passes: TextIO | None = None


@dataclass(frozen=True)
class CompiledUnit:
    """One DPF: its scheduling problem, the schedule found, and the generated code."""

    problem: Problem
    result: ScheduleResult
    compiled: CompiledDPF

    @property
    def name(self) -> str:
        return self.problem.name


@dataclass(frozen=True)
class CompiledModule:
    checked: CheckedProgram
    module: Module  # the optimised IR (all DPFs, also those --dpf left out)
    units: tuple[CompiledUnit, ...]

    @property
    def profile(self) -> TargetProfile:
        return self.checked.profile

    def unit(self, name: str) -> CompiledUnit:
        for unit in self.units:
            if unit.name == name:
                return unit
        raise KeyError(name)

    def object(self) -> ObjectFile:
        """The module's object (``dpfc compile -o FILE.dpfo``)."""
        return module_object(self.module.name, self.profile, [u.compiled for u in self.units])


def check_source(
    source: Source,
    target: TargetProfile | None = None,
    search_path: Sequence[str | Path] | None = None,
) -> CheckedProgram:
    """Load and check ``source`` and its imports for the resolved profile (``dpfc check``)."""
    program = load_program(source, search_path)
    return check_program(program, resolve_profile(program, target))


def lower(checked: CheckedProgram) -> Module:
    """The SSA IR of the main module, as lowered (``--emit ir``)."""
    return lower_program(checked)


def optimise(module: Module, options: CompileOptions | None = None) -> Module:
    """Run the default pass pipeline on ``module`` in place and return it (``--emit opt-ir``)."""
    options = options or CompileOptions()
    run_pipeline(
        module,
        DEFAULT_PIPELINE,
        print_after_all=options.print_after_all,
        time_passes=options.time_passes,
    )
    return module


def optimised_ir(checked: CheckedProgram) -> Module:
    return optimise(lower(checked))


def compile_source(source: Source, options: CompileOptions | None = None) -> CompiledModule:
    """Compile a ``.dpf`` file; raises DiagnosticError on user errors."""
    options = options or CompileOptions()
    checked = check_source(source, options.target)
    return compile_checked(checked, optimise(lower(checked), options), options)


def compile_checked(
    checked: CheckedProgram, module: Module, options: CompileOptions | None = None
) -> CompiledModule:
    """Schedule and generate code for the optimised IR ``module`` of ``checked``."""
    options = options or CompileOptions()
    profile = checked.profile
    bindings, bound_by = object_bindings(module, options.objects)
    wanted = scheduled_functions(module, options.only)
    subset = replace(module, functions=[f for f in module.functions if f.name in wanted])
    chosen: dict[str, Function] = {}
    started = time.perf_counter()
    scheduled = schedule_module(
        subset,
        profile,
        options.schedule,
        bindings=bindings,
        bound_by=bound_by,
        code_bytes=code_bytes,
        alternatives=without_reassociation(checked, subset),
        chosen=chosen,
    )
    scheduling = time.perf_counter() - started
    # The IR of each DPF in the form it was scheduled in (equivalent either way).
    module = replace(module, functions=[chosen.get(f.name, f) for f in module.functions])
    started = time.perf_counter()
    units = tuple(
        CompiledUnit(
            problem, result, generate(result.schedule, chain_targets=options.chain_targets)
        )
        for problem, result in scheduled
        if options.only is None or problem.name == options.only
    )
    if options.time_passes is not None:
        rows = [(f"schedule ({len(scheduled)} DPFs, {options.schedule.scheduler})", scheduling)]
        rows += [
            (f"  in the solver: {problem.module}.{problem.name}", result.solve_seconds)
            for problem, result in scheduled
        ]
        rows.append(("generate code", time.perf_counter() - started))
        options.time_passes.write(format_phase_timings(rows))
    return CompiledModule(checked, module, units)


def format_phase_timings(rows: Sequence[tuple[str, float]]) -> str:
    """The back end's timing table, in the pass manager's columns (indented rows are
    parts of the row above and left out of the total)."""
    total = sum(seconds for name, seconds in rows if not name.startswith(" ")) or 1e-12
    lines = ["; back-end timings", f";   {'ms':>9}  {'%':>6}  phase"]
    for name, seconds in rows:
        lines.append(f";   {seconds * 1000:9.3f}  {100 * seconds / total:6.1f}  {name}")
    lines.append(f";   {total * 1000:9.3f}  {100.0:6.1f}  total")
    return "\n".join(lines) + "\n"


def without_reassociation(checked: CheckedProgram, module: Module) -> dict[str, Function]:
    """The DPFs of ``module`` that re-association changed, optimised without it: the
    scheduler tries both forms and keeps the better (re-association lowers trees but keeps
    more values alive at once, which can cost EUs where registers are scarce)."""
    plain = lower(checked)
    run_pipeline(plain, [name for name in DEFAULT_PIPELINE if name != "reassociate"])
    wanted = {f.name: f for f in module.functions}
    return {
        f.name: f
        for f in plain.functions
        if f.name in wanted and format_function(f) != format_function(wanted[f.name])
    }


def code_bytes(schedule: Schedule) -> int:
    """The bytes of the code a schedule generates: the in-packet options of an in-packet
    DPF, the in-switch code words of an in-switch one (the scheduler's last measure)."""
    encoded = generate(schedule).encoded
    if encoded.packed is not None:
        return len(encoded.options)
    return sum(len(word) for word in encoded.words.values())


def scheduled_functions(module: Module, only: str | None) -> set[str]:
    """The DPFs to schedule for ``--dpf only``: it and every DPF that shares an unpinned
    array with it, transitively (all of them without ``only``)."""
    names = {f.name for f in module.functions}
    if only is None:
        return names
    if only not in names:
        raise KeyError(only)
    uses = {
        f.name: {i.symbol for i in f.instrs() if i.symbol in module.arrays}
        for f in module.functions
    }
    unpinned = {name for name, decl in module.arrays.items() if decl.pin is None}
    group = {only}
    frontier = [only]
    while frontier:
        shared = uses[frontier.pop()] & unpinned
        for other, arrays in uses.items():
            if other not in group and arrays & shared:
                group.add(other)
                frontier.append(other)
    return group


def object_bindings(
    module: Module, objects: Sequence[ObjectFile]
) -> tuple[dict[str, tuple[int, int]], dict[str, str]]:
    """IR array name -> (EU, lane) for the arrays of ``module`` that ``objects`` bind, and
    who bound each (for diagnostics). A pinned array bound elsewhere is DPF5221."""
    bindings: dict[str, tuple[int, int]] = {}
    bound_by: dict[str, str] = {}
    by_symbol = {
        binding.name: (binding, obj.path)
        for obj in objects
        for dpf in obj.dpfs
        for binding in dpf.program.arrays
    }
    for name, decl in module.arrays.items():
        found = by_symbol.get(qualified(module.name, name))
        if found is None:
            continue
        binding, path = found
        where = (binding.eu, binding.lane)
        if decl.pin is not None and decl.pin != where:
            raise DiagnosticError(
                Diagnostic(
                    Code.BINDING_CONFLICT,
                    f"array `{binding.name}` is pinned to EU{decl.pin[0]} lane {decl.pin[1]}, "
                    f"but {path} binds it to EU{where[0]} lane {where[1]}",
                    decl.span,
                    hint="one array has one place on a switch: change the @pin or compile "
                    "the other module again",
                )
            )
        bindings[name] = where
        bound_by[name] = path
    return bindings, bound_by


__all__ = [
    "CompileOptions",
    "CompiledModule",
    "CompiledUnit",
    "check_source",
    "compile_checked",
    "compile_source",
    "format_phase_timings",
    "lower",
    "object_bindings",
    "optimise",
    "optimised_ir",
    "scheduled_functions",
]
