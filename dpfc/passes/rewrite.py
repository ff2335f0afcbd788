"""Small in-place rewriting helpers shared by the passes: uses, replacement, constants."""

from __future__ import annotations

from dpfc.ir import Br, Exit, Function, Instr, Op, Terminator, Ty


def terminator_values(term: Terminator) -> list[Instr]:
    """The SSA values a terminator reads."""
    if isinstance(term, Br):
        return [term.cond]
    if isinstance(term, Exit):
        values = list(term.push)
        if term.steer_value is not None:
            values.append(term.steer_value)
        return values
    return []


def use_counts(function: Function) -> dict[int, int]:
    """How many times each value (by ``id``) is read by an instruction or a terminator."""
    counts: dict[int, int] = {}
    for block in function.blocks:
        for instr in block.instrs:
            for arg in instr.args:
                counts[id(arg)] = counts.get(id(arg), 0) + 1
        for value in terminator_values(block.term):
            counts[id(value)] = counts.get(id(value), 0) + 1
    return counts


def replace_uses(function: Function, mapping: dict[int, Instr]) -> None:
    """Rewrite every read of a value ``v`` with ``id(v)`` in ``mapping`` to its replacement.

    Chains (a -> b, b -> c) resolve to the last value, so passes can collect replacements
    in one sweep and apply them once.
    """
    if not mapping:
        return

    def resolve(value: Instr) -> Instr:
        seen = 0
        while id(value) in mapping and seen <= len(mapping):
            value = mapping[id(value)]
            seen += 1
        return value

    for block in function.blocks:
        for instr in block.instrs:
            instr.args = [resolve(a) for a in instr.args]
        term = block.term
        if isinstance(term, Br):
            term.cond = resolve(term.cond)
        elif isinstance(term, Exit):
            term.push = [resolve(v) for v in term.push]
            if term.steer_value is not None:
                term.steer_value = resolve(term.steer_value)


def remove_instrs(function: Function, dead: set[int]) -> None:
    """Drop the instructions whose ``id`` is in ``dead`` (their uses must be gone)."""
    if not dead:
        return
    for block in function.blocks:
        block.instrs = [i for i in block.instrs if id(i) not in dead]


def make_const(value: int, ty: Ty = Ty.WORD) -> Instr:
    return Instr(Op.CONST, [], ty, imm=value)


def const_value(value: Instr) -> int | None:
    """The constant a value holds if it is a CONST (words 0..2**32-1, bools 0/1)."""
    return value.imm if value.op is Op.CONST else None


def become_const(instr: Instr, value: int) -> None:
    """Turn ``instr`` into a CONST in place, so its identity (and uses) stay."""
    instr.op = Op.CONST
    instr.args = []
    instr.imm = value
    instr.symbol = None
    instr.incoming = []


def phi_value(phi: Instr, label: str) -> Instr:
    for value, incoming in zip(phi.args, phi.incoming, strict=True):
        if incoming == label:
            return value
    raise KeyError(label)


def leading_phis(instrs: list[Instr]) -> list[Instr]:
    out = []
    for instr in instrs:
        if instr.op is not Op.PHI:
            break
        out.append(instr)
    return out
