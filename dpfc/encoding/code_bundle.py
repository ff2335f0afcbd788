"""Prolog and EU bundles in their compact in-packet form (docs/encoding.md, "In-packet code").

Layout::

    byte 0   ctrl_op:4 | n_imm:2 | has_alu:1 | has_mem:1
    byte 1   n_sel:5   | reserved:3 (0)
    u16      pc_taken
    [conditional ctrl_op: x:u8, y:u8, pc_not_taken:u16]
    n_sel x (dest:5 | kind:3, operand:u8)      sorted by dest, A before B
    [has_alu: ceil(L/2) bytes, one nibble per lane, lane 0 in the high nibble]
    [has_mem: ceil(L/2) bytes, likewise]
    n_imm x u32                                 immediates, first use first

An operand byte with bit 7 (``IMM_FLAG``) set names an immediate slot, otherwise a register.

Contract: :func:`encode_bundle` writes the one canonical byte string of a checked bundle;
:func:`decode_bundle` reads one back and rejects malformed bytes (DPF3010-DPF3016) and every
non-canonical form (DPF3040: empty op groups, duplicate, unused or misordered immediates, any
other byte that re-encoding does not reproduce) with the offset of the offending byte.

Not responsible for epilog bundles (:mod:`code_epilog`), for checking what the bundle does
(that is :mod:`dpfc.isa.check`), nor for blocks and options (:mod:`dpfc.encoding.code`).
"""

from __future__ import annotations

from typing import TypeVar

from dpfc.encoding.code_fields import (
    IMM_FLAG,
    check_canonical_bytes,
    decode_pc,
    encode_pc,
    register_at,
)
from dpfc.encoding.errors import ByteReader, DecodeError
from dpfc.isa.bundle import Bundle, Control, Imm, Operand, Register, Selector
from dpfc.isa.opcodes import AluOp, CtrlOp, MemOp, SelectorKind
from dpfc.target.profile import TargetProfile

E = TypeVar("E", AluOp, MemOp)


def _operand_byte(op: Operand, immediates: tuple[int, ...]) -> int:
    if isinstance(op, Register):
        return op.code
    return IMM_FLAG | immediates.index(op.value)


def _selector_operand(sel: Selector, immediates: tuple[int, ...]) -> int:
    if sel.kind is SelectorKind.MOV:
        assert sel.source is not None
        return sel.source.code
    if sel.kind is SelectorKind.LOAD_IMM:
        return immediates.index(sel.value)
    return sel.value


def _nibbles(values: list[int]) -> bytes:
    if len(values) % 2:
        values = [*values, 0]
    return bytes((values[i] << 4) | values[i + 1] for i in range(0, len(values), 2))


def encode_bundle(bundle: Bundle, profile: TargetProfile) -> bytes:
    """Compact bytes of a (checked) prolog or EU bundle."""
    immediates = bundle.immediates()
    ctrl = bundle.control
    has_alu = any(op is not AluOp.NOP for op in bundle.alu)
    has_mem = any(op is not MemOp.NOP for op in bundle.mem)
    out = bytearray(
        [
            (ctrl.op << 4) | (len(immediates) << 2) | (has_alu << 1) | int(has_mem),
            len(bundle.selectors) << 3,
        ]
    )
    out += encode_pc(ctrl.taken).to_bytes(2, "big")
    if ctrl.op.conditional:
        assert ctrl.x is not None and ctrl.y is not None and ctrl.not_taken is not None
        out.append(_operand_byte(ctrl.x, immediates))
        out.append(_operand_byte(ctrl.y, immediates))
        out += encode_pc(ctrl.not_taken).to_bytes(2, "big")
    for sel in bundle.selectors:
        out.append((sel.dest.code << 3) | sel.kind)
        out.append(_selector_operand(sel, immediates))
    if has_alu:
        out += _nibbles([int(op) for op in bundle.alu])
    if has_mem:
        out += _nibbles([int(op) for op in bundle.mem])
    for value in immediates:
        out += value.to_bytes(4, "big")
    return bytes(out)


