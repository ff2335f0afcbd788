"""The whole compiler, source to machine code: check, lower, optimise, schedule, generate.

:func:`compile_file` is what ``dpfc compile`` and the benchmarks run; each phase lives in its
own package (``sema``, ``lower``, ``passes``, ``schedule``, ``codegen``) and this module only
strings them together and decides the target profile of each DPF:

* an explicit ``profile`` (``dpfc compile --target``) compiles every DPF of the module for
  it (the ``@target`` attribute names the profile a DPF is written for, the default);
* otherwise a DPF's ``@target`` profile is used, and a DPF without one gets tofino1.

Chain targets (``chain other.dpf``) stay symbolic relocations unless ``chain_targets``
gives their prolog PCs; resolving them is the linker's job.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from dpfc.codegen.emit import CompiledDPF, generate
from dpfc.diagnostics import SourceFile
from dpfc.ir.core import Module
from dpfc.isa.bundle import PC
from dpfc.lower import lower_program
from dpfc.passes.manager import DEFAULT_PIPELINE, run_pipeline
from dpfc.schedule.driver import ScheduleOptions, ScheduleResult, schedule_module
from dpfc.schedule.problem import Problem
from dpfc.sema import CheckedProgram, check_file
from dpfc.target.profile import BUILTIN_PROFILES, TargetProfile


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
    module: Module  # the optimised IR
    units: tuple[CompiledUnit, ...]

    def unit(self, name: str) -> CompiledUnit:
        for unit in self.units:
            if unit.name == name:
                return unit
        raise KeyError(name)


def module_profile(module: Module, profile: TargetProfile | None) -> TargetProfile:
    """The profile the module's DPFs are compiled for (see the module docstring)."""
    if profile is not None:
        return profile
    names = {f.attrs.get("target", "tofino1") for f in module.functions}
    # A module's DPFs share arrays, so they share a profile; sema checks @target names.
    name = sorted(names)[0] if names else "tofino1"
    return BUILTIN_PROFILES.get(name, BUILTIN_PROFILES["tofino1"])


def optimised_ir(checked: CheckedProgram) -> Module:
    module = lower_program(checked)
    run_pipeline(module, DEFAULT_PIPELINE)
    return module


def compile_file(
    source: str | Path | SourceFile,
    profile: TargetProfile | None = None,
    options: ScheduleOptions | None = None,
    *,
    chain_targets: Mapping[str, PC] | None = None,
) -> CompiledModule:
    """Compile a ``.dpf`` file; raises DiagnosticError on user errors."""
    checked = check_file(source, profile)
    module = optimised_ir(checked)
    return compile_module(checked, module, profile, options, chain_targets=chain_targets)


def compile_module(
    checked: CheckedProgram,
    module: Module,
    profile: TargetProfile | None = None,
    options: ScheduleOptions | None = None,
    *,
    chain_targets: Mapping[str, PC] | None = None,
) -> CompiledModule:
    target = module_profile(module, profile)
    scheduled = schedule_module(module, target, options)
    units = tuple(
        CompiledUnit(problem, result, generate(result.schedule, chain_targets=chain_targets))
        for problem, result in scheduled
    )
    return CompiledModule(checked, module, units)
