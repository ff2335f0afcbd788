"""The IR verifier's path checks: SSA dominance, phis and the RMT rule, on a sound CFG.

Contract: both checks need the well-formed, acyclic CFG :func:`dpfc.ir.verify.structure.check_cfg`
returns and the set of blocks reachable from the entry, and they read the instruction sites
the structural check recorded. :func:`check_ssa` reports an operand that is not defined in
the function (DPF5325), one defined on a later line (what the text reader requires) or in a
block that does not dominate the use (DPF5326; a phi argument's definition must dominate
the end of the corresponding predecessor), a phi after a non-phi (DPF5327), and a phi whose
labels are not exactly its block's predecessors, one each (DPF5328). Dominance is only
asked of reachable blocks. :func:`check_rmt` reports two memory ops on one array that
can run on the same entry-to-exit path (DPF5335: one's block reaches the other's, or they
share a block), naming both. Both only add to the context's diagnostics; neither raises.

Not responsible for: the CFG's shape (:mod:`.structure`), operand counts and types
(:mod:`.instructions`); an array name that is not declared is reported there, not here.
"""

from __future__ import annotations

from collections.abc import Callable

from dpfc.catalog import codes
from dpfc.ir.cfg import Digraph
from dpfc.ir.core import MEMORY_OPS, Block, Br, Exit, Instr, Op
from dpfc.ir.verify.context import (
    FunctionContext,
    note,
)

# ``dominates(a, b)``: block ``a`` dominates block ``b`` (both labels).
_Dominates = Callable[[str, str], bool]


def check_ssa(ctx: FunctionContext, graph: Digraph, reachable: set[str]) -> None:
    """Phi placement and labels; every use defined earlier, in a dominating block."""
    entry = ctx.function.blocks[0].label
    idom = graph.immediate_dominators(entry)
    preds = {label: set(graph.predecessors(label)) for label in ctx.blocks}

    def dominates(a: str, b: str) -> bool:
        while True:
            if a == b:
                return True
            parent = idom.get(b, b)
            if parent == b:
                return False
            b = parent

    line = 0
    for block in ctx.function.blocks:
        seen_other = False
        for instr in block.instrs:
            if instr.op is Op.PHI:
                if seen_other:
                    ctx.error(
                        codes.IR_PHI_POSITION,
                        f"{ctx.where(instr)} follows a non-phi instruction (phis open their block)",
                        instr.span,
                    )
                _check_phi(ctx, instr, block, preds[block.label], reachable, dominates)
            else:
                seen_other = True
                for arg in instr.args:
                    _check_use(ctx, arg, instr, block, line, reachable, dominates)
            line += 1
        term_user = f"the terminator of block `{block.label}`"
        for value in _terminator_values(block):
            _check_use(ctx, value, term_user, block, line, reachable, dominates)
        line += 1


def _check_phi(
    ctx: FunctionContext,
    phi: Instr,
    block: Block,
    preds: set[str],
    reachable: set[str],
    dominates: _Dominates,
) -> None:
    what = ctx.where(phi)
    incoming = phi.incoming
    if len(set(incoming)) != len(incoming) or set(incoming) != preds:
        expected = (
            f"the predecessors of `{block.label}` are [{', '.join(sorted(preds))}]"
            if preds
            else f"`{block.label}` has no predecessors"
        )
        ctx.error(
            codes.IR_PHI_INCOMING,
            f"{what} names blocks [{', '.join(incoming)}]; {expected} (one entry each)",
            phi.span,
        )
    for arg, label in zip(phi.args, incoming, strict=False):
        site = ctx.sites.get(id(arg))
        if site is None:
            ctx.error(
                codes.IR_UNDEFINED_OPERAND,
                f"{what} reads a value that is not defined in `@{ctx.function.name}`",
                phi.span,
            )
            continue
        if label not in preds or label not in reachable:
            continue
        if not dominates(site.block, label):
            ctx.error(
                codes.IR_NOT_DOMINATED,
                f"{what} takes {ctx.ref(arg)} from `{label}`, but its block "
                f"`{site.block}` does not dominate `{label}`",
                phi.span,
                note("defined here", arg.span),
            )


def _check_use(
    ctx: FunctionContext,
    value: Instr,
    user: Instr | str,
    block: Block,
    line: int,
    reachable: set[str],
    dominates: _Dominates,
) -> None:
    user_text = user if isinstance(user, str) else ctx.where(user)
    span = user.span if isinstance(user, Instr) else block.term.span
    site = ctx.sites.get(id(value))
    if site is None:
        ctx.error(
            codes.IR_UNDEFINED_OPERAND,
            f"{user_text} reads a value that is not defined in `@{ctx.function.name}` "
            f"({value.op.value})",
            span,
        )
        return
    if site.line >= line:
        ctx.error(
            codes.IR_NOT_DOMINATED,
            f"{user_text} reads {ctx.ref(value)}, which is defined later",
            span,
            note("defined here", value.span),
        )
        return
    crosses = block.label in reachable and site.block != block.label
    if crosses and not dominates(site.block, block.label):
        ctx.error(
            codes.IR_NOT_DOMINATED,
            f"{user_text} reads {ctx.ref(value)}, but its block `{site.block}` does "
            f"not dominate `{block.label}`",
            span,
            note("defined here", value.span),
        )


def _terminator_values(block: Block) -> list[Instr]:
    term = block.term
    if isinstance(term, Br):
        return [term.cond]
    if isinstance(term, Exit):
        return [*term.push, *([term.steer_value] if term.steer_value is not None else [])]
    return []


def check_rmt(ctx: FunctionContext, graph: Digraph, reachable: set[str]) -> None:
    """At most one memory access per array on any path; the later of two is reported."""
    order = {label: i for i, label in enumerate(graph.topological_order())}
    below = {label: graph.descendants(label) for label in reachable}
    by_array: dict[str, list[tuple[int, int, str, Instr]]] = {}
    for block in ctx.function.blocks:
        if block.label not in reachable:
            continue
        for index, instr in enumerate(block.instrs):
            if instr.op in MEMORY_OPS and instr.symbol is not None:
                key = (order[block.label], index, block.label, instr)
                by_array.setdefault(instr.symbol, []).append(key)
    for array, ops in by_array.items():
        ops.sort(key=lambda item: (item[0], item[1]))
        for later_pos, (_, _, later_block, later) in enumerate(ops):
            for _, _, earlier_block, earlier in ops[:later_pos]:
                if earlier_block == later_block or later_block in below[earlier_block]:
                    ctx.error(
                        codes.IR_RMT_RULE,
                        f"array `@{array}` is accessed twice on one path: "
                        f"{ctx.where(earlier)} and {ctx.where(later)} (at most one "
                        "memory access per array per path)",
                        later.span,
                        note("the other access", earlier.span),
                    )
                    break
