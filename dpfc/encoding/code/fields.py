"""Fields shared by both in-packet bundle kinds: PCs, registers, canonical form, field offsets.

Contract: the byte-level pieces that the prolog/EU bundle codec (:mod:`.bundle`) and the
epilog codec (:mod:`.epilog`) have in common, and :func:`field_offset`, which knows both
layouts (docs/encoding.md, "In-packet code") to point a checker violation at a byte:

* a PC is a :data:`~dpfc.encoding.layouts.PC_FORMAT`: ``in_packet`` (its top bit) set for
  an in-packet PC, the bundle or slot ``index`` in the other bits;
* a register operand is a :data:`~dpfc.encoding.layouts.REGISTER_BYTE`: a 5-bit register
  number (anything above is DPF3010);
* a decoded bundle is canonical only if re-encoding it gives back the bytes read (DPF3040).

Positions and widths come from the tables of :mod:`dpfc.encoding.layouts`. Not
responsible for the layout of a whole bundle (:mod:`.bundle`, :mod:`.epilog`) nor for
blocks and code options (:mod:`.packing`).
"""

from __future__ import annotations

from dpfc.catalog import codes
from dpfc.encoding.errors import ByteReader, DecodeError
from dpfc.encoding.layouts import (
    BRANCH,
    BUNDLE_HEAD,
    EPILOG_HEAD,
    OPERAND,
    PC_FORMAT,
    REGISTER_BYTE,
    SELECTOR,
    STEER_IMMEDIATE,
    op_group,
)
from dpfc.isa import PC, AluOp, EpilogBundle, Imm, MemOp, Register, StageBundle
from dpfc.target import TargetProfile

IMM_FLAG = OPERAND.placed("immediate", 1)  # an operand byte naming an immediate slot
IN_PACKET = PC_FORMAT.placed("in_packet", 1)  # a PC naming an in-packet bundle
PC_INDEX_MASK = PC_FORMAT.field("index").mask
REGISTER_MAX = REGISTER_BYTE.field("register").mask  # the largest register number


def encode_pc(pc: PC) -> int:
    return (IN_PACKET if pc.in_packet else 0) | pc.index


def decode_pc(value: int) -> PC:
    return PC(bool(value & IN_PACKET), value & PC_INDEX_MASK)


def register_at(code: int, what: str, offset: int) -> Register:
    """The register of a 5-bit register number read at ``offset``."""
    if code > REGISTER_MAX:
        raise DecodeError(
            f"invalid register number {code:#04x} in {what} (register numbers are 0x00..0x1f)",
            offset,
            codes.DECODE_BAD_REGISTER,
        )
    return Register.from_code(code)


def read_register(reader: ByteReader, what: str) -> Register:
    offset = reader.offset
    return register_at(reader.uint(REGISTER_BYTE.size, what), what, offset)


def check_canonical_bytes(reader: ByteReader, start: int, canonical: bytes, what: str) -> None:
    """The bytes just decoded (from ``start``) must be the canonical encoding of the result."""
    actual = reader.data[start - reader.base : reader.pos]
    if actual == canonical:
        return
    index = next(
        (i for i, (a, b) in enumerate(zip(actual, canonical, strict=False)) if a != b),
        min(len(actual), len(canonical)),
    )
    raise DecodeError(f"non-canonical {what} encoding", start + index, codes.DECODE_NON_CANONICAL)


def field_offset(bundle: StageBundle, where: tuple[str | int, ...], profile: TargetProfile) -> int:
    """Offset, from the first byte of ``bundle``'s encoding, of the field that a
    :class:`~dpfc.isa.check.Violation` ``where`` key names (0, the bundle header, if none)."""
    if isinstance(bundle, EpilogBundle):
        n_push = len(bundle.push)
        value = bundle.steering.value
        value_bytes = (
            REGISTER_BYTE.size
            if isinstance(value, Register)
            else STEER_IMMEDIATE.size
            if isinstance(value, Imm)
            else 0
        )
        pushes_at = EPILOG_HEAD.size
        match where:
            case ("push", int() as index):
                return pushes_at + REGISTER_BYTE.size * index
            case ("steering",) if value is not None:
                return pushes_at + REGISTER_BYTE.size * n_push
            case ("next_pc",) if bundle.next_pc is not None:
                return pushes_at + REGISTER_BYTE.size * n_push + value_bytes
        return 0
    conditional = bundle.control.op.conditional
    selectors_at = BUNDLE_HEAD.size + (BRANCH.size if conditional else 0)
    group = op_group(profile.lanes)
    has_alu = any(op is not AluOp.NOP for op in bundle.alu)
    has_mem = any(op is not MemOp.NOP for op in bundle.mem)
    alu_at = selectors_at + SELECTOR.size * len(bundle.selectors)
    mem_at = alu_at + (group.size if has_alu else 0)
    immediates_at = mem_at + (group.size if has_mem else 0)
    match where:
        case ("control", "taken"):
            return BUNDLE_HEAD.field("pc_taken").byte
        case ("control", "x") if conditional:
            return BUNDLE_HEAD.size + BRANCH.field("x").byte
        case ("control", "y") if conditional:
            return BUNDLE_HEAD.size + BRANCH.field("y").byte
        case ("control", "not_taken") if conditional:
            return BUNDLE_HEAD.size + BRANCH.field("pc_not_taken").byte
        case ("selector", str() as dest):
            names = [str(sel.dest) for sel in bundle.selectors]
            return selectors_at + SELECTOR.size * names.index(dest) if dest in names else 0
        case ("alu", int() as lane) if has_alu:
            return alu_at + group.field(f"lane_{lane}").byte
        case ("mem", int() as lane) if has_mem:
            return mem_at + group.field(f"lane_{lane}").byte
        case ("immediates",) if bundle.immediates():
            return immediates_at
    return 0