def decode_bundle(reader: ByteReader, profile: TargetProfile) -> Bundle:
    """Decode one prolog/EU bundle; rejects malformed and non-canonical bytes."""
    start = reader.offset
    head = reader.u8("bundle header")
    ctrl_value, n_imm, has_alu, has_mem = head >> 4, (head >> 2) & 3, (head >> 1) & 1, head & 1
    second = reader.u8("bundle header")
    n_sel = second >> 3
    if second & 0x7:
        raise DecodeError("reserved bits of the bundle header are set", start + 1, "DPF3011")
    try:
        ctrl_op = CtrlOp(ctrl_value)
    except ValueError:
        raise DecodeError(f"unknown control opcode {ctrl_value}", start, "DPF3012") from None
    taken = decode_pc(reader.u16("pc_taken"))
    raw_x = raw_y = None
    not_taken = None
    if ctrl_op.conditional:
        raw_x = reader.u8("branch operand x")
        raw_y = reader.u8("branch operand y")
        not_taken = decode_pc(reader.u16("pc_not_taken"))
    raw_selectors: list[tuple[int, int, int, int]] = []
    if n_sel > profile.registers:
        raise DecodeError(
            f"{n_sel} selectors but {profile.name} has {profile.registers} registers",
            start + 1,
            "DPF3013",
        )
    for _ in range(n_sel):
        offset = reader.offset
        packed = reader.u8("selector")
        raw_operand = reader.u8("selector operand")
        raw_selectors.append((offset, packed >> 3, packed & 7, raw_operand))
    group = (profile.lanes + 1) // 2
    alu_offset = reader.offset
    alu = _decode_nibbles(reader, group, profile.lanes, "ALU ops", AluOp) if has_alu else None
    mem_offset = reader.offset
    mem = _decode_nibbles(reader, group, profile.lanes, "memory ops", MemOp) if has_mem else None
    imm_offset = reader.offset
    immediates = tuple(reader.u32("immediate") for _ in range(n_imm))

    def branch_operand(raw: int, what: str, offset: int) -> Operand:
        if raw & IMM_FLAG:
            slot = raw & 0x7F
            if slot >= len(immediates):
                raise DecodeError(
                    f"{what} names immediate slot {slot} but the bundle has "
                    f"{len(immediates)} immediate(s)",
                    offset,
                    "DPF3014",
                )
            return Imm(immediates[slot])
        return register_at(raw, what, offset)

    selectors = []
    for offset, dest_code, kind_value, raw in raw_selectors:
        dest = Register.from_code(dest_code)  # 5 bits: always a register number
        kind = SelectorKind(kind_value)  # 3 bits: every value is a selector kind
        source = None
        value = raw
        if kind is SelectorKind.MOV:
            source, value = register_at(raw, "MOV source", offset + 1), 0
        elif kind is SelectorKind.LOAD_IMM:
            if raw >= len(immediates):
                raise DecodeError(
                    f"LOAD_IMM names immediate slot {raw} but the bundle has "
                    f"{len(immediates)} immediate(s)",
                    offset + 1,
                    "DPF3014",
                )
            value = immediates[raw]
        selectors.append(Selector(dest, kind, source, value))
    x = branch_operand(raw_x, "branch operand x", start + 4) if raw_x is not None else None
    y = branch_operand(raw_y, "branch operand y", start + 5) if raw_y is not None else None
    bundle = Bundle(
        tuple(selectors),
        alu if alu is not None else (AluOp.NOP,) * profile.lanes,
        mem if mem is not None else (MemOp.NOP,) * profile.lanes,
        Control(ctrl_op, taken, x, y, not_taken),
    )
    if alu is not None and all(op is AluOp.NOP for op in alu):
        raise DecodeError(
            "non-canonical bundle: ALU op group present but every lane is NOP "
            "(the canonical encoding clears has_alu and omits the group)",
            alu_offset,
            "DPF3040",
        )
    if mem is not None and all(op is MemOp.NOP for op in mem):
        raise DecodeError(
            "non-canonical bundle: memory op group present but every lane is NOP "
            "(the canonical encoding clears has_mem and omits the group)",
            mem_offset,
            "DPF3040",
        )
    _check_canonical_immediates(immediates, bundle.immediates(), imm_offset)
    check_canonical_bytes(reader, start, encode_bundle(bundle, profile), "bundle")
    return bundle


def _check_canonical_immediates(
    actual: tuple[int, ...], canonical: tuple[int, ...], offset: int
) -> None:
    """Immediates must be the distinct values the bundle uses, in first-use order."""
    for slot, value in enumerate(actual):
        if value in actual[:slot]:
            raise DecodeError(
                f"non-canonical bundle: immediate {value:#x} is stored twice "
                f"(slots {actual.index(value)} and {slot})",
                offset + 4 * slot,
                "DPF3040",
            )
        if value not in canonical:
            raise DecodeError(
                f"non-canonical bundle: immediate slot {slot} ({value:#x}) is never used",
                offset + 4 * slot,
                "DPF3040",
            )
    for slot, (value, expected) in enumerate(zip(actual, canonical, strict=True)):
        if value != expected:
            raise DecodeError(
                f"non-canonical bundle: immediates not in first-use order "
                f"(slot {slot} holds {value:#x}, the canonical order puts {expected:#x} there)",
                offset + 4 * slot,
                "DPF3040",
            )


def _decode_nibbles(
    reader: ByteReader, group: int, lanes: int, what: str, enum: type[E]
) -> tuple[E, ...]:
    offset = reader.offset
    raw = reader.take(group, what)
    values = [n for byte in raw for n in (byte >> 4, byte & 0xF)]
    if any(values[lanes:]):
        raise DecodeError(f"padding nibble of {what} is not zero", offset, "DPF3015")
    out = []
    for lane, value in enumerate(values[:lanes]):
        try:
            out.append(enum(value))
        except ValueError:
            raise DecodeError(
                f"unknown opcode {value} in {what}, lane {lane}", offset + lane // 2, "DPF3016"
            ) from None
    return tuple(out)
