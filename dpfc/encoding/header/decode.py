"""Decoding SwitchVM Geneve options: strict, located, canonical only.

:func:`decode_options` reads a Geneve options area into a :class:`SwitchVMHeader`,
ignoring other classes' options. It accepts exactly what :func:`encode_options` writes:
the header option first with the version the profile reads (its ``code_format``), the
announced code and stack options in that version's order, code that passes :func:`~dpfc.isa.placement.check_image`, valid pointers, and bytes equal to the
re-encoding of their content. Anything else raises :class:`DecodeError` with the byte
offset of the first problem (a check violation points at the field it names, a
non-canonical area at the first byte that differs from the canonical one) and its code.

The layout and the option framing are :mod:`.format`'s (positions and widths from the
tables of :mod:`dpfc.encoding.layouts`); the code options' contents are unpacked by
:mod:`dpfc.encoding.code`; this module writes nothing.
"""

from __future__ import annotations

from dpfc.catalog import codes
from dpfc.encoding.code import MAX_BLOCK_BUNDLES, bundle_field_offset, decode_pc, unpack_code
from dpfc.encoding.errors import DecodeError, EncodingError
from dpfc.encoding.header.encode import encode_options
from dpfc.encoding.header.format import (
    HEADER_DATA_LEN,
    OPTION_CLASS,
    PTR_NONE,
    TYPE_CODE,
    TYPE_HEADER,
    TYPE_STACK,
    EncodedOptions,
    Option,
    SwitchVMHeader,
    pointer_problem,
    split_options,
)
from dpfc.encoding.layouts import (
    HEADER_OPTION,
    OPTION_HEAD,
    OPTION_WORD_BYTES,
    OPTIONS_MAX,
    STACK_ENTRIES_PER_OPTION,
    STACK_ENTRY,
)
from dpfc.isa import CodeImage, check_image, stage_name
from dpfc.target import TAGGED_FORMAT, TargetProfile


