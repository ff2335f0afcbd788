"""The IR verifier's structural checks: the control-flow graph and where instructions sit.

Contract: :func:`check_cfg` reports duplicate labels (DPF5306), jumps to labels that are
not blocks (DPF5321), an entry block that is a jump target (DPF5322) and a cycle (DPF5390,
the code the ``unroll`` pass uses for the same fault), and returns the CFG (networkx through
:mod:`dpfc.ir.cfg`) only when none of these was found: dominance means nothing on such a
graph, so the caller skips the checks that need one. :func:`check_instr_sites` records the
:class:`~dpfc.ir.verify.context.Site` of every instruction (block, index, line in print
order, the terminator taking a line of its own) and reports an instruction found twice
(DPF5324). Both only add to the context's diagnostics; neither raises.

Not responsible for: reachability (the caller warns about unreachable blocks), operands,
types or dominance of uses (:mod:`.instructions`, :mod:`.paths`).
"""

from __future__ import annotations

from dpfc.catalog import codes
from dpfc.ir.cfg import Digraph
from dpfc.ir.verify.context import (
    FunctionContext,
    Site,
)


def check_cfg(ctx: FunctionContext) -> Digraph | None:
    """The CFG, or None when it is malformed (reported)."""
    ok = True
    for block in ctx.function.blocks:
        first = ctx.blocks.setdefault(block.label, block)
        if first is not block:
            ctx.error(
                codes.IR_DUPLICATE_LABEL,
                f"block label `{block.label}` is used twice in `@{ctx.function.name}`",
                block.term.span,
            )
            ok = False
    graph = Digraph(ctx.blocks)
    for block in ctx.function.blocks:
        for successor in block.successors():
            if successor not in ctx.blocks:
                ctx.error(
                    codes.IR_UNKNOWN_LABEL,
                    f"block `{block.label}` jumps to `{successor}`, which is not a block "
                    f"of `@{ctx.function.name}`",
                    block.term.span,
                )
                ok = False
            else:
                graph.add_edge(block.label, successor)
    entry = ctx.function.blocks[0].label
    preds = graph.predecessors(entry)
    if preds:
        ctx.error(
            codes.IR_ENTRY_TARGET,
            f"the entry block `{entry}` is the target of `{preds[0]}` (the entry "
            "block has no predecessors)",
            ctx.blocks[preds[0]].term.span,
        )
        ok = False
    cycle = graph.find_cycle()
    if cycle is not None:
        path = " -> ".join([*cycle, cycle[0]])
        ctx.error(
            codes.IR_CYCLE,
            f"control flow of `@{ctx.function.name}` has a cycle: {path}",
            ctx.blocks[cycle[0]].term.span or ctx.function.span,
            hint="loops are unrolled by the lowering; the IR must be acyclic",
        )
        ok = False
    return graph if ok else None


def check_instr_sites(ctx: FunctionContext) -> None:
    """Record each instruction's site; report one that appears twice."""
    line = 0
    for block in ctx.function.blocks:
        for index, instr in enumerate(block.instrs):
            site = Site(block.label, index, line)
            line += 1
            if id(instr) in ctx.sites:
                ctx.error(
                    codes.IR_INSTR_TWICE,
                    f"{ctx.where(instr)} appears twice: at position {index} of block "
                    f"`{block.label}` too (an instruction is defined once)",
                    instr.span,
                )
                continue
            ctx.sites[id(instr)] = site
        line += 1  # the terminator's line
