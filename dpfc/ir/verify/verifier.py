"""The IR verifier's entry point: the module-level checks, and a function's checks in order.

Contract: :func:`verify_module`, :func:`verify_function` and :func:`verify_or_raise` as the
package :mod:`dpfc.ir.verify` states them. This module checks the array declarations
(DPF5337) and that DPF names are unique (DPF5307), then runs a function's checks: the CFG
and the instruction sites (:mod:`.structure`), each op and terminator
(:mod:`.instructions`), then, on a sound CFG only, the unreachable-block warning (DPF5323),
SSA and the RMT rule (:mod:`.paths`). That order is the order of the diagnostics.

Not responsible for: any check of one instruction, one edge or one path (the modules
named above).
"""

from __future__ import annotations

from dpfc.catalog import codes
from dpfc.diagnostics import Diagnostic, DiagnosticError, Severity
from dpfc.ir.core import Function, Module
from dpfc.ir.verify.context import (
    FunctionContext,
    note,
)
from dpfc.ir.verify.instructions import check_op, check_terminator
from dpfc.ir.verify.paths import check_rmt, check_ssa
from dpfc.ir.verify.structure import check_cfg, check_instr_sites
from dpfc.target import TargetProfile

__all__ = ["verify_function", "verify_module", "verify_or_raise"]


def verify_module(
    module: Module, profile: TargetProfile | None = None, *, machine: bool = False
) -> list[Diagnostic]:
    """Every invariant violation of ``module`` (errors and warnings), in a stable order."""
    out: list[Diagnostic] = []
    for array in module.arrays.values():
        if array.mapping not in ("direct", "segment") or array.size <= 0:
            out.append(
                Diagnostic(
                    codes.IR_BAD_ARRAY,
                    f"array `@{array.name}`: mapping must be direct or segment and the size "
                    f"positive (found {array.mapping} {array.size})",
                    array.span,
                )
            )
    seen: dict[str, Function] = {}
    for function in module.functions:
        first = seen.setdefault(function.name, function)
        if first is not function:
            out.append(
                Diagnostic(
                    codes.IR_DUPLICATE_NAME,
                    f"DPF `@{function.name}` is defined twice",
                    function.span,
                    notes=note("first defined here", first.span),
                )
            )
        out.extend(_verify(FunctionContext(module, function, profile, machine)))
    return out


def verify_function(
    module: Module,
    function: Function,
    profile: TargetProfile | None = None,
    *,
    machine: bool = False,
) -> list[Diagnostic]:
    """The diagnostics of one function of ``module`` (arrays come from the module)."""
    return _verify(FunctionContext(module, function, profile, machine))


def verify_or_raise(
    module: Module, profile: TargetProfile | None = None, *, machine: bool = False
) -> None:
    """Raise DiagnosticError with the errors of :func:`verify_module` (warnings pass)."""
    errors = [
        d for d in verify_module(module, profile, machine=machine) if d.severity is Severity.ERROR
    ]
    if errors:
        raise DiagnosticError(errors)


def _verify(ctx: FunctionContext) -> list[Diagnostic]:
    """Run the checks of one function in order; the path checks only on a sound CFG."""
    function = ctx.function
    if not function.blocks:
        ctx.error(codes.IR_EMPTY_FUNCTION, f"DPF `@{function.name}` has no blocks", function.span)
        return ctx.out
    for instr in function.instrs():
        ctx.names.setdefault(id(instr), f"%{len(ctx.names)}")
    graph = check_cfg(ctx)
    check_instr_sites(ctx)
    for block in function.blocks:
        for instr in block.instrs:
            check_op(ctx, instr)
        check_terminator(ctx, block)
    if graph is None:
        return ctx.out
    reachable = {function.blocks[0].label} | graph.descendants(function.blocks[0].label)
    for block in function.blocks:
        if block.label not in reachable and ctx.blocks.get(block.label) is block:
            ctx.error(
                codes.IR_UNREACHABLE_BLOCK,
                f"block `{block.label}` is unreachable from the entry",
                block.term.span,
                severity=Severity.WARNING,
            )
    check_ssa(ctx, graph, reachable)
    check_rmt(ctx, graph, reachable)
    return ctx.out
