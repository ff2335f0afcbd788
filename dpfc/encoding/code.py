"""Compact in-packet code format: bundles, stage blocks and their packing into options.

Layout (docs/encoding.md, "In-packet code"): each SwitchVM code option's data is
``n_blocks:u8`` then that many *blocks*, then zero padding to a multiple of 4 bytes. A block
is ``stage:5 | count-1:3`` followed by ``count`` bundles of that stage. Blocks appear in
ascending stage order; a stage's bundles may continue in the next block. The in-packet PC
``@packet:i`` names the i-th bundle of a stage across all blocks.

Prolog/EU bundle::

    byte 0   ctrl_op:4 | n_imm:2 | has_alu:1 | has_mem:1
    byte 1   n_sel:5   | reserved:3 (0)
    u16      pc_taken
    [conditional ctrl_op: x:u8, y:u8, pc_not_taken:u16]
    n_sel x (dest:5 | kind:3, operand:u8)      sorted by dest, A before B
    [has_alu: ceil(L/2) bytes, one nibble per lane, lane 0 in the high nibble]
    [has_mem: ceil(L/2) bytes, likewise]
    n_imm x u32                                 immediates, first use first

Epilog bundle::

    byte 0   n_push:5 | steer_action:3
    byte 1   hdr_mod:1 | steer_src:1 | next_pc_src:2 | reserved:4 (0)
    n_push x u8 (register)
    [value-taking action: u16 immediate (steer_src 0) or u8 register (steer_src 1)]
    [next_pc_src 1: u16 PC; 2: u8 register]

The encoding is canonical: one program has exactly one byte string, and the decoder
rejects any other (it re-encodes what it decoded and compares), so decode∘encode and
encode∘decode are identities.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import TypeVar

from dpfc.encoding.errors import ByteReader, DecodeError, EncodingError
from dpfc.isa.bundle import (
    EPILOG_STAGE,
    PC,
    PROLOG_STAGE,
    Bundle,
    CodeImage,
    Control,
    EpilogBundle,
    Imm,
    Operand,
    Register,
    Selector,
    StageBundle,
    Steering,
    stage_name,
)
from dpfc.isa.opcodes import AluOp, CtrlOp, MemOp, SelectorKind
from dpfc.target.profile import TargetProfile

OPTION_DATA_MAX = 124  # RFC 8926: option length is 5 bits of 4-byte words
IMM_FLAG = 0x80
NEXT_PC_NONE, NEXT_PC_IMM, NEXT_PC_REG = 0, 1, 2
E = TypeVar("E", AluOp, MemOp)
MAX_BLOCK_BUNDLES = 8


def encode_pc(pc: PC) -> int:
    return (0x8000 if pc.in_packet else 0) | pc.index


def decode_pc(value: int) -> PC:
    return PC(bool(value & 0x8000), value & 0x7FFF)


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


def _register(code: int, what: str, offset: int) -> Register:
    """The register of a 5-bit register number read at ``offset``."""
    if code > 0x1F:
        raise DecodeError(
            f"invalid register number {code:#04x} in {what} (register numbers are 0x00..0x1f)",
            offset,
            "DPF3010",
        )
    return Register.from_code(code)


def _read_register(reader: ByteReader, what: str) -> Register:
    offset = reader.offset
    return _register(reader.u8(what), what, offset)


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
        return _register(raw, what, offset)

    selectors = []
    for offset, dest_code, kind_value, raw in raw_selectors:
        dest = Register.from_code(dest_code)  # 5 bits: always a register number
        kind = SelectorKind(kind_value)  # 3 bits: every value is a selector kind
        source = None
        value = raw
        if kind is SelectorKind.MOV:
            source, value = _register(raw, "MOV source", offset + 1), 0
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
    _check_canonical_bytes(reader, start, encode_bundle(bundle, profile), "bundle")
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


def _check_canonical_bytes(reader: ByteReader, start: int, canonical: bytes, what: str) -> None:
    """The bytes just decoded (from ``start``) must be the canonical encoding of the result."""
    actual = reader.data[start - reader.base : reader.pos]
    if actual == canonical:
        return
    index = next(
        (i for i, (a, b) in enumerate(zip(actual, canonical, strict=False)) if a != b),
        min(len(actual), len(canonical)),
    )
    raise DecodeError(f"non-canonical {what} encoding", start + index, "DPF3040")


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


def encode_epilog(epilog: EpilogBundle, profile: TargetProfile) -> bytes:
    action = profile.steering_by_name(epilog.steering.action)
    assert action is not None
    value = epilog.steering.value
    steer_src = 1 if isinstance(value, Register) else 0
    if epilog.next_pc is None:
        next_src = NEXT_PC_NONE
    elif isinstance(epilog.next_pc, PC):
        next_src = NEXT_PC_IMM
    else:
        next_src = NEXT_PC_REG
    out = bytearray(
        [
            (len(epilog.push) << 3) | action.code,
            (int(epilog.hdr_mod) << 7) | (steer_src << 6) | (next_src << 4),
        ]
    )
    out += bytes(reg.code for reg in epilog.push)
    if isinstance(value, Register):
        out.append(value.code)
    elif isinstance(value, Imm):
        out += value.value.to_bytes(2, "big")
    if isinstance(epilog.next_pc, PC):
        out += encode_pc(epilog.next_pc).to_bytes(2, "big")
    elif isinstance(epilog.next_pc, Register):
        out.append(epilog.next_pc.code)
    return bytes(out)


def decode_epilog(reader: ByteReader, profile: TargetProfile) -> EpilogBundle:
    """Decode one epilog bundle; rejects malformed and non-canonical bytes."""
    start = reader.offset
    head = reader.u8("epilog header")
    flags = reader.u8("epilog header")
    n_push, action_code = head >> 3, head & 7
    hdr_mod, steer_src, next_src = flags >> 7, (flags >> 6) & 1, (flags >> 4) & 3
    if flags & 0xF:
        raise DecodeError("reserved bits of the epilog header are set", start + 1, "DPF3011")
    action = profile.steering_by_code(action_code)
    if action is None:
        raise DecodeError(f"unknown steering action code {action_code}", start, "DPF3017")
    if n_push > profile.max_push:
        raise DecodeError(
            f"PUSH of {n_push} registers exceeds 2L = {profile.max_push}", start, "DPF3018"
        )
    push = tuple(_read_register(reader, "PUSH register") for _ in range(n_push))
    value: Operand | None = None
    if action.takes_value:
        value = (
            _read_register(reader, "steering register")
            if steer_src
            else Imm(reader.u16("steering value"))
        )
    elif steer_src:
        raise DecodeError(
            f"steering action `{action.name}` takes no value but steer_src is set",
            start + 1,
            "DPF3019",
        )
    next_pc: PC | Register | None = None
    if next_src == NEXT_PC_IMM:
        next_pc = decode_pc(reader.u16("NEXT_PC"))
    elif next_src == NEXT_PC_REG:
        next_pc = _read_register(reader, "NEXT_PC register")
    elif next_src != NEXT_PC_NONE:
        raise DecodeError("invalid NEXT_PC source 3", start + 1, "DPF3019")
    epilog = EpilogBundle(push, Steering(action.name, value), next_pc, bool(hdr_mod))
    _check_canonical_bytes(reader, start, encode_epilog(epilog, profile), "epilog")
    return epilog


def encode_stage_bundle(stage: int, bundle: StageBundle, profile: TargetProfile) -> bytes:
    if isinstance(bundle, EpilogBundle):
        return encode_epilog(bundle, profile)
    return encode_bundle(bundle, profile)


@dataclass(frozen=True)
class PackedCode:
    """Code option payloads and where each bundle landed (for size reports)."""

    options: tuple[bytes, ...]
    bundle_sizes: tuple[tuple[int, int, int], ...]  # (stage, index, bytes)


# Encoding and decoding are pure functions of frozen values, and a switch sees the same
# in-packet code over and over: memoising them makes the simulator (and the decoder's
# canonical-form check, which re-encodes) several times faster without changing a result.
CACHE_SIZE = 4096


@lru_cache(maxsize=CACHE_SIZE)
def pack_code(image: CodeImage, profile: TargetProfile) -> PackedCode:
    """Greedy canonical packing of an image's bundles into code-option payloads."""
    options: list[bytes] = []
    sizes: list[tuple[int, int, int]] = []
    current = bytearray([0])
    block_stage = -1
    block_count = 0
    block_header_pos = 0

    def close() -> None:
        nonlocal current, block_stage
        if current[0]:
            padded = bytes(current) + bytes(-len(current) % 4)
            options.append(padded)
        current = bytearray([0])
        block_stage = -1

    for stage, bundles in image.stages():
        for index, bundle in enumerate(bundles):
            body = encode_stage_bundle(stage, bundle, profile)
            sizes.append((stage, index, len(body)))
            continue_block = block_stage == stage and block_count < MAX_BLOCK_BUNDLES
            needed = len(body) + (0 if continue_block else 1)
            if len(current) + needed > OPTION_DATA_MAX:
                close()
                continue_block = False
                needed = len(body) + 1
                if 1 + needed > OPTION_DATA_MAX:
                    raise EncodingError(
                        f"{stage_name(stage)} bundle {index} is {len(body)} bytes, too large for "
                        f"one Geneve option ({OPTION_DATA_MAX - 2} bytes at most)"
                    )
            if continue_block:
                block_count += 1
                current[block_header_pos] = (stage << 3) | (block_count - 1)
            else:
                block_stage, block_count = stage, 1
                block_header_pos = len(current)
                current.append(stage << 3)
                current[0] += 1
            current += body
    close()
    return PackedCode(tuple(options), tuple(sizes))


