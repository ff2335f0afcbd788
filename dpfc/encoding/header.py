"""The SwitchVM Geneve options: header option, code options and stack options.

A SwitchVM packet carries, in its Geneve header (RFC 8926), a sequence of options of class
:data:`OPTION_CLASS` (experimental range)::

    header option (type 0x01, 12 bytes): version:4 flags:4 | gas:8 | stack_depth:8 |
        n_code_opts:4 n_stack_opts:4 | app_id:32 | dpf_ptr:16 | egress_ptr:16
    code options  (type 0x02): see :mod:`dpfc.encoding.code`
    stack options (type 0x03): 32-bit entries, top of stack first, 31 per option

The header option comes first, then the code options, then the stack options; the counts
in the header are the parser's hints. A DPF pointer of 0xFFFF means "none" (run the
tenant's default DPF). All options together must fit the 252 bytes Geneve allows.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

from dpfc.encoding.code import (
    MAX_BLOCK_BUNDLES,
    PackedCode,
    decode_pc,
    encode_pc,
    field_offset,
    pack_code,
    unpack_code,
)
from dpfc.encoding.errors import ByteReader, DecodeError, EncodingError
from dpfc.isa.bundle import PC, CodeImage, stage_name
from dpfc.isa.check import check_image
from dpfc.target.profile import TargetProfile

OPTION_CLASS = 0xFFF0  # RFC 8926 §8: 0xFFF0..0xFFFF are for experimental use
TYPE_HEADER = 0x01
TYPE_CODE = 0x02
TYPE_STACK = 0x03
OPTION_TYPE_NAMES = {
    TYPE_HEADER: "SwitchVM header",
    TYPE_CODE: "SwitchVM code",
    TYPE_STACK: "SwitchVM stack",
}
HEADER_DATA_LEN = 12
OPTIONS_MAX = 252  # Geneve Opt Len: 6 bits of 4-byte words
OPTION_DATA_MAX = 124  # option Length: 5 bits of 4-byte words
STACK_ENTRIES_PER_OPTION = OPTION_DATA_MAX // 4
FORMAT_VERSION = 1
PTR_NONE = 0xFFFF
# the header option whole: class, type, length | version/flags, gas, depth, counts | app id |
# DPF pointer, egress pointer
_HEADER_OPTION = struct.Struct("!HBBBBBBIHH")


@dataclass(frozen=True)
class SwitchVMHeader:
    """Everything SwitchVM reads from a packet's Geneve options."""

    app_id: int = 0
    dpf_ptr: PC | None = None
    egress_ptr: PC | None = None
    gas: int = 8
    stack: tuple[int, ...] = ()  # top of stack first
    code: CodeImage = field(default_factory=CodeImage)
    flags: int = 0


@dataclass(frozen=True)
class EncodedOptions:
    data: bytes  # the whole options area (option headers included)
    header_bytes: int
    code_bytes: int
    stack_bytes: int
    code_options: int
    stack_options: int
    bundle_sizes: tuple[tuple[int, int, int], ...]


