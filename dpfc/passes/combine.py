"""Combine a mask-and-compare into the branch unit's bit test (BSET).

The CFU has a bit-test comparison, BSET (taken iff ``x & y != 0``, docs/isa.md §6 item 6),
so ``(x & y) != 0`` needs no ALU op: it is one TEST. ``(x & y) == 0`` is the same test with
the branch targets swapped (bit-clear is "BSET swapped", App. D), which this pass does when
every use of the compare is a branch condition.

Example::

    entry:                                  entry:
      %0 = param 0                            %0 = param 0
      %1 = const 0x80000000                   %1 = const 0x80000000
      %2 = and %0, %1                         %2 = and %0, %1
      %3 = const 0                            %3 = const 0
      %4 = eq %2, %3                          %4 = test %0, %1
      br %4, clear, set                       br %4, set, clear
    ...                                     ...

(The AND and the zero constant become dead when nothing else reads them; ``dce`` removes
them.) Recognised: ``ne(and(x, y), 0)`` and ``ne(0, and(x, y))`` anywhere;
``eq(and(x, y), 0)`` and ``eq(0, and(x, y))`` when only branches use the compare.

Requires: a well-formed function. Ensures: the same behaviour on every input; no new
values (the compare is rewritten in place, keeping its identity, so no use changes).
"""

from __future__ import annotations

from dpfc.ir import Br, Function, Instr, Op, Ty
from dpfc.passes.base import FunctionPass
from dpfc.passes.rewrite import const_value, terminator_values


def _masked(instr: Instr) -> tuple[Instr, Instr] | None:
    """(x, y) when ``instr`` compares ``x & y`` with zero, else None."""
    left, right = instr.args
    if const_value(right) == 0 and left.op is Op.AND and left.ty is Ty.WORD:
        return left.args[0], left.args[1]
    if const_value(left) == 0 and right.op is Op.AND and right.ty is Ty.WORD:
        return right.args[0], right.args[1]
    return None


def _users(function: Function) -> dict[int, tuple[int, int]]:
    """id(value) -> (uses by instructions and non-branch terminator slots, uses as a Br cond)."""
    counts: dict[int, tuple[int, int]] = {}
    for block in function.blocks:
        for instr in block.instrs:
            for arg in instr.args:
                other, branch = counts.get(id(arg), (0, 0))
                counts[id(arg)] = (other + 1, branch)
        term = block.term
        for value in terminator_values(term):
            other, branch = counts.get(id(value), (0, 0))
            if isinstance(term, Br) and value is term.cond:
                counts[id(value)] = (other, branch + 1)
            else:
                counts[id(value)] = (other + 1, branch)
    return counts


def run(function: Function) -> bool:
    changed = False
    users: dict[int, tuple[int, int]] | None = None
    for block in function.blocks:
        for instr in block.instrs:
            if instr.op not in (Op.NE, Op.EQ):
                continue
            operands = _masked(instr)
            if operands is None:
                continue
            if instr.op is Op.EQ:
                users = users if users is not None else _users(function)
                other, _ = users.get(id(instr), (0, 0))
                if other:
                    continue
                for each in function.blocks:
                    term = each.term
                    if isinstance(term, Br) and term.cond is instr:
                        term.then, term.orelse = term.orelse, term.then
            instr.op = Op.TEST
            instr.args = list(operands)
            changed = True
    return changed


PASS = FunctionPass(
    "combine", "fold (x & y) != 0 and branches on (x & y) == 0 into TEST (BSET)", run
)
