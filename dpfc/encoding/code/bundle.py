"""Prolog and EU bundles in their compact in-packet form (docs/encoding.md, "In-packet code").

Layout (the tables of :mod:`dpfc.encoding.layouts`)::

    BUNDLE_HEAD   ctrl_op:4 | n_imm:2 | has_alu:1 | has_mem:1 | n_sel:5 | reserved:3 | pc_taken:16
    [BRANCH, when ctrl_op is conditional: x:8 | y:8 | pc_not_taken:16]
    n_sel x SELECTOR (dest:5 | kind:3 | operand:8)  sorted by dest, A before B
    [has_alu: op_group(L): one 4-bit opcode per lane, lane 0 first]
    [has_mem: op_group(L), likewise]
    imm_group(n_imm): n_imm x 32 bits          first use first (format version 2: its own
                                               order, :func:`~.tagged.tagged_immediates`)

An OPERAND byte with ``immediate`` set (``IMM_FLAG``) names an immediate slot, otherwise a
register.

Contract: :func:`encode_bundle` writes the one canonical byte string of a checked bundle;
:func:`decode_bundle` reads one back and rejects malformed bytes (DPF3010-DPF3016) and every
non-canonical form (DPF3040: empty op groups, duplicate, unused or misordered immediates, any
other byte that re-encoding does not reproduce) with the offset of the offending byte.

Not responsible for epilog bundles (:mod:`.epilog`), for checking what the bundle does
(that is :mod:`dpfc.isa.check`), nor for blocks and options (:mod:`.packing`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from dpfc.catalog import codes
from dpfc.encoding.bitfields import RESERVED
from dpfc.encoding.code.fields import (
    check_canonical_bytes,
    decode_pc,
    encode_pc,
    register_at,
)
from dpfc.encoding.errors import ByteReader, DecodeError
from dpfc.encoding.layouts import (
    BRANCH,
    BUNDLE_HEAD,
    IMMEDIATE,
    OPERAND,
    SELECTOR,
    imm_group,
    op_group,
)
from dpfc.isa import (
    PC,
    AluOp,
    Bundle,
    Control,
    CtrlOp,
    Imm,
    MemOp,
    Operand,
    Register,
    Selector,
    SelectorKind,
)
from dpfc.target import TargetProfile

E = TypeVar("E", AluOp, MemOp)
# The immediate slots of a bundle, in the order the format stores them. Version 1's order is
# the bundle's own (first use: LOAD_IMM selectors by destination, then x, then y).
SlotOrder = Callable[[Bundle], tuple[int, ...]]
FIRST_USE: SlotOrder = Bundle.immediates


def _operand_byte(op: Operand, immediates: tuple[int, ...]) -> int:
    if isinstance(op, Register):
        return op.code
    return OPERAND.pack_int(immediate=1, index=immediates.index(op.value))


def _selector_operand(sel: Selector, immediates: tuple[int, ...]) -> int:
    if sel.kind is SelectorKind.MOV:
        assert sel.source is not None
        return sel.source.code
    if sel.kind is SelectorKind.LOAD_IMM:
        return immediates.index(sel.value)
    return sel.value


def _op_group(values: list[int]) -> bytes:
    return op_group(len(values)).pack(**{f"lane_{lane}": v for lane, v in enumerate(values)})


def encode_bundle(bundle: Bundle, profile: TargetProfile, order: SlotOrder = FIRST_USE) -> bytes:
    """Compact bytes of a (checked) prolog or EU bundle, its immediates in ``order``."""
    immediates = order(bundle)
    ctrl = bundle.control
    has_alu = any(op is not AluOp.NOP for op in bundle.alu)
    has_mem = any(op is not MemOp.NOP for op in bundle.mem)
    out = bytearray(
        BUNDLE_HEAD.pack(
            ctrl_op=ctrl.op,
            n_imm=len(immediates),
            has_alu=has_alu,
            has_mem=has_mem,
            n_sel=len(bundle.selectors),
            pc_taken=encode_pc(ctrl.taken),
        )
    )
    if ctrl.op.conditional:
        assert ctrl.x is not None and ctrl.y is not None and ctrl.not_taken is not None
        out += BRANCH.pack(
            x=_operand_byte(ctrl.x, immediates),
            y=_operand_byte(ctrl.y, immediates),
            pc_not_taken=encode_pc(ctrl.not_taken),
        )
    for sel in bundle.selectors:
        out += SELECTOR.pack(
            dest=sel.dest.code, kind=sel.kind, operand=_selector_operand(sel, immediates)
        )
    if has_alu:
        out += _op_group([int(op) for op in bundle.alu])
    if has_mem:
        out += _op_group([int(op) for op in bundle.mem])
    for value in immediates:
        out += IMMEDIATE.pack(value=value)
    return bytes(out)


def decode_bundle(
    reader: ByteReader,
    profile: TargetProfile,
    order: SlotOrder = FIRST_USE,
    order_name: str = "first-use",
) -> Bundle:
    """Decode one prolog/EU bundle whose immediates are in ``order`` (called
    ``order_name`` in messages); rejects malformed and non-canonical bytes."""
    start = reader.offset
    # the header's first two bytes are checked before pc_taken is read
    head = BUNDLE_HEAD.read(reader, stop="pc_taken")
    ctrl_value, n_imm, n_sel = head["ctrl_op"], head["n_imm"], head["n_sel"]
    if head["reserved"]:
        raise DecodeError(
            "reserved bits of the bundle header are set",
            start + BUNDLE_HEAD.field("reserved").byte,
            codes.DECODE_RESERVED_BITS,
        )
    try:
        ctrl_op = CtrlOp(ctrl_value)
    except ValueError:
        raise DecodeError(
            f"unknown control opcode {ctrl_value}",
            start + BUNDLE_HEAD.field("ctrl_op").byte,
            codes.DECODE_UNKNOWN_CONTROL_OP,
        ) from None
    taken = decode_pc(BUNDLE_HEAD.read(reader, start="pc_taken")["pc_taken"])
    branch = BRANCH.read(reader) if ctrl_op.conditional else None
    raw_selectors: list[tuple[int, int, int, int]] = []
    if n_sel > profile.registers:
        raise DecodeError(
            f"{n_sel} selectors but {profile.name} has {profile.registers} registers",
            start + BUNDLE_HEAD.field("n_sel").byte,
            codes.DECODE_TOO_MANY_SELECTORS,
        )
    for _ in range(n_sel):
        offset = reader.offset
        sel = SELECTOR.read(reader)
        raw_selectors.append((offset, sel["dest"], sel["kind"], sel["operand"]))
    alu_offset = reader.offset
    alu = _decode_op_group(reader, profile.lanes, "ALU ops", AluOp) if head["has_alu"] else None
    mem_offset = reader.offset
    mem = _decode_op_group(reader, profile.lanes, "memory ops", MemOp) if head["has_mem"] else None
    imm_offset = reader.offset
    imm_values = imm_group(n_imm).read(reader)
    immediates = tuple(imm_values[f"imm_{k}"] for k in range(n_imm))

    def branch_operand(raw: int, what: str, offset: int) -> Operand:
        operand = OPERAND.unpack_int(raw)
        if operand["immediate"]:
            slot = operand["index"]
            if slot >= len(immediates):
                raise DecodeError(
                    f"{what} names immediate slot {slot} but the bundle has "
                    f"{len(immediates)} immediate(s)",
                    offset,
                    codes.DECODE_MISSING_IMMEDIATE,
                )
            return Imm(immediates[slot])
        return register_at(raw, what, offset)

    selectors = []
    operand_at = SELECTOR.field("operand").byte
    for offset, dest_code, kind_value, raw in raw_selectors:
        dest = Register.from_code(dest_code)  # 5 bits: always a register number
        kind = SelectorKind(kind_value)  # 3 bits: every value is a selector kind
        source = None
        value = raw
        if kind is SelectorKind.MOV:
            source, value = register_at(raw, "MOV source", offset + operand_at), 0
        elif kind is SelectorKind.LOAD_IMM:
            if raw >= len(immediates):
                raise DecodeError(
                    f"LOAD_IMM names immediate slot {raw} but the bundle has "
                    f"{len(immediates)} immediate(s)",
                    offset + operand_at,
                    codes.DECODE_MISSING_IMMEDIATE,
                )
            value = immediates[raw]
        selectors.append(Selector(dest, kind, source, value))
    x: Operand | None = None
    y: Operand | None = None
    not_taken: PC | None = None
    if branch is not None:
        branch_at = start + BUNDLE_HEAD.size
        x = branch_operand(branch["x"], "branch operand x", branch_at + BRANCH.field("x").byte)
        y = branch_operand(branch["y"], "branch operand y", branch_at + BRANCH.field("y").byte)
        not_taken = decode_pc(branch["pc_not_taken"])
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
            codes.DECODE_NON_CANONICAL,
        )
    if mem is not None and all(op is MemOp.NOP for op in mem):
        raise DecodeError(
            "non-canonical bundle: memory op group present but every lane is NOP "
            "(the canonical encoding clears has_mem and omits the group)",
            mem_offset,
            codes.DECODE_NON_CANONICAL,
        )
    _check_canonical_immediates(immediates, order(bundle), imm_offset, order_name)
    check_canonical_bytes(reader, start, encode_bundle(bundle, profile, order), "bundle")
    return bundle


def _check_canonical_immediates(
    actual: tuple[int, ...], canonical: tuple[int, ...], offset: int, order_name: str
) -> None:
    """Immediates must be the distinct values the bundle uses, in the format's order."""
    for slot, value in enumerate(actual):
        if value in actual[:slot]:
            raise DecodeError(
                f"non-canonical bundle: immediate {value:#x} is stored twice "
                f"(slots {actual.index(value)} and {slot})",
                offset + IMMEDIATE.size * slot,
                codes.DECODE_NON_CANONICAL,
            )
        if value not in canonical:
            raise DecodeError(
                f"non-canonical bundle: immediate slot {slot} ({value:#x}) is never used",
                offset + IMMEDIATE.size * slot,
                codes.DECODE_NON_CANONICAL,
            )
    for slot, (value, expected) in enumerate(zip(actual, canonical, strict=True)):
        if value != expected:
            raise DecodeError(
                f"non-canonical bundle: immediates not in {order_name} order "
                f"(slot {slot} holds {value:#x}, the canonical order puts {expected:#x} there)",
                offset + IMMEDIATE.size * slot,
                codes.DECODE_NON_CANONICAL,
            )


def _decode_op_group(reader: ByteReader, lanes: int, what: str, enum: type[E]) -> tuple[E, ...]:
    offset = reader.offset
    group = op_group(lanes)
    values = group.unpack(reader.take(group.size, what))
    if values.get(RESERVED):
        raise DecodeError(
            f"padding nibble of {what} is not zero", offset, codes.DECODE_PADDING_NIBBLE
        )
    out = []
    for lane in range(lanes):
        value = values[f"lane_{lane}"]
        try:
            out.append(enum(value))
        except ValueError:
            raise DecodeError(
                f"unknown opcode {value} in {what}, lane {lane}",
                offset + group.field(f"lane_{lane}").byte,
                codes.DECODE_UNKNOWN_OPCODE,
            ) from None
    return tuple(out)