def _option(opt_type: int, data: bytes) -> bytes:
    assert len(data) % 4 == 0 and len(data) <= OPTION_DATA_MAX
    return OPTION_CLASS.to_bytes(2, "big") + bytes([opt_type, len(data) // 4]) + data


def _ptr(pc: PC | None) -> int:
    return PTR_NONE if pc is None else encode_pc(pc)


def pointer_problem(pointer: PC | None, code: CodeImage, profile: TargetProfile) -> str | None:
    """Why a DPF/egress pointer is invalid: it must name an in-packet prolog that the packet
    carries, or a code-memory slot of the prolog stage that exists on the target."""
    if pointer is None:
        return None
    if pointer.in_packet and pointer.index >= len(code.prologs):
        return f"{pointer} names no in-packet prolog ({len(code.prologs)} in the packet)"
    if not pointer.in_packet and pointer.index >= profile.code_slots_per_stage:
        return (
            f"{pointer} is beyond the {profile.code_slots_per_stage} code-memory slots of "
            f"{profile.name}"
        )
    return None


def pack_checked(code: CodeImage, profile: TargetProfile) -> PackedCode:
    """Check in-packet code with :mod:`dpfc.isa.check` and pack it into code options;
    raises :class:`EncodingError` on the first violation."""
    problems = check_image(code, profile)
    if problems:
        stage, index, v = problems[0]
        raise EncodingError(f"{stage_name(stage)} bundle {index}: {v.message}", v.code)
    return pack_code(code, profile)


def _header_option(header: SwitchVMHeader, depth: int, n_code: int, n_stack: int) -> bytes:
    """The header option (option header included) of a checked header: one ``struct`` call
    (the simulator encodes a header per packet); a field out of range for it (a depth or a
    pointer the checks let through) takes the byte-by-byte form, and raises as it did."""
    try:
        return _HEADER_OPTION.pack(
            OPTION_CLASS,
            TYPE_HEADER,
            HEADER_DATA_LEN // 4,
            (FORMAT_VERSION << 4) | header.flags,
            header.gas,
            depth,
            (n_code << 4) | n_stack,
            header.app_id,
            _ptr(header.dpf_ptr),
            _ptr(header.egress_ptr),
        )
    except struct.error:
        pass
    head = bytes([(FORMAT_VERSION << 4) | header.flags, header.gas, depth, (n_code << 4) | n_stack])
    head += header.app_id.to_bytes(4, "big")
    head += _ptr(header.dpf_ptr).to_bytes(2, "big") + _ptr(header.egress_ptr).to_bytes(2, "big")
    return _option(TYPE_HEADER, head)


def encode_options(
    header: SwitchVMHeader, profile: TargetProfile, *, packed: PackedCode | None = None
) -> EncodedOptions:
    """Encode the SwitchVM options; raises :class:`EncodingError` on any limit violation.

    ``packed`` is ``header.code`` as :func:`pack_checked` returned it, for callers that
    encode one DPF's code into many packets (only the stack and pointers differ): the code
    is then neither checked nor packed again."""
    if packed is None:
        packed = pack_checked(header.code, profile)
    for name, pointer in (("DPF pointer", header.dpf_ptr), ("egress pointer", header.egress_ptr)):
        problem = pointer_problem(pointer, header.code, profile)
        if problem:
            raise EncodingError(f"{name}: {problem}", "DPF2006")
    stack = header.stack
    depth = len(stack)
    if depth > profile.stack_max_depth:
        raise EncodingError(
            f"stack of {depth} entries exceeds {profile.name}'s depth of {profile.stack_max_depth}",
            "DPF2002",
        )
    # min/max in C first; the loop (which names the first bad value) only when one is bad
    if stack and not (min(stack) >= 0 and max(stack) <= 0xFFFF_FFFF):
        for value in stack:
            if not 0 <= value <= 0xFFFF_FFFF:
                raise EncodingError(f"stack value {value} does not fit in 32 bits", "DPF2003")
    if not 0 <= header.app_id <= 0xFFFF_FFFF:
        raise EncodingError(f"app id {header.app_id} does not fit in 32 bits", "DPF2003")
    if not 0 <= header.gas <= profile.max_gas:
        raise EncodingError(f"gas {header.gas} out of range 0..{profile.max_gas}", "DPF2003")
    if not 0 <= header.flags <= 0xF:
        raise EncodingError("flags must fit in 4 bits", "DPF2003")
    stack_chunks = [
        stack[i : i + STACK_ENTRIES_PER_OPTION] for i in range(0, depth, STACK_ENTRIES_PER_OPTION)
    ]
    code_options = packed.options
    if len(code_options) > 15 or len(stack_chunks) > 15:
        raise EncodingError("more than 15 code or stack options", "DPF2004")
    head = _header_option(header, depth, len(code_options), len(stack_chunks))
    parts = [head]
    parts += [_option(TYPE_CODE, payload) for payload in code_options]
    try:  # the values are checked above: struct packs exactly what to_bytes would
        parts += [
            _option(TYPE_STACK, struct.pack(f"!{len(chunk)}I", *chunk)) for chunk in stack_chunks
        ]
    except struct.error:  # not ints: raise what the plain conversion always raised
        parts += [
            _option(TYPE_STACK, b"".join(v.to_bytes(4, "big") for v in chunk))
            for chunk in stack_chunks
        ]
    data = b"".join(parts)
    code_bytes = sum(len(p) + 4 for p in code_options)
    stack_bytes = 4 * depth + 4 * len(stack_chunks)
    if len(data) > OPTIONS_MAX:
        raise EncodingError(
            f"SwitchVM options take {len(data)} bytes, over the Geneve limit of {OPTIONS_MAX} "
            f"(header 16, code {code_bytes}, stack {stack_bytes})",
            "DPF2005",
        )
    return EncodedOptions(
        data=data,
        header_bytes=4 + HEADER_DATA_LEN,
        code_bytes=code_bytes,
        stack_bytes=stack_bytes,
        code_options=len(code_options),
        stack_options=len(stack_chunks),
        bundle_sizes=packed.bundle_sizes,
    )


def restack(
    encoded: EncodedOptions, stack: tuple[int, ...], profile: TargetProfile
) -> bytes | None:
    """``encode_options`` of a header that differs from the one ``encoded`` came from only
    in its ``stack``: its options with the header option's depth and counts and the stack
    options replaced, or None when that header would not encode (``encode_options`` then
    says why). The simulator re-encodes a DPF's header for every packet, and most DPFs
    change only the stack; this skips the checks of everything else, which passed."""
    depth = len(stack)
    if depth > profile.stack_max_depth or depth > 0xFF:
        return None
    if stack and not (min(stack) >= 0 and max(stack) <= 0xFFFF_FFFF):
        return None
    data = encoded.data
    chunks = []
    for i in range(0, depth, STACK_ENTRIES_PER_OPTION):
        chunk = stack[i : i + STACK_ENTRIES_PER_OPTION]
        try:
            chunks.append(_option(TYPE_STACK, struct.pack(f"!{len(chunk)}I", *chunk)))
        except struct.error:  # not ints
            return None
    if len(chunks) > 15:
        return None
    code_end = encoded.header_bytes + encoded.code_bytes
    out = b"".join(
        [data[:6], bytes([depth, (data[7] & 0xF0) | len(chunks)]), data[8:code_end], *chunks]
    )
    return out if len(out) <= OPTIONS_MAX else None


Option = tuple[int, int, int, bytes]  # (offset, class, type, data) as split_options gives


def split_options(data: bytes, base_offset: int = 0) -> list[Option]:
    """Split a Geneve options area into (offset, class, type, data) without interpreting it."""
    # Fast path (the simulator splits every packet's options): plain indexing while every
    # option is well formed; anything else is left to the checked reader below, which
    # raises the error (message, offset, code) of the first problem.
    out: list[Option] = []
    pos, size = 0, len(data)
    while pos + 4 <= size:
        length_byte = data[pos + 3]
        end = pos + 4 + (length_byte & 0x1F) * 4
        if length_byte & 0xE0 or end > size:
            break
        out.append(
            (
                base_offset + pos,
                (data[pos] << 8) | data[pos + 1],
                data[pos + 2],
                data[pos + 4 : end],
            )
        )
        pos = end
    if pos == size:
        return out
    return _split_options_checked(data, base_offset)


def _split_options_checked(data: bytes, base_offset: int) -> list[Option]:
    """:func:`split_options` with every read bounds-checked: the path of malformed areas."""
    reader = ByteReader(data, base_offset)
    out = []
    while reader.remaining():
        offset = reader.offset
        opt_class = reader.u16("option class")
        opt_type = reader.u8("option type")
        length_byte = reader.u8("option length")
        if length_byte & 0xE0:
            raise DecodeError(
                "reserved bits of a Geneve option header are set", offset + 3, "DPF3030"
            )
        payload = reader.take(
            (length_byte & 0x1F) * 4, f"data of Geneve option {opt_class:#06x}/{opt_type:#04x}"
        )
        out.append((offset, opt_class, opt_type, payload))
    return out


def decode_options(data: bytes, profile: TargetProfile, base_offset: int = 0) -> SwitchVMHeader:
    """Decode a Geneve options area holding SwitchVM options (others are ignored).

    Raises :class:`DecodeError` with the byte offset of the first problem. Only the
    canonical encoding is accepted: the result re-encodes to exactly the SwitchVM options.
    """
    if len(data) > OPTIONS_MAX:
        raise DecodeError(
            f"options area of {len(data)} bytes exceeds {OPTIONS_MAX}", base_offset, "DPF3031"
        )
    options = [o for o in split_options(data, base_offset) if o[1] == OPTION_CLASS]
    if not options:
        raise DecodeError(
            "no SwitchVM option (class 0xFFF0) in the Geneve header", base_offset, "DPF3032"
        )
    offset, _, opt_type, head = options[0]
    if opt_type != TYPE_HEADER:
        raise DecodeError(
            f"first SwitchVM option has type {opt_type:#04x}, expected the header option (0x01)",
            offset,
            "DPF3033",
        )
    if len(head) != HEADER_DATA_LEN:
        raise DecodeError(
            f"header option has {len(head)} data bytes, expected {HEADER_DATA_LEN}",
            offset + 3,
            "DPF3034",
        )
    version, flags = head[0] >> 4, head[0] & 0xF
    if version != FORMAT_VERSION:
        raise DecodeError(f"unsupported SwitchVM format version {version}", offset + 4, "DPF3035")
    gas, depth = head[1], head[2]
    n_code, n_stack = head[3] >> 4, head[3] & 0xF
    app_id = int.from_bytes(head[4:8], "big")
    dpf_raw, egress_raw = int.from_bytes(head[8:10], "big"), int.from_bytes(head[10:12], "big")
    if depth > profile.stack_max_depth:
        raise DecodeError(
            f"stack depth {depth} exceeds {profile.name}'s limit of {profile.stack_max_depth}",
            offset + 6,
            "DPF3036",
        )
    rest = options[1:]
    expected = [TYPE_CODE] * n_code + [TYPE_STACK] * n_stack
    actual = [o[2] for o in rest]
    if actual != expected:
        raise DecodeError(
            f"header announces {n_code} code and {n_stack} stack options, found "
            f"{actual.count(TYPE_CODE)} code and {actual.count(TYPE_STACK)} stack options"
            + ("" if sorted(actual) == actual else " (out of order)"),
            offset + 7,
            "DPF3037",
        )
    positions: dict[tuple[int, int], int] = {}
    code = unpack_code([(o[0] + 4, o[3]) for o in rest[:n_code]], profile, positions)
    stack_data = b"".join(o[3] for o in rest[n_code:])
    if len(stack_data) != 4 * depth:
        raise DecodeError(
            f"header announces {depth} stack entries, stack options hold {len(stack_data) // 4}",
            offset + 6,
            "DPF3038",
        )
    stack = tuple(
        int.from_bytes(stack_data[i : i + 4], "big") for i in range(0, len(stack_data), 4)
    )
    header = SwitchVMHeader(
        app_id=app_id,
        dpf_ptr=None if dpf_raw == PTR_NONE else decode_pc(dpf_raw),
        egress_ptr=None if egress_raw == PTR_NONE else decode_pc(egress_raw),
        gas=gas,
        stack=stack,
        code=code,
        flags=flags,
    )
    problems = check_image(code, profile)
    if problems:
        stage, index, v = problems[0]
        if v.code == "DPF1031":  # too many bundles in a stage: point at the first one too many
            index = profile.packet_bundles_per_stage
        raise DecodeError(
            f"{stage_name(stage)} bundle {index}: {v.message}",
            _violation_offset(code, positions, stage, index, v.where, profile, offset),
            v.code,
        )
    if header.gas > profile.max_gas:
        raise DecodeError(f"gas {gas} exceeds {profile.max_gas}", offset + 5, "DPF3039")
    for name, pointer, field_at in (
        ("DPF pointer", header.dpf_ptr, 12),
        ("egress pointer", header.egress_ptr, 14),
    ):
        problem = pointer_problem(pointer, code, profile)
        if problem:
            raise DecodeError(f"{name}: {problem}", offset + field_at, "DPF3041")
    try:
        again = encode_options(header, profile)
    except EncodingError as exc:
        raise DecodeError(exc.message, base_offset, exc.code) from None
    _check_canonical(options, n_code, again)
    return header


def _violation_offset(
    code: CodeImage,
    positions: dict[tuple[int, int], int],
    stage: int,
    index: int,
    where: tuple[str | int, ...],
    profile: TargetProfile,
    fallback: int,
) -> int:
    """Byte offset of the field a check violation names (the header option if unknown)."""
    start = positions.get((stage, index))
    if start is None:
        return fallback
    stages = dict(code.stages())
    bundles = stages.get(stage, ())
    if index >= len(bundles):
        return start
    return start + field_offset(bundles[index], where, profile)


def _check_canonical(options: list[Option], n_code: int, encoded: EncodedOptions) -> None:
    """The SwitchVM options must be exactly ``encoded``, the canonical encoding of their
    content; the error names the section that differs (code, then stack, then header)."""
    header_end = encoded.header_bytes
    code_end = header_end + encoded.code_bytes
    code_options, stack_options = options[1 : 1 + n_code], options[1 + n_code :]
    ours = _concat(code_options)
    if ours != encoded.data[header_end:code_end]:
        canonical = [o[3] for o in split_options(encoded.data[header_end:code_end])]
        actual = [o[3] for o in code_options]
        if [len(c) for c in canonical] != [len(c) for c in actual]:
            message = (
                "non-canonical packing of the in-packet code: greedy packing gives "
                f"{len(canonical)} code option(s) of {_sizes(canonical)} data bytes, "
                f"this packet has {len(actual)} of {_sizes(actual)}"
            )
        else:
            message = (
                "non-canonical blocks in the in-packet code: each stage's bundles form one "
                f"block (of at most {MAX_BLOCK_BUNDLES}) per code option"
            )
        index = _first_diff(ours, encoded.data[header_end:code_end])
        raise DecodeError(message, _locate(code_options, index), "DPF3040")
    ours = _concat(stack_options)
    if ours != encoded.data[code_end:]:
        raise DecodeError(
            f"non-canonical stack: {len(stack_options)} stack option(s) where the canonical "
            f"encoding uses {encoded.stack_options} ({STACK_ENTRIES_PER_OPTION} entries per option)",
            _locate(stack_options, _first_diff(ours, encoded.data[code_end:])),
            "DPF3040",
        )
    ours = _concat(options[:1])
    if ours != encoded.data[:header_end]:
        raise DecodeError(
            "non-canonical header option",
            _locate(options[:1], _first_diff(ours, encoded.data[:header_end])),
            "DPF3040",
        )


def _concat(options: list[Option]) -> bytes:
    return b"".join(o[1].to_bytes(2, "big") + bytes([o[2], len(o[3]) // 4]) + o[3] for o in options)


def _sizes(payloads: list[bytes]) -> str:
    return "+".join(str(len(p)) for p in payloads) or "0"


def _locate(options: list[Option], index: int) -> int:
    """Absolute offset of byte ``index`` of the concatenation of ``options`` (which need not
    be adjacent in the Geneve header: other classes' options may sit between them)."""
    for offset, _, _, data in options:
        size = 4 + len(data)
        if index < size:
            return offset + index
        index -= size
    if not options:
        return 0  # unreachable: an empty section decodes to an empty canonical section
    last = options[-1]
    return last[0] + 4 + len(last[3])


def _first_diff(a: bytes, b: bytes) -> int:
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return i
    return min(len(a), len(b))
