"""Strength reduction: a multiplication by a constant becomes shifts and adds/subs.

SwitchVM's ALU has no multiplier (docs/isa.md), so this pass must leave no MUL whose other
operand is a constant. Example::

    entry:                                  entry:
      %0 = param 0                            %0 = param 0
      %1 = const 10                           %1 = const 10
      %2 = mul %0, %1                         %2 = const 3
      exit push(%2)                           %3 = shl %0, %2
                                              %4 = const 1
                                              %5 = shl %0, %4
                                              %6 = add %3, %5
                                              exit push(%6)

(x*10 = (x<<3) + (x<<1); ``dce`` later drops the unused ``const 10``.) Rules, with ``c`` the
constant operand (a CONST, or a pure tree of CONSTs, evaluated modulo 2**32):

* ``c == 0`` -> ``const 0``; ``c == 1`` -> ``x``; ``c == 2**k`` -> ``shl x, k``;
* otherwise ``c`` is written as a sum of signed powers of two, taking whichever of its binary
  form and its non-adjacent form (NAF: digits -1/0/1, no two adjacent non-zeros) has fewer
  terms; powers >= 2**32 vanish modulo 2**32, so ``x * 0xFFFFFFFF`` -> ``neg x`` and
  ``x * 7`` -> ``(x<<3) - x``. The highest positive term starts the sum; if every term is
  negative the sum starts with ``neg``;
* when cheaper (counted in ALU ops), ``c = d * 2**s`` is ``(x*d) << s`` and
  ``c = q * (2**k +/- 1)`` is ``(y << k) +/- y`` with ``y = x*q``, recursively:
  ``x * 0x55555555`` takes 8 ops instead of 31.

The MUL instruction itself becomes the last op of the sequence (its identity and uses stay);
the new shifts and CONSTs are inserted just before it.

Requires: a well-formed function. Ensures: no MUL with a constant operand remains; a MUL
whose operands are both unknown (which sema rejects) is left alone; same behaviour.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from dpfc.ir import WORD_MASK, Function, Instr, Op, fold_op
from dpfc.passes.base import FunctionPass
from dpfc.passes.rewrite import become_const, make_const, remove_instrs, replace_uses

Term = tuple[int, int]  # (shift, +1 | -1)
# ("terms", [Term]) | ("shift", s, Plan) | ("factor", k, +1 | -1, Plan)
Step = tuple[Any, ...]
Plan = tuple[int, Step]  # (ALU ops, step)


def constant_tree(value: Instr, depth: int = 0, phis: frozenset[int] = frozenset()) -> int | None:
    """The value of a pure expression tree whose leaves are all CONSTs, or None. A PHI
    whose incoming values all have one such value has it too (the lowering of a branch
    whose arms agree); ``phis`` are the PHIs being evaluated, so a loop is not constant."""
    if value.op is Op.CONST:
        return value.imm
    if depth > 16 or not value.args or id(value) in phis:
        return None
    if value.op is Op.PHI:
        inner = phis | {id(value)}
        incoming = {constant_tree(a, depth + 1, inner) for a in value.args}
        return incoming.pop() if len(incoming) == 1 else None
    args = [constant_tree(a, depth + 1, phis) for a in value.args]
    if any(a is None for a in args):
        return None
    return fold_op(value.op, [a for a in args if a is not None])


def binary_terms(c: int) -> list[Term]:
    return [(bit, 1) for bit in range(32) if c >> bit & 1]


def naf_terms(c: int) -> list[Term]:
    """The non-adjacent form of ``c``, without the digits at 2**32 and above."""
    terms: list[Term] = []
    position = 0
    while c:
        if c & 1:
            digit = 2 - (c & 3)
            c -= digit
            if position < 32:
                terms.append((position, digit))
        c >>= 1
        position += 1
    return terms


def decompose(c: int) -> list[Term]:
    """Signed power-of-two terms summing to ``c`` mod 2**32, highest power first."""
    binary, naf = binary_terms(c), naf_terms(c)
    best = naf if len(naf) < len(binary) else binary
    return sorted(best, reverse=True)


def terms_cost(terms: list[Term]) -> int:
    """ALU ops of a sum of terms: one shift per shifted term, one add/sub between terms,
    and a NEG when no term is positive."""
    shifts = sum(1 for shift, _ in terms if shift)
    negate = 0 if any(sign > 0 for _, sign in terms) else 1
    return shifts + len(terms) - 1 + negate


@cache
def plan(c: int) -> Plan:
    """The cheapest way found to multiply by ``c`` (0 < c < 2**32): a sum of signed powers
    of two, ``(y << s)`` of a smaller plan, or ``(y << k) +/- y`` of ``c / (2**k +/- 1)``
    (e.g. ``x * 0x55555555`` in 8 ops instead of 31)."""
    terms = decompose(c)
    best: Plan = (terms_cost(terms), ("terms", terms))
    if c % 2 == 0:
        shift = (c & -c).bit_length() - 1
        inner = plan(c >> shift)
        if inner[0] + 1 < best[0]:
            best = (inner[0] + 1, ("shift", shift, inner))
        return best
    for k in range(2, 32):
        for sign in (1, -1):
            divisor = (1 << k) + sign
            if divisor < c and c % divisor == 0:
                inner = plan(c // divisor)
                if inner[0] + 2 < best[0]:
                    best = (inner[0] + 2, ("factor", k, sign, inner))
    return best


def reduce_function(function: Function) -> bool:
    copies: dict[int, Instr] = {}
    changed = False
    for block in function.blocks:
        out: list[Instr] = []
        for instr in block.instrs:
            if instr.op is Op.MUL:
                before = _reduce(instr, copies)
                if before is not None:
                    out.extend(before)
                    changed = True
            out.append(instr)
        block.instrs = out
    replace_uses(function, copies)
    remove_instrs(function, set(copies))
    return changed


def _reduce(mul: Instr, copies: dict[int, Instr]) -> list[Instr] | None:
    """Rewrite ``mul`` in place; return the instructions to insert before it (None: kept)."""
    a, b = mul.args
    c, x = constant_tree(b), a
    if c is None:
        c, x = constant_tree(a), b
    if c is None:
        return None
    c &= WORD_MASK
    if c == 0:
        become_const(mul, 0)
        return []
    if c == 1:
        copies[id(mul)] = x
        return []
    new: list[Instr] = []
    product = _emit_plan(x, plan(c)[1], new)
    # The last op computed is the product: the MUL takes its place (and keeps its uses).
    last = new.pop()
    assert last is product
    mul.op, mul.args = last.op, last.args
    return new


def _emit_plan(x: Instr, step: Step, new: list[Instr]) -> Instr:
    def emit(op: Op, args: list[Instr]) -> Instr:
        instr = Instr(op, args)
        new.append(instr)
        return instr

    def shifted(value: Instr, shift: int) -> Instr:
        if shift == 0:
            return value
        amount = make_const(shift)
        new.append(amount)
        return emit(Op.SHL, [value, amount])

    if step[0] == "shift":
        return shifted(_emit_plan(x, step[2][1], new), step[1])
    if step[0] == "factor":
        inner = _emit_plan(x, step[3][1], new)
        return emit(Op.ADD if step[2] > 0 else Op.SUB, [shifted(inner, step[1]), inner])
    terms = step[1]
    positive = [t for t in terms if t[1] > 0]
    first = positive[0] if positive else terms[0]
    acc = shifted(x, first[0])
    if first[1] < 0:
        acc = emit(Op.NEG, [acc])
    for shift, sign in terms:
        if (shift, sign) != first:
            acc = emit(Op.ADD if sign > 0 else Op.SUB, [acc, shifted(x, shift)])
    return acc


PASS = FunctionPass(
    "strength", "rewrite multiplications by constants into shifts and adds", reduce_function
)
