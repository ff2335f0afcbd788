"""Fields shared by both in-packet bundle kinds: PCs, registers, canonical form, field offsets.

Contract: the byte-level pieces that the prolog/EU bundle codec (:mod:`code_bundle`) and the
epilog codec (:mod:`code_epilog`) have in common, and :func:`field_offset`, which knows both
layouts (docs/encoding.md, "In-packet code") to point a checker violation at a byte:

* a PC is a ``u16``: bit 15 set for an in-packet PC, the bundle index in the low 15 bits;
* a register operand is a byte holding a 5-bit register number (anything above 0x1f is
  DPF3010);
* a decoded bundle is canonical only if re-encoding it gives back the bytes read (DPF3040).

Not responsible for the layout of a whole bundle (:mod:`code_bundle`, :mod:`code_epilog`) nor
for blocks and code options (:mod:`dpfc.encoding.code`).
"""

from __future__ import annotations

from dpfc.encoding.errors import ByteReader, DecodeError
from dpfc.isa.bundle import PC, EpilogBundle, Imm, Register, StageBundle
from dpfc.isa.opcodes import AluOp, MemOp
from dpfc.target.profile import TargetProfile

IMM_FLAG = 0x80
NEXT_PC_NONE, NEXT_PC_IMM, NEXT_PC_REG = 0, 1, 2


def encode_pc(pc: PC) -> int:
    return (0x8000 if pc.in_packet else 0) | pc.index


def decode_pc(value: int) -> PC:
    return PC(bool(value & 0x8000), value & 0x7FFF)


def register_at(code: int, what: str, offset: int) -> Register:
    """The register of a 5-bit register number read at ``offset``."""
    if code > 0x1F:
        raise DecodeError(
            f"invalid register number {code:#04x} in {what} (register numbers are 0x00..0x1f)",
            offset,
            "DPF3010",
        )
    return Register.from_code(code)


def read_register(reader: ByteReader, what: str) -> Register:
    offset = reader.offset
    return register_at(reader.u8(what), what, offset)


def check_canonical_bytes(reader: ByteReader, start: int, canonical: bytes, what: str) -> None:
    """The bytes just decoded (from ``start``) must be the canonical encoding of the result."""
    actual = reader.data[start - reader.base : reader.pos]
    if actual == canonical:
        return
    index = next(
        (i for i, (a, b) in enumerate(zip(actual, canonical, strict=False)) if a != b),
        min(len(actual), len(canonical)),
    )
    raise DecodeError(f"non-canonical {what} encoding", start + index, "DPF3040")


def field_offset(bundle: StageBundle, where: tuple[str | int, ...], profile: TargetProfile) -> int:
    """Offset, from the first byte of ``bundle``'s encoding, of the field that a
    :class:`~dpfc.isa.check.Violation` ``where`` key names (0, the bundle header, if none)."""
    if isinstance(bundle, EpilogBundle):
        n_push = len(bundle.push)
        value = bundle.steering.value
        value_bytes = 1 if isinstance(value, Register) else 2 if isinstance(value, Imm) else 0
        match where:
            case ("push", int() as index):
                return 2 + index
            case ("steering",) if value is not None:
                return 2 + n_push
            case ("next_pc",) if bundle.next_pc is not None:
                return 2 + n_push + value_bytes
        return 0
    conditional = bundle.control.op.conditional
    selectors_at = 8 if conditional else 4
    group = (profile.lanes + 1) // 2
    has_alu = any(op is not AluOp.NOP for op in bundle.alu)
    has_mem = any(op is not MemOp.NOP for op in bundle.mem)
    alu_at = selectors_at + 2 * len(bundle.selectors)
    mem_at = alu_at + (group if has_alu else 0)
    immediates_at = mem_at + (group if has_mem else 0)
    match where:
        case ("control", "taken"):
            return 2
        case ("control", "x") if conditional:
            return 4
        case ("control", "y") if conditional:
            return 5
        case ("control", "not_taken") if conditional:
            return 6
        case ("selector", str() as dest):
            names = [str(sel.dest) for sel in bundle.selectors]
            return selectors_at + 2 * names.index(dest) if dest in names else 0
        case ("alu", int() as lane) if has_alu:
            return alu_at + lane // 2
        case ("mem", int() as lane) if has_mem:
            return mem_at + lane // 2
        case ("immediates",) if bundle.immediates():
            return immediates_at
    return 0
