"""Copy propagation: an op that merely repeats one of its operands is replaced by it.

Example::

    entry:                                  entry:
      %0 = param 0                            %0 = param 0
      %1 = const 0                            %1 = const 0
      %2 = add %0, %1                         %2 = ugt %0, %1
      %3 = ugt %2, %1                         br %2, a, b
      br %3, a, b                           a:
    a:                                        jmp join
      jmp join                              b:
    b:                                        jmp join
      jmp join                              join:
    join:                                     exit push(%0)
      %4 = phi w32 [%2, a], [%2, b]
      %5 = select w32 %3, %4, %4
      exit push(%5)

Copies recognised (``x`` any value, ``c`` a bool):

* a PHI whose incoming values are all the same value (including a single-entry PHI);
* ``select c, x, x``; ``select i1 c, true, false`` -> ``c``;
* ``x + 0``, ``0 + x``, ``x - 0``, ``x | 0``, ``x ^ 0``, ``x & 0xFFFFFFFF``, ``x * 1``,
  ``shl/shr x, k`` with ``k & 31 == 0`` (shifts use the low five bits),
  ``min(x, 0xFFFFFFFF)``, ``max(x, 0)``, ``and/or/min/max x, x``, ``neg (neg x)``;
* on bools: ``and c, true``, ``or c, false``, ``xor c, false``.

Requires: a well-formed function. Ensures: every use of a copy reads the original value;
the copies themselves are removed (they are pure); the same behaviour on every input.
"""

from __future__ import annotations

from dpfc.ir import WORD_MASK, Function, Instr, Op, Ty
from dpfc.passes.base import FunctionPass
from dpfc.passes.rewrite import const_value, remove_instrs, replace_uses

# op -> the constant operand that makes it the identity on the other operand (words)
RIGHT_IDENTITY = {
    Op.ADD: 0,
    Op.SUB: 0,
    Op.OR: 0,
    Op.XOR: 0,
    Op.AND: WORD_MASK,
    Op.MUL: 1,
    Op.MIN: WORD_MASK,
    Op.MAX: 0,
}
COMMUTATIVE_IDENTITY = frozenset({Op.ADD, Op.OR, Op.XOR, Op.AND, Op.MUL, Op.MIN, Op.MAX})
BOOL_IDENTITY = {Op.AND: 1, Op.OR: 0, Op.XOR: 0}
IDEMPOTENT = frozenset({Op.AND, Op.OR, Op.MIN, Op.MAX})


def copy_of(instr: Instr) -> Instr | None:
    """The existing value ``instr`` always equals, or None."""
    op, args = instr.op, instr.args
    if op is Op.PHI:
        first = args[0] if args else None
        return first if first is not None and all(a is first for a in args) else None
    if op is Op.SELECT:
        if args[1] is args[2]:
            return args[1]
        if instr.ty is Ty.BOOL and const_value(args[1]) == 1 and const_value(args[2]) == 0:
            return args[0]
        return None
    if op is Op.NEG:
        return args[0].args[0] if args[0].op is Op.NEG else None
    if len(args) != 2:
        return None
    a, b = args
    if op in IDEMPOTENT and a is b:
        return a
    if op in (Op.SHL, Op.SHR):
        shift = const_value(b)
        return a if shift is not None and shift & 31 == 0 else None
    identities = BOOL_IDENTITY if instr.ty is Ty.BOOL else RIGHT_IDENTITY
    if op not in identities:
        return None
    if const_value(b) == identities[op]:
        return a
    if op in COMMUTATIVE_IDENTITY and const_value(a) == identities[op]:
        return b
    return None


def propagate_function(function: Function) -> bool:
    changed = False
    while True:
        copies: dict[int, Instr] = {}
        for block in function.blocks:
            for instr in block.instrs:
                original = copy_of(instr)
                if original is not None and original is not instr:
                    copies[id(instr)] = original
        if not copies:
            return changed
        replace_uses(function, copies)
        remove_instrs(function, set(copies))
        changed = True


PASS = FunctionPass(
    "copyprop", "replace ops that repeat an operand (x+0, trivial phis, ...)", propagate_function
)
