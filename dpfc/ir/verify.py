"""The IR verifier: checks every invariant of :mod:`dpfc.ir.core` (run between passes in tests).

Contract: ``verify_module(module, profile=None, machine=False)`` returns the diagnostics of
every violated invariant (an empty list for valid IR) and never raises; ``verify_or_raise``
raises :class:`~dpfc.diagnostics.DiagnosticError` with the errors. Unreachable blocks are a
warning (DPF5323); everything else is an error. The checks, in order (docs/ir.md lists them
with their codes):

* module: array declarations are sane, DPF names unique;
* CFG: the function has blocks, labels are unique, every successor exists, the entry block
  has no predecessors, the CFG is acyclic (networkx ``DiGraph``; cycles are DPF5390, the
  code the ``unroll`` pass uses for the same fault);
* SSA: each :class:`~dpfc.ir.core.Instr` appears once; every operand is defined in the
  function, on an earlier line (what the text reader requires) and in a block that
  dominates the use (networkx, through :mod:`dpfc.ir.cfg`); a phi argument's definition dominates
  the end of the corresponding predecessor; phis open their block and name exactly its
  predecessors;
* ops: operand counts, operand and result types, immediates, array and metadata names
  (table-driven from core's op sets); ``machine=True`` also rejects MUL (strength reduction
  must have removed it);
* terminators: ``br`` on a bool; pushed and steering values are words; the steering action
  exists (``profile.steering``, else the default list) and has a value exactly when it
  takes one;
* the RMT rule: at most one memory op per array on any entry-to-exit path (two ops conflict
  when one's block reaches the other's, or they share a block); both are named.

Structural faults (missing successors, duplicate labels, cycles) stop the checks of a
function after the CFG stage, since dominance means nothing on such a graph.

The checks live in one module per family, over the shared state of
:mod:`.verify_context` (which also defines the codes, re-exported here):
:mod:`.verify_cfg` (CFG, instruction sites), :mod:`.verify_ops` (ops, terminators) and
:mod:`.verify_paths` (SSA dominance, phis, the RMT rule). This module, the only entry
point, holds the module-level checks and runs a function's: the CFG and the sites, each op
and terminator, then, on a sound CFG only, the unreachable-block warning, SSA and the RMT
rule (the order of the diagnostics).
"""

from __future__ import annotations

from dpfc.diagnostics import Diagnostic, DiagnosticError, Severity
from dpfc.ir.core import Function, Module
from dpfc.ir.parser import DUPLICATE_NAME
from dpfc.ir.verify_cfg import check_cfg, check_instr_sites
from dpfc.ir.verify_context import (
    BAD_ARRAY,
    BAD_IMMEDIATE,
    CYCLE,
    EMPTY_FUNCTION,
    ENTRY_TARGET,
    INSTR_TWICE,
    MACHINE_MUL,
    NOT_DOMINATED,
    PHI_INCOMING,
    PHI_POSITION,
    RMT_RULE,
    STEER_VALUE,
    TYPE_ERROR,
    UNDEFINED_OPERAND,
    UNKNOWN_ARRAY,
    UNKNOWN_LABEL,
    UNKNOWN_META,
    UNKNOWN_STEER,
    UNREACHABLE,
    FunctionContext,
    note,
)
from dpfc.ir.verify_ops import check_op, check_terminator
from dpfc.ir.verify_paths import check_rmt, check_ssa
from dpfc.target.profile import TargetProfile

__all__ = [
    "BAD_ARRAY",
    "BAD_IMMEDIATE",
    "CYCLE",
    "EMPTY_FUNCTION",
    "ENTRY_TARGET",
    "INSTR_TWICE",
    "MACHINE_MUL",
    "NOT_DOMINATED",
    "PHI_INCOMING",
    "PHI_POSITION",
    "RMT_RULE",
    "STEER_VALUE",
    "TYPE_ERROR",
    "UNDEFINED_OPERAND",
    "UNKNOWN_ARRAY",
    "UNKNOWN_LABEL",
    "UNKNOWN_META",
    "UNKNOWN_STEER",
    "UNREACHABLE",
    "verify_function",
    "verify_module",
    "verify_or_raise",
]


def verify_module(
    module: Module, profile: TargetProfile | None = None, *, machine: bool = False
) -> list[Diagnostic]:
    """Every invariant violation of ``module`` (errors and warnings), in a stable order."""
    out: list[Diagnostic] = []
    for array in module.arrays.values():
        if array.mapping not in ("direct", "segment") or array.size <= 0:
            out.append(
                Diagnostic(
                    BAD_ARRAY,
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
                    DUPLICATE_NAME,
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
        ctx.error(EMPTY_FUNCTION, f"DPF `@{function.name}` has no blocks", function.span)
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
                UNREACHABLE,
                f"block `{block.label}` is unreachable from the entry",
                block.term.span,
                severity=Severity.WARNING,
            )
    check_ssa(ctx, graph, reachable)
    check_rmt(ctx, graph, reachable)
    return ctx.out