def decode_options(data: bytes, profile: TargetProfile, base_offset: int = 0) -> SwitchVMHeader:
    """Decode a Geneve options area holding SwitchVM options (others are ignored).

    Raises :class:`DecodeError` with the byte offset of the first problem. Only the
    canonical encoding is accepted: the result re-encodes to exactly the SwitchVM options.
    """
    if len(data) > OPTIONS_MAX:
        raise DecodeError(
            f"options area of {len(data)} bytes exceeds {OPTIONS_MAX}",
            base_offset,
            codes.DECODE_OPTIONS_TOO_LARGE,
        )
    options = [o for o in split_options(data, base_offset) if o[1] == OPTION_CLASS]
    if not options:
        raise DecodeError(
            "no SwitchVM option (class 0xFFF0) in the Geneve header",
            base_offset,
            codes.DECODE_NO_SWITCHVM_OPTION,
        )
    offset, _, opt_type, head = options[0]
    if opt_type != TYPE_HEADER:
        raise DecodeError(
            f"first SwitchVM option has type {opt_type:#04x}, expected the header option (0x01)",
            offset,
            codes.DECODE_HEADER_NOT_FIRST,
        )
    if len(head) != HEADER_DATA_LEN:
        raise DecodeError(
            f"header option has {len(head)} data bytes, expected {HEADER_DATA_LEN}",
            offset + OPTION_HEAD.field("length").byte,
            codes.DECODE_HEADER_LENGTH,
        )

    def at(name: str) -> int:
        """The offset of a field of the header option."""
        return offset + OPTION_HEAD.size + HEADER_OPTION.field(name).byte

    fields = HEADER_OPTION.unpack(head)
    version, flags = fields["version"], fields["flags"]
    if version != profile.code_format:
        raise DecodeError(
            f"SwitchVM format version {version}, but the profile {profile.name} reads "
            f"version {profile.code_format} (its code_format)",
            at("version"),
            codes.DECODE_FORMAT_VERSION,
        )
    tagged = profile.code_format == TAGGED_FORMAT
    gas, depth = fields["gas"], fields["stack_depth"]
    n_code, n_stack = fields["n_code_opts"], fields["n_stack_opts"]
    app_id = fields["app_id"]
    dpf_raw, egress_raw = fields["dpf_ptr"], fields["egress_ptr"]
    if depth > profile.stack_max_depth:
        raise DecodeError(
            f"stack depth {depth} exceeds {profile.name}'s limit of {profile.stack_max_depth}",
            at("stack_depth"),
            codes.DECODE_STACK_TOO_DEEP,
        )
    if n_code > profile.max_code_options:
        raise DecodeError(
            f"header announces {n_code} code options but {profile.name} allows "
            f"{profile.max_code_options} (max_code_options)",
            at("n_code_opts"),
            codes.DECODE_TOO_MANY_CODE_OPTIONS,
        )
    rest = options[1:]
    if tagged:  # version 2: the stack options come first
        expected = [TYPE_STACK] * n_stack + [TYPE_CODE] * n_code
        stack_options, code_options = rest[:n_stack], rest[n_stack:]
    else:
        expected = [TYPE_CODE] * n_code + [TYPE_STACK] * n_stack
        code_options, stack_options = rest[:n_code], rest[n_code:]
    actual = [o[2] for o in rest]
    if actual != expected:
        raise DecodeError(
            f"header announces {n_code} code and {n_stack} stack options, found "
            f"{actual.count(TYPE_CODE)} code and {actual.count(TYPE_STACK)} stack options"
            + ("" if sorted(actual, reverse=tagged) == actual else " (out of order)"),
            at("n_code_opts"),
            codes.DECODE_OPTION_COUNTS,
        )
    positions: dict[tuple[int, int], int] = {}
    code = unpack_code([(o[0] + OPTION_HEAD.size, o[3]) for o in code_options], profile, positions)
    stack_data = b"".join(o[3] for o in stack_options)
    entry = STACK_ENTRY.size
    if len(stack_data) != entry * depth:
        raise DecodeError(
            f"header announces {depth} stack entries, stack options hold "
            f"{len(stack_data) // entry}",
            at("stack_depth"),
            codes.DECODE_STACK_DEPTH_MISMATCH,
        )
    stack = tuple(
        int.from_bytes(stack_data[i : i + entry], "big") for i in range(0, len(stack_data), entry)
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
        if (
            v.code == codes.ISA_TOO_MANY_PACKET_BUNDLES
        ):  # too many bundles in a stage: point at the first one too many
            index = profile.packet_bundles_per_stage
        raise DecodeError(
            f"{stage_name(stage)} bundle {index}: {v.message}",
            _violation_offset(code, positions, stage, index, v.where, profile, offset),
            v.code,
        )
    if header.gas > profile.max_gas:
        raise DecodeError(
            f"gas {gas} exceeds {profile.max_gas}", at("gas"), codes.DECODE_GAS_TOO_HIGH
        )
    for name, pointer, field_at in (
        ("DPF pointer", header.dpf_ptr, at("dpf_ptr")),
        ("egress pointer", header.egress_ptr, at("egress_ptr")),
    ):
        problem = pointer_problem(pointer, code, profile)
        if problem:
            raise DecodeError(f"{name}: {problem}", field_at, codes.DECODE_BAD_POINTER)
    try:
        again = encode_options(header, profile)
    except EncodingError as exc:
        raise DecodeError(exc.message, base_offset, exc.code) from None
    _check_canonical(options[:1], code_options, stack_options, again, tagged)
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
    return start + bundle_field_offset(stage, bundles[index], where, profile)


def _check_canonical(
    header_option: list[Option],
    code_options: list[Option],
    stack_options: list[Option],
    encoded: EncodedOptions,
    tagged: bool,
) -> None:
    """The SwitchVM options must be exactly ``encoded``, the canonical encoding of their
    content; the error names the section that differs (code, then stack, then header)."""
    header_end = encoded.header_bytes
    if tagged:  # header, stack, code
        stack_at = header_end
        code_at = stack_at + encoded.stack_bytes
    else:  # header, code, stack
        code_at = header_end
        stack_at = code_at + encoded.code_bytes
    canonical_code = encoded.data[code_at : code_at + encoded.code_bytes]
    canonical_stack = encoded.data[stack_at : stack_at + encoded.stack_bytes]
    ours = _concat(code_options)
    if ours != canonical_code:
        canonical = [o[3] for o in split_options(canonical_code)]
        actual = [o[3] for o in code_options]
        if [len(c) for c in canonical] != [len(c) for c in actual]:
            message = (
                "non-canonical packing of the in-packet code: greedy packing gives "
                f"{len(canonical)} code option(s) of {_sizes(canonical)} data bytes, "
                f"this packet has {len(actual)} of {_sizes(actual)}"
            )
        elif tagged:
            message = (
                "non-canonical packing of the in-packet code: greedy packing puts the "
                "bundles into the code options differently"
            )
        else:
            message = (
                "non-canonical blocks in the in-packet code: each stage's bundles form one "
                f"block (of at most {MAX_BLOCK_BUNDLES}) per code option"
            )
        index = _first_diff(ours, canonical_code)
        raise DecodeError(message, _locate(code_options, index), codes.DECODE_NON_CANONICAL)
    ours = _concat(stack_options)
    if ours != canonical_stack:
        raise DecodeError(
            f"non-canonical stack: {len(stack_options)} stack option(s) where the canonical "
            f"encoding uses {encoded.stack_options} ({STACK_ENTRIES_PER_OPTION} entries per option)",
            _locate(stack_options, _first_diff(ours, canonical_stack)),
            codes.DECODE_NON_CANONICAL,
        )
    ours = _concat(header_option)
    if ours != encoded.data[:header_end]:
        raise DecodeError(
            "non-canonical header option",
            _locate(header_option, _first_diff(ours, encoded.data[:header_end])),
            codes.DECODE_NON_CANONICAL,
        )


def _concat(options: list[Option]) -> bytes:
    return b"".join(
        OPTION_HEAD.pack(option_class=o[1], option_type=o[2], length=len(o[3]) // OPTION_WORD_BYTES)
        + o[3]
        for o in options
    )


def _sizes(payloads: list[bytes]) -> str:
    return "+".join(str(len(p)) for p in payloads) or "0"


def _locate(options: list[Option], index: int) -> int:
    """Absolute offset of byte ``index`` of the concatenation of ``options`` (which need not
    be adjacent in the Geneve header: other classes' options may sit between them)."""
    for offset, _, _, data in options:
        size = OPTION_HEAD.size + len(data)
        if index < size:
            return offset + index
        index -= size
    if not options:
        return 0  # unreachable: an empty section decodes to an empty canonical section
    last = options[-1]
    return last[0] + OPTION_HEAD.size + len(last[3])


def _first_diff(a: bytes, b: bytes) -> int:
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return i
    return min(len(a), len(b))
