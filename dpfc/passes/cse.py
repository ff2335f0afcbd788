"""Common subexpression elimination over the dominator tree.

Example::

    entry:                                  entry:
      %0 = param 0                            %0 = param 0
      %1 = param 1                            %1 = param 1
      %2 = add %0, %1                         %2 = add %0, %1
      %3 = ult %0, %1                         %3 = ult %0, %1
      br %3, a, b                             br %3, a, b
    a:                                      a:
      %4 = add %1, %0                         %4 = zext %3
      %5 = ugt %1, %0                         %5 = add %2, %4
      %6 = zext %5                            exit push(%5)
      %7 = add %4, %6                       b:
      exit push(%7)                           exit push(%2)
    b:
      exit push(%2)

Two instructions are the same expression when they have the same op, result type, ``imm``,
``symbol`` and operands (operands of commutative ops in any order; ``ugt a, b`` equals
``ult b, a`` and likewise for the other ordered compares). A later instruction is replaced
by an earlier one whose block dominates it (or that comes earlier in the same block).

Never merged: LOAD and the other memory ops (a store on one path may sit between two loads,
and the RMT rule counts accesses), RAND (each draws a new word) and PHI (their operands name
blocks). CONST, PARAM, PEEK, META and HASH are pure and merged.

Requires: a well-formed function whose blocks respect dominance. Ensures: no two pure
instructions in a dominance relation compute the same expression; same behaviour.
"""

from __future__ import annotations

from dpfc.ir import (
    COMMUTATIVE_OPS,
    MEMORY_OPS,
    SIDE_EFFECT_OPS,
    SWAPPED_COMPARE,
    Function,
    Instr,
    Op,
    Ty,
    dominator_tree_preorder,
)
from dpfc.passes.base import FunctionPass
from dpfc.passes.rewrite import remove_instrs, replace_uses

NOT_MERGED = MEMORY_OPS | SIDE_EFFECT_OPS | {Op.PHI}
# ``ugt a, b`` is keyed as ``ult b, a`` (and so on), so both spellings meet.
GREATER_COMPARES = frozenset({Op.UGT, Op.UGE, Op.SGT, Op.SGE})

Key = tuple[Op, Ty | None, int | None, str | None, tuple[int, ...]]


def expression_key(instr: Instr, number: dict[int, int]) -> Key:
    """A hashable description of the value ``instr`` computes; operands by value number."""
    op = instr.op
    operands = [number.get(id(a), id(a)) for a in instr.args]
    if op in GREATER_COMPARES:
        op = SWAPPED_COMPARE[op]
        operands.reverse()
    if op in COMMUTATIVE_OPS:
        operands.sort()
    return (op, instr.ty, instr.imm, instr.symbol, tuple(operands))


def eliminate_function(function: Function) -> bool:
    if not function.blocks:
        return False
    # Value numbers: every instruction gets its own; a replaced one takes its leader's.
    number = {id(instr): index for index, instr in enumerate(function.instrs())}
    line = dict(number)  # print position: a value must be defined on an earlier line
    leader: dict[int, Instr] = {}
    blocks = {b.label: b for b in function.blocks}
    scopes: dict[str, dict[Key, Instr]] = {}
    for label, parent in dominator_tree_preorder(function):
        table = dict(scopes[parent]) if parent is not None else {}
        for instr in blocks[label].instrs:
            if instr.op in NOT_MERGED or instr.ty is None:
                continue
            key = expression_key(instr, number)
            first = table.get(key)
            if first is None:
                table[key] = instr
                continue
            if line[id(first)] > line[id(instr)]:
                continue  # blocks printed out of dominance order: keep the text readable
            leader[id(instr)] = first
            number[id(instr)] = number[id(first)]
        scopes[label] = table
    replace_uses(function, leader)
    remove_instrs(function, set(leader))
    return bool(leader)


PASS = FunctionPass("cse", "merge equal pure expressions in dominating blocks", eliminate_function)
