"""The compile driver: resolves the target profile once (:mod:`.profile`) and orders the
phases, source to object, stopping after any of them (:mod:`.compile`); the forms of the IR
the scheduler gets (:mod:`.forms`), the code generated once per schedule (:mod:`.code`),
what ``--dpf`` and ``--bindings`` select (:mod:`.selection`). The CLI, the benchmarks and
the tests compile through it."""

from dpfc.driver.compile import (
    Compilation,
    CompiledModule,
    CompiledUnit,
    CompileOptions,
    Phase,
    check_source,
    compile_program,
    compile_source,
    format_phase_timings,
    lower,
    optimise,
    optimised_ir,
)
from dpfc.driver.forms import copy_module, without_reassociation
from dpfc.driver.profile import declared_targets, resolve_profile
from dpfc.driver.selection import UnknownDpfError, object_bindings, scheduled_functions

__all__ = [
    "Compilation",
    "CompileOptions",
    "CompiledModule",
    "CompiledUnit",
    "Phase",
    "UnknownDpfError",
    "check_source",
    "compile_program",
    "compile_source",
    "copy_module",
    "declared_targets",
    "format_phase_timings",
    "lower",
    "object_bindings",
    "optimise",
    "optimised_ir",
    "resolve_profile",
    "scheduled_functions",
    "without_reassociation",
]
