"""Constant folding: an op whose result is known at compile time becomes a CONST.

Example::

    entry:                                  entry:
      %0 = const 6                            %0 = const 6
      %1 = const 7                            %1 = const 7
      %2 = add %0, %1                         %2 = const 13
      %3 = param 0                            %3 = param 0
      %4 = sub %3, %3                         %4 = const 0
      %5 = ult %2, %0                         %5 = const i1 0
      %6 = select w32 %5, %3, %2              exit push(%2, %4)
      exit push(%6, %4)

(the select on a constant condition is gone; its uses read the chosen arm, ``%2``.)

Rules (values are exact 32-bit words, see :mod:`dpfc.ir.evaluate`):

* every pure op (ALU, MUL, compares, bool AND/OR/XOR, SELECT, ZEXT) whose operands are all
  CONST; a PHI whose incoming values are all CONSTs of the same value;
* a SELECT whose condition is CONST is replaced by the chosen arm;
* absorbing operands and self-comparisons: ``x - x``, ``x ^ x``, ``x & 0``, ``x * 0``,
  ``x | 0xFFFFFFFF``, ``min(x, 0)``, ``max(x, 0xFFFFFFFF)``, ``test x, 0``, ``x < 0``
  (unsigned), ``x >= 0`` (unsigned), ``eq/ule/uge/sle/sge x, x`` (true),
  ``ne/ult/ugt/slt/sgt x, x`` (false), ``and c, false``, ``or c, true`` on bools.

HASH is not folded: its CRC depends on the target profile, which the IR does not carry.

Requires: a well-formed function (SSA, phis at block tops). Ensures: the same behaviour on
every input; folded instructions keep their identity (they turn into CONST in place), so
their uses need no rewrite; the branch on a now-constant condition is left for
``simplifycfg``.
"""

from __future__ import annotations

from dpfc.ir import WORD_MASK, Function, Instr, Op, Ty, fold_op
from dpfc.passes.base import FunctionPass
from dpfc.passes.rewrite import become_const, const_value, remove_instrs, replace_uses

SELF_TRUE = frozenset({Op.EQ, Op.ULE, Op.UGE, Op.SLE, Op.SGE})
SELF_FALSE = frozenset({Op.NE, Op.ULT, Op.UGT, Op.SLT, Op.SGT, Op.SUB, Op.XOR})


def known_value(instr: Instr) -> int | None:
    """The constant ``instr`` computes, judged from its operands, or None."""
    op = instr.op
    if op is Op.CONST:
        return None
    if op is Op.PHI:
        values = {const_value(a) for a in instr.args}
        if len(values) == 1 and None not in values:
            return values.pop()
        return None
    consts = [const_value(a) for a in instr.args]
    if instr.args and all(c is not None for c in consts):
        return fold_op(op, [c for c in consts if c is not None])
    return _absorbed(instr, consts)


def _absorbed(instr: Instr, consts: list[int | None]) -> int | None:
    """Results fixed by one operand alone, or by comparing a value with itself."""
    op = instr.op
    if len(instr.args) != 2:
        return None
    a, b = instr.args
    if a is b and op in SELF_TRUE:
        return 1
    if a is b and op in SELF_FALSE:
        return 0
    all_ones = 1 if instr.ty is Ty.BOOL else WORD_MASK
    for value in consts:
        if op in (Op.AND, Op.MUL, Op.MIN, Op.TEST) and value == 0:
            return 0
        if op is Op.OR and value == all_ones:
            return all_ones
        if op is Op.MAX and value == WORD_MASK:
            return WORD_MASK
    if (op is Op.ULT and consts[1] == 0) or (op is Op.UGT and consts[0] == 0):
        return 0
    if (op is Op.UGE and consts[1] == 0) or (op is Op.ULE and consts[0] == 0):
        return 1
    return None


def fold_function(function: Function) -> bool:
    changed = False
    while True:
        progress = False
        chosen: dict[int, Instr] = {}
        for block in function.blocks:
            for instr in block.instrs:
                if instr.op is Op.SELECT and const_value(instr.args[0]) is not None:
                    chosen[id(instr)] = instr.args[1] if instr.args[0].imm else instr.args[2]
                    continue
                value = known_value(instr)
                if value is not None:
                    become_const(instr, value)
                    progress = True
            # A folded phi is a CONST now; phis must stay at the top, so it moves below them.
            block.instrs.sort(key=lambda i: i.op is not Op.PHI)
        if chosen:
            replace_uses(function, chosen)
            remove_instrs(function, set(chosen))
            progress = True
        if not progress:
            return changed
        changed = True


PASS = FunctionPass(
    "constfold", "fold ops on constants and absorbing operands into CONSTs", fold_function
)
