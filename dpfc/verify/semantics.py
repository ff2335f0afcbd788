"""SwitchVM's operations as bit-vector terms: the symbolic twin of :mod:`dpfc.isa.semantics`.

Contract: each function takes terms of a :class:`~.bitvec.Words` context and returns the
term of what the machine computes, written from docs/isa.md (not from the concrete
functions, so that a mistake in one shows up as a difference with the other):

* :func:`alu`: the lane ALU's result (A[i]) for an :class:`~dpfc.isa.AluOp` on A[i], B[i];
  shifts by B's low five bits, MIN and MAX unsigned;
* :func:`memory`: a lane's access, the new word and what B[i] receives (None: B keeps its
  value): LOAD reads, STORE writes, the fetch-and-ops write ``op(old, data)`` and return the
  old word;
* :func:`compare_vector` and :func:`branch_taken`: App. D's comparator outputs and the
  strict comparisons of the branch kinds built on them (JMP and HALT always taken);
* :func:`hash_word`: HASH, the lane's CRC-32 (Rocksoft model) of a word's four bytes in
  network order, as shifts and XORs (CRCs are linear over GF(2)).

Substituting concrete words gives the concrete semantics' results
(``tests/test_verify_semantics.py`` checks every operation on random words).
"""

from __future__ import annotations

from dpfc.isa import AluOp, CtrlOp, MemOp
from dpfc.target import HashFunction

from .bitvec import Term, Words

SHIFT_MASK = 31  # a shift by a register uses its low five bits (docs/isa.md, ALU)


def _unsigned_min(w: Words, a: Term, b: Term) -> Term:
    return w.ite(a.ult(b), a, b)


def _unsigned_max(w: Words, a: Term, b: Term) -> Term:
    return w.ite(a.ugt(b), a, b)


def alu(w: Words, op: AluOp, a: Term, b: Term) -> Term:
    """The word the lane ALU writes to A[i] executing ``op`` on (A[i], B[i])."""
    amount = b & w.const(SHIFT_MASK)
    match op:
        case AluOp.NOP:
            return a
        case AluOp.ADD:
            return a + b
        case AluOp.SUB:
            return a - b
        case AluOp.AND:
            return a & b
        case AluOp.OR:
            return a | b
        case AluOp.XOR:
            return a ^ b
        case AluOp.LSH:
            return a.shl(amount)
        case AluOp.RSH:
            return a.lshr(amount)
        case AluOp.NEG:
            return -a
        case AluOp.MIN:
            return _unsigned_min(w, a, b)
        case AluOp.MAX:
            return _unsigned_max(w, a, b)
    raise ValueError(f"not an ALU opcode: {op!r}")


def memory(w: Words, op: MemOp, old: Term, data: Term) -> tuple[Term, Term | None]:
    """One lane's access: (the word memory holds after it, the word B[i] receives or None)."""
    match op:
        case MemOp.NOP:
            return old, None
        case MemOp.LOAD:
            return old, old
        case MemOp.STORE:
            return data, None
        case MemOp.FAADD:
            return old + data, old
        case MemOp.FAAND:
            return old & data, old
        case MemOp.FAOR:
            return old | data, old
        case MemOp.FAMAX:
            return _unsigned_max(w, old, data), old
        case MemOp.FAMIN:
            return _unsigned_min(w, old, data), old
    raise ValueError(f"not a memory opcode: {op!r}")


def compare_vector(w: Words, x: Term, y: Term) -> tuple[Term, Term, Term, Term, Term]:
    """App. D's comparator outputs: x AND y, x XOR y, the saturated x - y, sign(x), sign(y)."""
    zero = w.const(0)
    saturated = w.ite(x.ugt(y), x - y, zero)
    return x & y, x ^ y, saturated, x.bits(31, 31), y.bits(31, 31)


def branch_taken(w: Words, op: CtrlOp, x: Term, y: Term) -> Term:
    """Whether a branch of kind ``op`` on (x, y) goes to PC_TAKEN (a Boolean term)."""
    both, differ, saturated, sign_x, sign_y = compare_vector(w, x, y)
    zero, one = w.const(0), w.const(1, 1)
    match op:
        case CtrlOp.JMP | CtrlOp.HALT:
            return w.true()
        case CtrlOp.BEQ:
            return differ.eq(zero)
        case CtrlOp.BSET:
            return both.ne(zero)
        case CtrlOp.BGT:
            return saturated.ne(zero)
        case CtrlOp.BLT:
            return saturated.eq(zero).land(differ.ne(zero))
        case CtrlOp.BSGT:  # signs differ: x >= 0 > y; else as unsigned
            return w.ite(sign_x.ne(sign_y), sign_y.eq(one), saturated.ne(zero))
        case CtrlOp.BSLT:
            less = saturated.eq(zero).land(differ.ne(zero))
            return w.ite(sign_x.ne(sign_y), sign_x.eq(one), less)
    raise ValueError(f"not a control opcode: {op!r}")


def _reflected(w: Words, value: Term) -> Term:
    """``value`` with its bits in the opposite order."""
    return w.concat([value.bits(i, i) for i in range(value.width)])


def hash_word(w: Words, function: HashFunction, value: Term) -> Term:
    """HASH of a register under ``function``: the CRC of its 4 bytes, most significant first."""
    polynomial, top = w.const(function.polynomial), w.const(1 << 31)
    crc = w.const(function.init)
    for index in range(4):
        byte = value.bits(31 - 8 * index, 24 - 8 * index)
        if function.reflect_in:
            byte = _reflected(w, byte)
        crc = crc ^ w.concat([byte, w.const(0, 24)])
        for _ in range(8):
            shifted = crc.shl(w.const(1))
            crc = w.ite((crc & top).ne(w.const(0)), shifted ^ polynomial, shifted)
    if function.reflect_out:
        crc = _reflected(w, crc)
    return crc ^ w.const(function.xor_out)


__all__ = ["alu", "branch_taken", "compare_vector", "hash_word", "memory"]
