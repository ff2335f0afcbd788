"""Cheaper constant addresses: offer the scheduler a constant computed by the ALU.

Contract: :func:`materialise_addresses` returns the problem with one extra, optional ALU
operation ``ADD 0, c`` for every memory operation whose address is a non-zero constant
``c`` on a profile whose memory reads its address at the EU's entry
(``memory_address = entry``), and records in :attr:`Problem.same_word` that the operation
computes the word ``c``. Nothing needs it: the scheduler may use it as the address instead
of ``c`` (the checker and the Z3 model accept either; the greedy scheduler never uses it)
and leaves it out otherwise.

Why. A constant reaches a register only by ``LOAD_IMM`` into a B register; a memory address
is read from an A register at the EU's entry, so ``tally[1] += x`` waited for a LOAD_IMM in
EU0 and a MOV in EU1 and ran in EU2 at the earliest. ``ADD 0, c`` in EU0 (A holds 0 in a
register the prolog leaves alone, B the LOAD_IMM'd constant) puts ``c`` in the lane's A
register at EU1's entry: the access runs one EU earlier, for the same two instructions
(LOAD_IMM and ADD instead of LOAD_IMM and MOV).

There is one such operation per constant and tree node that accesses memory at it, owned
by that node (so it may run there or, speculatively, in an ancestor).
"""

from __future__ import annotations

from dataclasses import replace

from dpfc.isa.opcodes import AluOp
from dpfc.schedule.problem import Kind, Operation, Problem, TreeNode
from dpfc.target.profile import MemoryAddress


def materialise_addresses(problem: Problem) -> Problem:
    """See the module docstring."""
    if problem.profile.memory_address is not MemoryAddress.ENTRY:
        return problem
    ops = list(problem.ops)
    constant_addresses = [
        (o, ops[o.operands[0]])
        for o in ops
        if o.kind is Kind.MEM
        and ops[o.operands[0]].kind is Kind.CONST
        and ops[o.operands[0]].value != 0
    ]
    if not constant_addresses:
        return problem
    zero = next((o.id for o in ops if o.kind is Kind.CONST and o.value == 0), None)
    if zero is None:
        zero = len(ops)
        ops.append(Operation(zero, Kind.CONST, owner=0, value=0, name="0"))
    node_ops = [list(n.ops) for n in problem.nodes]
    same_word = dict(problem.same_word)
    made: dict[tuple[int, int], int] = {}  # (constant, node) -> its ADD
    for access, constant in constant_addresses:
        key = (constant.id, access.owner)
        if key in made:
            continue
        made[key] = op_id = len(ops)
        ops.append(
            Operation(
                op_id,
                Kind.ALU,
                owner=access.owner,
                operands=(zero, constant.id),
                alu=AluOp.ADD,
                name=f"{constant.name or constant.value} (ALU)",
                span=access.span,
            )
        )
        same_word[op_id] = constant.id
        own = node_ops[access.owner]
        own.insert(own.index(access.id), op_id)
    nodes = tuple(
        TreeNode(n.id, n.parent, tuple(node_ops[n.id]), n.end, n.label) for n in problem.nodes
    )
    return replace(problem, ops=tuple(ops), nodes=nodes, same_word=same_word)
