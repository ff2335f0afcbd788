"""The exact value of a pure IR op on constant operands (the folding oracle of the passes).

Words are ints in ``[0, 2**32)``, bools are 0/1. ALU ops and compares reuse
:mod:`dpfc.isa.semantics` (``alu`` and ``branch_taken``), so a folded constant is the word
the hardware would compute. Ops whose value is not a function of their operands alone
(inputs, memory, RAND) and HASH (its CRC depends on the target profile) are not evaluated.
"""

from __future__ import annotations

from dpfc.ir.core import WORD_MASK, Op
from dpfc.isa import AluOp, CtrlOp, MemOp, alu, branch_taken

ALU_OPS: dict[Op, AluOp] = {
    Op.ADD: AluOp.ADD,
    Op.SUB: AluOp.SUB,
    Op.AND: AluOp.AND,
    Op.OR: AluOp.OR,
    Op.XOR: AluOp.XOR,
    Op.SHL: AluOp.LSH,
    Op.SHR: AluOp.RSH,
    Op.MIN: AluOp.MIN,
    Op.MAX: AluOp.MAX,
}

# memory op -> the memory unit's opcode (the interpreter and the scheduler share it)
MEM_OPS: dict[Op, MemOp] = {
    Op.LOAD: MemOp.LOAD,
    Op.STORE: MemOp.STORE,
    Op.FETCH_ADD: MemOp.FAADD,
    Op.FETCH_AND: MemOp.FAAND,
    Op.FETCH_OR: MemOp.FAOR,
    Op.FETCH_MAX: MemOp.FAMAX,
    Op.FETCH_MIN: MemOp.FAMIN,
}

# compare -> (branch kind, swap operands, negate): each compare is one of the CFU's strict
# comparisons, possibly with swapped operands or a negated outcome.
COMPARES: dict[Op, tuple[CtrlOp, bool, bool]] = {
    Op.EQ: (CtrlOp.BEQ, False, False),
    Op.NE: (CtrlOp.BEQ, False, True),
    Op.TEST: (CtrlOp.BSET, False, False),
    Op.ULT: (CtrlOp.BLT, False, False),
    Op.UGT: (CtrlOp.BGT, False, False),
    Op.ULE: (CtrlOp.BGT, False, True),
    Op.UGE: (CtrlOp.BLT, False, True),
    Op.SLT: (CtrlOp.BSLT, False, False),
    Op.SGT: (CtrlOp.BSGT, False, False),
    Op.SLE: (CtrlOp.BSGT, False, True),
    Op.SGE: (CtrlOp.BSLT, False, True),
}

# The compare that is true exactly when the key is false (TEST has none).
INVERSE_COMPARE: dict[Op, Op] = {
    Op.EQ: Op.NE,
    Op.NE: Op.EQ,
    Op.ULT: Op.UGE,
    Op.UGE: Op.ULT,
    Op.UGT: Op.ULE,
    Op.ULE: Op.UGT,
    Op.SLT: Op.SGE,
    Op.SGE: Op.SLT,
    Op.SGT: Op.SLE,
    Op.SLE: Op.SGT,
}

# cmp(a, b) == SWAPPED_COMPARE[cmp](b, a)
SWAPPED_COMPARE: dict[Op, Op] = {
    Op.EQ: Op.EQ,
    Op.NE: Op.NE,
    Op.TEST: Op.TEST,
    Op.ULT: Op.UGT,
    Op.UGT: Op.ULT,
    Op.ULE: Op.UGE,
    Op.UGE: Op.ULE,
    Op.SLT: Op.SGT,
    Op.SGT: Op.SLT,
    Op.SLE: Op.SGE,
    Op.SGE: Op.SLE,
}

COMMUTATIVE_OPS = frozenset(
    {Op.ADD, Op.AND, Op.OR, Op.XOR, Op.MIN, Op.MAX, Op.MUL, Op.EQ, Op.NE, Op.TEST}
)


def compare(op: Op, a: int, b: int) -> bool:
    kind, swap, negate = COMPARES[op]
    if swap:
        a, b = b, a
    return branch_taken(kind, a & WORD_MASK, b & WORD_MASK) != negate


def fold_op(op: Op, args: list[int]) -> int | None:
    """The value of ``op`` on constant ``args``, or None when it is not a pure function of them.

    AND/OR/XOR on bools are the same bitwise ops on 0/1; SELECT is (cond, if-true, if-false).
    """
    if op in ALU_OPS:
        return alu(ALU_OPS[op], args[0], args[1])
    if op is Op.NEG:
        return alu(AluOp.NEG, args[0], 0)
    if op is Op.MUL:
        return (args[0] * args[1]) & WORD_MASK
    if op in COMPARES:
        return int(compare(op, args[0], args[1]))
    if op is Op.SELECT:
        return args[1] if args[0] else args[2]
    if op is Op.ZEXT:
        return args[0] & 1
    return None
