"""The compile driver: the only code that orders the phases of the compiler.

    load (dpfc.sema.loader) -> resolve the profile (dpfc.driver.profile), once
      -> check (dpfc.sema) -> lower (dpfc.lower) -> optimise (dpfc.passes)
      -> schedule (dpfc.schedule) -> generate and encode (dpfc.codegen) -> object

:func:`compile_program` runs the phases up to ``CompileOptions.stop_after`` (a
:class:`Phase`: ``dpfc compile --emit ast`` stops after the check, ``--emit ir`` after
lowering, ``--emit opt-ir`` after optimising) and hands each phase's result to
``CompileOptions.observe`` as soon as it exists, so that what a caller shows of one phase
is shown even when a later phase fails; :func:`compile_source` runs every phase. The
benchmarks and tests call the same functions as the CLI. Every phase gets the one
:class:`~dpfc.target.TargetProfile` object that :func:`~dpfc.driver.profile.resolve_profile`
returned (carried by :class:`~dpfc.sema.CheckedProgram`).

Lowering runs once: the form of each DPF without re-association, which the scheduler also
gets (:mod:`.forms`), is optimised from a copy of the lowered IR. The code of a schedule is
generated once (:mod:`.code`): measuring a candidate schedule keeps its code for the unit.

Options that change what is scheduled (:mod:`.selection`): ``only`` (``--dpf NAME``)
schedules that DPF and the DPFs it shares unpinned arrays with, and generates code for
``NAME`` alone; ``objects`` (``--bindings OBJ``) fix the arrays those objects bound.

``placements`` overrides the ``@placement`` of DPFs of the main module by name (``dpfc
test`` runs one DPF in-packet and in-switch); a name the module lacks is ignored.

Chain targets stay relocations (resolved by ``dpfc link``) unless ``chain_targets`` names
their PCs. ``time_passes`` receives the pass manager's table, then one for the back end
(scheduling, with each DPF's time in the solver, and code generation).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import IntEnum
from pathlib import Path
from typing import TextIO

from dpfc.codegen import CompiledDPF, module_object
from dpfc.diagnostics import DiagnosticError, SourceFile
from dpfc.driver.code import GeneratedCode
from dpfc.driver.forms import copy_module, without_reassociation
from dpfc.driver.profile import resolve_profile
from dpfc.driver.selection import object_bindings, scheduled_functions
from dpfc.ir import Function, Module
from dpfc.isa import PC
from dpfc.lower import lower_program
from dpfc.objfile import ObjectFile
from dpfc.passes import DEFAULT_PIPELINE, run_pipeline, split_shifts
from dpfc.schedule import Problem, ScheduleOptions, ScheduleResult, schedule_module
from dpfc.sema import CheckedProgram, check_program, load_program
from dpfc.target import TargetProfile

Source = str | Path | SourceFile


class Phase(IntEnum):
    """The phases a compile can stop after, in order."""

    CHECK = 1  # loaded and checked (the canonical source: --emit ast)
    LOWER = 2  # the SSA IR, as lowered (--emit ir)
    OPTIMISE = 3  # the IR after the default pipeline (--emit opt-ir)
    CODE = 4  # every DPF scheduled and its code generated (an object, assembly, ...)


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


@dataclass(frozen=True)
class Compilation:
    """What a compile produced up to the phase it has run (:attr:`phase`)."""

    phase: Phase
    checked: CheckedProgram
    module: Module | None = None  # the IR: as lowered (LOWER), then optimised in place
    compiled: CompiledModule | None = None  # CODE

    def ir(self) -> Module:
        """The IR (from :attr:`Phase.LOWER` on)."""
        assert self.module is not None, f"no IR after {self.phase.name}"
        return self.module


@dataclass(frozen=True)
class CompileOptions:
    target: TargetProfile | None = None  # --target: wins over @target
    schedule: ScheduleOptions = field(default_factory=ScheduleOptions)
    only: str | None = None  # --dpf NAME
    objects: tuple[ObjectFile, ...] = ()  # --bindings OBJ
    chain_targets: Mapping[str, PC] = field(default_factory=dict)
    # DPF name (of the main module) -> "packet" | "switch": wins over its @placement
    placements: Mapping[str, str] = field(default_factory=dict)
    print_after_all: TextIO | None = None
    time_passes: TextIO | None = None
    stop_after: Phase = Phase.CODE  # the last phase :func:`compile_program` runs
    # Told each phase's result as soon as it exists (never changes what is compiled).
    observe: Callable[[Compilation], None] | None = field(default=None, compare=False)


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


def optimise(
    module: Module, profile: TargetProfile, options: CompileOptions | None = None
) -> Module:
    """Run the default pass pipeline on ``module`` in place, then write its shifts with the
    amounts ``profile``'s ALU has (:func:`~dpfc.passes.split_shifts`), and return it
    (``--emit opt-ir``); raises DiagnosticError for a shift it cannot write."""
    options = options or CompileOptions()
    run_pipeline(
        module,
        DEFAULT_PIPELINE,
        print_after_all=options.print_after_all,
        time_passes=options.time_passes,
    )
    errors = split_shifts(module, profile)
    if errors:
        raise DiagnosticError(errors)
    return module


def optimised_ir(checked: CheckedProgram) -> Module:
    return optimise(lower(checked), checked.profile)


def compile_program(source: Source, options: CompileOptions | None = None) -> Compilation:
    """Run the phases up to ``options.stop_after`` on a ``.dpf`` file, telling
    ``options.observe`` each phase's result; raises DiagnosticError on user errors (and
    :class:`~dpfc.driver.selection.UnknownDpfError` for an ``only`` the module lacks)."""
    options = options or CompileOptions()

    def reached(done: Compilation) -> bool:
        if options.observe is not None:
            options.observe(done)
        return done.phase >= options.stop_after

    checked = check_source(source, options.target)
    for dpf in checked.dpfs:
        dpf.placement = options.placements.get(dpf.name, dpf.placement)
    done = Compilation(Phase.CHECK, checked)
    if reached(done):
        return done
    module = lower(checked)
    done = Compilation(Phase.LOWER, checked, module)
    if reached(done):
        return done
    # The form without re-association starts from the same lowering (.forms).
    lowered = copy_module(module) if options.stop_after > Phase.OPTIMISE else None
    optimise(module, checked.profile, options)
    done = Compilation(Phase.OPTIMISE, checked, module)
    if reached(done):
        return done
    assert lowered is not None
    compiled = _schedule_and_generate(checked, module, lowered, options)
    done = Compilation(Phase.CODE, checked, module, compiled)
    reached(done)
    return done


def compile_source(source: Source, options: CompileOptions | None = None) -> CompiledModule:
    """Compile a ``.dpf`` file (every phase); raises DiagnosticError on user errors."""
    options = replace(options or CompileOptions(), stop_after=Phase.CODE)
    compiled = compile_program(source, options).compiled
    assert compiled is not None
    return compiled


def _schedule_and_generate(
    checked: CheckedProgram, module: Module, lowered: Module, options: CompileOptions
) -> CompiledModule:
    """Schedule and generate code for the optimised IR ``module`` of ``checked``
    (``lowered``: a copy of its lowered IR, for the form without re-association)."""
    wanted = scheduled_functions(module, options.only)
    bindings, bound_by = object_bindings(module, options.objects)
    subset = replace(module, functions=[f for f in module.functions if f.name in wanted])
    chosen: dict[str, Function] = {}
    code = GeneratedCode()
    started = time.perf_counter()
    scheduled = schedule_module(
        subset,
        checked.profile,
        options.schedule,
        bindings=bindings,
        bound_by=bound_by,
        code_bytes=code.code_bytes,
        alternatives=without_reassociation(lowered, subset, checked.profile),
        chosen=chosen,
    )
    scheduling = time.perf_counter() - started
    # The IR of each DPF in the form it was scheduled in (equivalent either way).
    module = replace(module, functions=[chosen.get(f.name, f) for f in module.functions])
    started = time.perf_counter()
    units = tuple(
        CompiledUnit(problem, result, code.compiled(result.schedule, options.chain_targets))
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


__all__ = [
    "Compilation",
    "CompileOptions",
    "CompiledModule",
    "CompiledUnit",
    "Phase",
    "check_source",
    "compile_program",
    "compile_source",
    "format_phase_timings",
    "lower",
    "optimise",
    "optimised_ir",
]
