"""Booleans as words: conditions computed by the ALU instead of branches.

Contract: :func:`.instructions.bool_word` returns the operation computing ``cond`` as the
word 1 or 0, and :func:`select_word` the word ``x`` if ``cond`` else ``y``, from ALU
operations only (through the ``alu`` and ``const`` callbacks the problem builder passes),
exactly as the IR interpreter computes them (the differential tests check it).

The machine has no compare-to-word instruction: a comparison exists only in the branch
unit, so the builder's default turns a word ``zext``/``select`` of a condition into
branches, one path per outcome (:mod:`.build`). Paths cost bundles, epilogs and in-packet
bytes, and a DPF with several such values multiplies its paths (four ``(a < b) as u32``
results are 16 paths, more than in-packet code carries). The forms here use the unsigned
MIN and MAX of the ALU instead:

* ``x < y``  : ``min(max(x, y) - x, 1)`` (``max(x, y) - x`` is ``y - x`` when x < y, else 0)
* ``x != y`` : ``min(x ^ y, 1)``;  ``x == y``: ``min(x ^ y, 1) ^ 1``
* ``x & y != 0`` (TEST): ``min(x & y, 1)``
* ``x <= y`` is ``(y < x) ^ 1``; ``>`` and ``>=`` swap the operands; a signed compare
  flips both sign bits first (``x ^ 0x80000000``), which maps the signed order onto the
  unsigned one;
* ``a && b``, ``a || b``, ``a ^ b`` of conditions: AND, OR, XOR of their 0/1 words; a
  boolean select ``c ? a : b``: ``(c & a) | ((c ^ 1) & b)``;
* a word select: ``y ^ ((x ^ y) & -c)`` (``-c`` is all ones when c is 1).

They take two or three ALU levels (EUs) per compare where the branch takes one, but no
paths: the scheduler schedules a DPF both ways when it has such values and keeps the
better schedule (:func:`dpfc.schedule.module.schedule_module`).
"""

from __future__ import annotations

from collections.abc import Callable

from dpfc.ir import Op
from dpfc.isa import AluOp

SIGN = 0x8000_0000

Alu = Callable[[AluOp, int, int], int]  # (op, x, y) -> operation id (NEG ignores y)
Const = Callable[[int], int]  # word -> CONST operation id


def compare_word(op: Op, x: int, y: int, alu: Alu, const: Const) -> int:
    """The 0/1 word of the IR compare ``op`` on operation ids ``x``, ``y``."""
    one = const(1)

    def less(a: int, b: int) -> int:  # unsigned a < b
        return alu(AluOp.MIN, alu(AluOp.SUB, alu(AluOp.MAX, a, b), a), one)

    def signed(a: int) -> int:
        return alu(AluOp.XOR, a, const(SIGN))

    def negate(word: int) -> int:
        return alu(AluOp.XOR, word, one)

    match op:
        case Op.ULT:
            return less(x, y)
        case Op.UGT:
            return less(y, x)
        case Op.ULE:
            return negate(less(y, x))
        case Op.UGE:
            return negate(less(x, y))
        case Op.SLT:
            return less(signed(x), signed(y))
        case Op.SGT:
            return less(signed(y), signed(x))
        case Op.SLE:
            return negate(less(signed(y), signed(x)))
        case Op.SGE:
            return negate(less(signed(x), signed(y)))
        case Op.NE:
            return alu(AluOp.MIN, alu(AluOp.XOR, x, y), one)
        case Op.EQ:
            return negate(alu(AluOp.MIN, alu(AluOp.XOR, x, y), one))
        case Op.TEST:
            return alu(AluOp.MIN, alu(AluOp.AND, x, y), one)
    raise ValueError(f"not a compare: {op}")


def bool_op_word(op: str, args: list[int], alu: Alu, const: Const) -> int:
    """The 0/1 word of a boolean ``and``/``or``/``xor``/``select`` of 0/1 words."""
    if op == "and":
        return alu(AluOp.AND, args[0], args[1])
    if op == "or":
        return alu(AluOp.OR, args[0], args[1])
    if op == "xor":
        return alu(AluOp.XOR, args[0], args[1])
    c, a, b = args
    not_c = alu(AluOp.XOR, c, const(1))
    return alu(AluOp.OR, alu(AluOp.AND, c, a), alu(AluOp.AND, not_c, b))


def select_word(cond: int, x: int, y: int, alu: Alu) -> int:
    """``x`` if the 0/1 word ``cond`` is 1, else ``y``: ``y ^ ((x ^ y) & -cond)``."""
    mask = alu(AluOp.NEG, cond, cond)
    return alu(AluOp.XOR, y, alu(AluOp.AND, alu(AluOp.XOR, x, y), mask))