def unpack_code(
    options: list[tuple[int, bytes]],
    profile: TargetProfile,
    positions: dict[tuple[int, int], int] | None = None,
) -> CodeImage:
    """Decode code-option payloads (with their byte offsets) into a :class:`CodeImage`.

    If ``positions`` is given, it receives the byte offset of every bundle, keyed by
    (stage, index in the stage), so that later checks can point at the offending bundle.
    """
    image, where = _unpack_code(tuple(options), profile)
    if positions is not None:
        positions.update(where)
    return image


@lru_cache(maxsize=CACHE_SIZE)
def _unpack_code(
    options: tuple[tuple[int, bytes], ...], profile: TargetProfile
) -> tuple[CodeImage, tuple[tuple[tuple[int, int], int], ...]]:
    prologs: list[Bundle] = []
    eus: list[list[Bundle]] = [[] for _ in range(profile.num_eus)]
    epilogs: list[EpilogBundle] = []
    where: dict[tuple[int, int], int] = {}
    last_stage = -1
    for base, data in options:
        reader = ByteReader(data, base)
        n_blocks = reader.u8("block count")
        if n_blocks == 0:
            raise DecodeError("code option holds no blocks", base, "DPF3020")
        for _ in range(n_blocks):
            offset = reader.offset
            block = reader.u8("block header")
            stage, count = block >> 3, (block & 7) + 1
            if stage < last_stage:
                raise DecodeError(
                    f"{stage_name(stage)} block after {stage_name(last_stage)}: blocks must be in stage order",
                    offset,
                    "DPF3021",
                )
            if stage != EPILOG_STAGE and stage > profile.num_eus:
                raise DecodeError(
                    f"code for EU{stage - 1} but {profile.name} has {profile.num_eus} EUs",
                    offset,
                    "DPF3022",
                )
            last_stage = stage
            for _ in range(count):
                if stage == PROLOG_STAGE:
                    where[(stage, len(prologs))] = reader.offset
                    prologs.append(decode_bundle(reader, profile))
                elif stage == EPILOG_STAGE:
                    where[(stage, len(epilogs))] = reader.offset
                    epilogs.append(decode_epilog(reader, profile))
                else:
                    where[(stage, len(eus[stage - 1]))] = reader.offset
                    eus[stage - 1].append(decode_bundle(reader, profile))
        _check_padding(reader)
    while eus and not eus[-1]:
        eus.pop()
    image = CodeImage(tuple(prologs), tuple(tuple(s) for s in eus), tuple(epilogs))
    return image, tuple(where.items())


def _check_padding(reader: ByteReader) -> None:
    """After its blocks, a code option holds only the zero padding to a 4-byte boundary."""
    start = reader.offset
    padding = reader.take(reader.remaining(), "padding")
    if len(padding) > 3:
        raise DecodeError(
            f"code option has {len(padding)} bytes after its blocks; only zero padding to "
            "the next 4-byte boundary (at most 3 bytes) may follow",
            start,
            "DPF3023",
        )
    for index, byte in enumerate(padding):
        if byte:
            raise DecodeError(
                f"padding byte after the blocks of a code option is {byte:#04x}, not zero",
                start + index,
                "DPF3023",
            )


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
