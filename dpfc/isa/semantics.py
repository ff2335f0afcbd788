"""Exact semantics of every SwitchVM operation on 32-bit words (the reference for all targets).

All values are Python ints in ``[0, 2**32)``. Arithmetic wraps modulo 2**32; "signed" means
two's complement of the 32-bit word. See ``docs/isa.md`` for the decision behind each rule.
"""

from __future__ import annotations

from functools import cache

from dpfc.isa.opcodes import AluOp, CtrlOp, MemOp
from dpfc.target import HashFunction

WORD_MASK = 0xFFFF_FFFF
SIGN_BIT = 0x8000_0000


def to_signed(value: int) -> int:
    value &= WORD_MASK
    return value - (1 << 32) if value & SIGN_BIT else value


def alu(op: AluOp, a: int, b: int) -> int:
    """Result written to A[i] by the lane ALU executing ``op`` on (A[i], B[i])."""
    match op:
        case AluOp.NOP:
            return a
        case AluOp.ADD:
            return (a + b) & WORD_MASK
        case AluOp.SUB:
            return (a - b) & WORD_MASK
        case AluOp.AND:
            return a & b
        case AluOp.OR:
            return a | b
        case AluOp.XOR:
            return a ^ b
        case AluOp.LSH:
            return (a << (b & 31)) & WORD_MASK
        case AluOp.RSH:
            return (a & WORD_MASK) >> (b & 31)
        case AluOp.NEG:
            return (-a) & WORD_MASK
        case AluOp.MIN:
            return min(a, b)
        case AluOp.MAX:
            return max(a, b)
    raise ValueError(f"not an ALU opcode: {op!r}")


def memory(op: MemOp, old: int, data: int) -> tuple[int, int | None]:
    """One lane's memory access: returns (new memory word, value written to B[i] or None).

    LOAD returns the word; STORE writes ``data`` and leaves B[i] alone; fetch-and-op
    atomics write ``op(old, data)`` and return the *old* word into B[i].
    """
    match op:
        case MemOp.NOP:
            return old, None
        case MemOp.LOAD:
            return old, old
        case MemOp.STORE:
            return data & WORD_MASK, None
        case MemOp.FAADD:
            return (old + data) & WORD_MASK, old
        case MemOp.FAAND:
            return old & data, old
        case MemOp.FAOR:
            return old | data, old
        case MemOp.FAMAX:
            return max(old, data), old
        case MemOp.FAMIN:
            return min(old, data), old
    raise ValueError(f"not a memory opcode: {op!r}")


def writes_memory(op: MemOp) -> bool:
    return op not in (MemOp.NOP, MemOp.LOAD)


def writes_b(op: MemOp) -> bool:
    return op not in (MemOp.NOP, MemOp.STORE)


def compare_vector(x: int, y: int) -> tuple[int, int, int, int, int]:
    """The five comparator outputs of App. D: and, xor, saturated sub, sign(x), sign(y)."""
    return x & y, x ^ y, max(x - y, 0), x >> 31, y >> 31


def branch_taken(op: CtrlOp, x: int, y: int) -> bool:
    """Whether a branch of kind ``op`` on operands (x, y) goes to PC_TAKEN.

    JMP and HALT always take PC_TAKEN. The conditional kinds are strict comparisons,
    reconstructed from App. D's comparator vector (see docs/isa.md, "Branches").
    """
    bit_and, bit_xor, sat_sub, sign_x, sign_y = compare_vector(x, y)
    match op:
        case CtrlOp.JMP | CtrlOp.HALT:
            return True
        case CtrlOp.BEQ:
            return bit_xor == 0
        case CtrlOp.BSET:
            return bit_and != 0
        case CtrlOp.BGT:
            return sat_sub != 0
        case CtrlOp.BLT:
            return sat_sub == 0 and bit_xor != 0
        case CtrlOp.BSGT:
            if sign_x != sign_y:
                return sign_y == 1  # x >= 0 > y
            return sat_sub != 0
        case CtrlOp.BSLT:
            if sign_x != sign_y:
                return sign_x == 1  # x < 0 <= y
            return sat_sub == 0 and bit_xor != 0
    raise ValueError(f"not a control opcode: {op!r}")


def _reflect(value: int, width: int) -> int:
    out = 0
    for _ in range(width):
        out = (out << 1) | (value & 1)
        value >>= 1
    return out


@cache
def crc_table(polynomial: int) -> tuple[int, ...]:
    table = []
    for byte in range(256):
        crc = byte << 24
        for _ in range(8):
            crc = ((crc << 1) ^ polynomial) if crc & SIGN_BIT else (crc << 1)
        table.append(crc & WORD_MASK)
    return tuple(table)


def crc32(function: HashFunction, data: bytes) -> int:
    """CRC-32 of ``data`` under a Rocksoft-model parameter set (MSB-first table)."""
    table = crc_table(function.polynomial)
    crc = function.init
    for byte in data:
        if function.reflect_in:
            byte = _reflect(byte, 8)
        crc = ((crc << 8) & WORD_MASK) ^ table[((crc >> 24) ^ byte) & 0xFF]
    if function.reflect_out:
        crc = _reflect(crc, 32)
    return (crc ^ function.xor_out) & WORD_MASK


def hash_word(function: HashFunction, value: int) -> int:
    """HASH of a register: the CRC of its 4 bytes in network (big-endian) order."""
    return crc32(function, (value & WORD_MASK).to_bytes(4, "big"))
