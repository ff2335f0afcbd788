"""The compile driver: resolves the target profile once (:mod:`.profile`) and orders the
phases, source to object (:mod:`.compile`). The CLI, the benchmarks and the tests compile
through it."""

from dpfc.driver.compile import (
    CompiledModule,
    CompiledUnit,
    CompileOptions,
    check_source,
    compile_checked,
    compile_source,
    lower,
    object_bindings,
    optimise,
    optimised_ir,
    scheduled_functions,
)
from dpfc.driver.profile import declared_targets, resolve_profile

__all__ = [
    "CompileOptions",
    "CompiledModule",
    "CompiledUnit",
    "check_source",
    "compile_checked",
    "compile_source",
    "declared_targets",
    "lower",
    "object_bindings",
    "optimise",
    "optimised_ir",
    "resolve_profile",
    "scheduled_functions",
]
