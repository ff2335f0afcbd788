"""The shift fault as the memory tables see it: which shift amounts fault, as ternary cubes.

Contract: an LSH or RSH whose amount (``B & 31`` of the selected copy) is neither 0 nor one
of the profile's ``shift_amounts`` faults the packet before any of the EU's ALUs and
memory units run (docs/simulator.md R14). The ALU tables decide the fault in the EU's
second stage, the stage that also runs the memory units, so each lane's memory table is
keyed as well by every lane's ALU opcode and the low five bits of that lane's selected B
copy: :func:`fault_cubes` covers the faulting amounts with ternary (value, mask) pairs
(few entries: an exact cover is chosen greedily among the cubes inside the faulting set),
:func:`shift_op_keys` gives the (value, mask) pairs of the ALU opcode that name a shift
(one when LSH and RSH differ in one bit), and :func:`memory_table_size` the entries a
lane's memory table holds: those fault entries (higher priority, no register access) and
one per memory opcode and translation outcome.
"""

from __future__ import annotations

from itertools import product

from dpfc.isa import AluOp, MemOp
from dpfc.target import TargetProfile

AMOUNT_BITS = 5
AMOUNT_MASK = (1 << AMOUNT_BITS) - 1
OPCODE_MASK = 0xFF
TRANSLATIONS = 3  # direct hit, segment hit, unmapped


def faulting_amounts(profile: TargetProfile) -> frozenset[int]:
    allowed = {0, *(a & AMOUNT_MASK for a in profile.shift_amounts)}
    return frozenset(range(AMOUNT_MASK + 1)) - allowed


def _members(value: int, mask: int) -> frozenset[int]:
    return frozenset(x for x in range(AMOUNT_MASK + 1) if x & mask == value)


def fault_cubes(profile: TargetProfile) -> tuple[tuple[int, int], ...]:
    """Ternary (value, mask) pairs on an amount whose union is exactly the faulting amounts;
    deterministic (the largest new coverage first, ties by value and mask)."""
    faulting = faulting_amounts(profile)
    cubes: list[tuple[int, int, frozenset[int]]] = []
    for digits in product((0, 1, None), repeat=AMOUNT_BITS):
        value = sum(1 << i for i, d in enumerate(digits) if d == 1)
        mask = sum(1 << i for i, d in enumerate(digits) if d is not None)
        members = _members(value, mask)
        if members <= faulting:
            cubes.append((value, mask, members))
    chosen: list[tuple[int, int]] = []
    left = set(faulting)
    while left:
        value, mask, members = max(cubes, key=lambda c: (len(c[2] & left), -c[1], -c[0]))
        chosen.append((value, mask))
        left -= members
    return tuple(sorted(chosen, key=lambda c: (c[1], c[0])))


def shift_op_keys() -> tuple[tuple[int, int], ...]:
    """Ternary (value, mask) pairs on the ALU opcode that match LSH and RSH only."""
    differ = int(AluOp.LSH) ^ int(AluOp.RSH)
    others = {int(op) for op in AluOp} - {int(AluOp.LSH), int(AluOp.RSH)}
    mask = OPCODE_MASK & ~differ
    if differ & (differ - 1) == 0 and not any(op & mask == AluOp.LSH & mask for op in others):
        return ((int(AluOp.LSH) & mask, mask),)
    return ((int(AluOp.LSH), OPCODE_MASK), (int(AluOp.RSH), OPCODE_MASK))


def alu_table_size(profile: TargetProfile) -> int:
    """A lane's ALU table: one entry per opcode that is not a shift, and per shift opcode
    the amount 0, each listed amount and the fault of any other."""
    shifts = (int(AluOp.LSH), int(AluOp.RSH))
    others = [op for op in AluOp if int(op) not in shifts]
    return len(others) + len(shifts) * (len(profile.shift_amounts) + 2)


def memory_table_size(profile: TargetProfile, lanes: int) -> int:
    """A lane's memory table: the fault entries of every lane, and the access entries."""
    faults = lanes * len(shift_op_keys()) * len(fault_cubes(profile))
    accesses = (len(MemOp) - 1) * TRANSLATIONS
    return faults + accesses
