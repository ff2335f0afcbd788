"""Native code of the SwitchVM operations that compute a value: ALU, branch, HASH.

Contract: each function emits, at an IR builder's position, the instructions of one
operation of ``docs/isa.md`` on 32-bit values and returns the result, exactly as
:mod:`dpfc.isa.semantics` computes it: :func:`emit_alu` an ALU opcode (shift amounts
taken modulo 32), :func:`emit_branch` a branch condition (an ``i1``), :func:`emit_crc`
the HASH of a register (its CRC over the 4 bytes, big-endian), reading the CRC table
:func:`crc_table_global` keeps once per polynomial in the module. Nothing here reads or
writes the state words: :mod:`.bundles` decides what the operands are and where the
results go.
"""

from __future__ import annotations

from typing import Any

from dpfc.isa import AluOp, CtrlOp, crc_table
from dpfc.target import HashFunction

from .emit import I8, I32, c32, intrinsic
from .llvm import ir


def emit_alu(b: Any, op: AluOp, a: Any, c: Any) -> Any:
    """ALU ``op`` of ``a`` and ``c`` (docs/isa.md §4)."""
    match op:
        case AluOp.ADD:
            return b.add(a, c)
        case AluOp.SUB:
            return b.sub(a, c)
        case AluOp.AND:
            return b.and_(a, c)
        case AluOp.OR:
            return b.or_(a, c)
        case AluOp.XOR:
            return b.xor(a, c)
        case AluOp.LSH:
            return b.shl(a, b.and_(c, c32(31)))
        case AluOp.RSH:
            return b.lshr(a, b.and_(c, c32(31)))
        case AluOp.NEG:
            return b.neg(a)
        case AluOp.MIN:
            return b.select(b.icmp_unsigned("<", a, c), a, c)
        case AluOp.MAX:
            return b.select(b.icmp_unsigned(">", a, c), a, c)
    raise AssertionError(op)


def emit_branch(b: Any, op: CtrlOp, x: Any, y: Any) -> Any:
    """Whether the conditional branch ``op`` on ``x`` and ``y`` is taken."""
    match op:
        case CtrlOp.BEQ:
            return b.icmp_unsigned("==", x, y)
        case CtrlOp.BSET:
            return b.icmp_unsigned("!=", b.and_(x, y), c32(0))
        case CtrlOp.BGT:
            return b.icmp_unsigned(">", x, y)
        case CtrlOp.BLT:
            return b.icmp_unsigned("<", x, y)
        case CtrlOp.BSGT:
            return b.icmp_signed(">", x, y)
        case CtrlOp.BSLT:
            return b.icmp_signed("<", x, y)
    raise AssertionError(op)


def emit_crc(b: Any, module: Any, function: HashFunction, value: Any) -> Any:
    """HASH: the CRC of the register's 4 bytes, big-endian (dpfc.isa.semantics.hash_word)."""
    table = crc_table_global(module, function)
    crc = c32(function.init)
    for k in range(4):
        byte = b.trunc(b.lshr(value, c32(24 - 8 * k)), I8)
        if function.reflect_in:
            byte = b.call(intrinsic(module, "llvm.bitreverse.i8", I8), [byte])
        at = b.and_(b.xor(b.lshr(crc, c32(24)), b.zext(byte, I32)), c32(0xFF))
        entry = b.load(b.gep(table, [c32(0), at]))
        crc = b.xor(b.shl(crc, c32(8)), entry)
    if function.reflect_out:
        crc = b.call(intrinsic(module, "llvm.bitreverse.i32", I32), [crc])
    return b.xor(crc, c32(function.xor_out))


def crc_table_global(module: Any, function: HashFunction) -> Any:
    """The module's constant table of ``function``'s polynomial (made on first use)."""
    name = f"crc_table_{function.polynomial:08x}"
    existing = module.globals.get(name)
    if existing is not None:
        return existing
    ty = ir.ArrayType(I32, 256)
    table = ir.GlobalVariable(module, ty, name)
    table.initializer = ir.Constant(ty, [c32(v) for v in crc_table(function.polynomial)])
    table.global_constant = True
    table.linkage = "internal"
    return table
