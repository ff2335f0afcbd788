"""Encoding SwitchVM Geneve options: checks every limit, then writes the canonical bytes.

:func:`encode_options` turns a :class:`SwitchVMHeader` into its options area (header
option, code options, stack options in format version 1; header, stack, code in version 2,
the profile's ``code_format``; layout in :mod:`.format`), or
raises :class:`EncodingError` naming the first limit the header breaks (code legality,
pointers, stack depth and values, field widths, option counts, the Geneve size).
:func:`pack_checked` checks and packs in-packet code once for callers that encode it into
many packets; :func:`restack` re-encodes a header whose stack alone changed.

The bytes written are the canonical encoding, the only one the decoder accepts; decoding
is :mod:`.decode`'s, and the in-packet code's own layout is :mod:`dpfc.encoding.code`'s.
Positions and widths come from the tables of :mod:`dpfc.encoding.layouts`.
"""

from __future__ import annotations

import struct

from dpfc.catalog import codes
from dpfc.encoding.code import PackedCode, encode_pc, pack_code
from dpfc.encoding.errors import EncodingError
from dpfc.encoding.header.format import (
    HEADER_DATA_LEN,
    HEADER_OPTION_BYTES,
    OPTION_CLASS,
    PTR_NONE,
    TYPE_CODE,
    TYPE_HEADER,
    TYPE_STACK,
    EncodedOptions,
    SwitchVMHeader,
    geneve_option,
    pointer_problem,
)
from dpfc.encoding.layouts import (
    HEADER_OPTION,
    OPTION_HEAD,
    OPTION_WORD_BYTES,
    OPTIONS_MAX,
    STACK_ENTRIES_PER_OPTION,
    STACK_ENTRY,
)
from dpfc.isa import PC, CodeImage, check_image, stage_name
from dpfc.target import TAGGED_FORMAT, TargetProfile

_ENTRY = STACK_ENTRY.field("value")
_ENTRY_CODE = {1: "B", 2: "H", 4: "I", 8: "Q"}[STACK_ENTRY.size]  # struct's code for an entry
_APP_ID, _FLAGS = HEADER_OPTION.field("app_id"), HEADER_OPTION.field("flags")
_DEPTH = HEADER_OPTION.field("stack_depth")
_N_CODE, _N_STACK = HEADER_OPTION.field("n_code_opts"), HEADER_OPTION.field("n_stack_opts")
# restack rewrites these two bytes of the header option in place (the simulator's per-packet path)
assert _DEPTH.whole_bytes and _DEPTH.nbytes == 1 and _N_STACK.nbytes == 1
_DEPTH_AT = OPTION_HEAD.size + _DEPTH.byte
_N_STACK_AT = OPTION_HEAD.size + _N_STACK.byte


def _ptr(pc: PC | None) -> int:
    return PTR_NONE if pc is None else encode_pc(pc)


def pack_checked(code: CodeImage, profile: TargetProfile) -> PackedCode:
    """Check in-packet code with :func:`~dpfc.isa.placement.check_image` and pack it into code options;
    raises :class:`EncodingError` on the first violation."""
    problems = check_image(code, profile)
    if problems:
        stage, index, v = problems[0]
        raise EncodingError(f"{stage_name(stage)} bundle {index}: {v.message}", v.code)
    return pack_code(code, profile)


def _header_option(
    header: SwitchVMHeader, depth: int, n_code: int, n_stack: int, version: int
) -> bytes:
    """The header option (option header included) of a checked header."""
    head = OPTION_HEAD.pack(
        option_class=OPTION_CLASS,
        option_type=TYPE_HEADER,
        length=HEADER_DATA_LEN // OPTION_WORD_BYTES,
    )
    return head + HEADER_OPTION.pack(
        version=version,
        flags=header.flags,
        gas=header.gas,
        stack_depth=depth,
        n_code_opts=n_code,
        n_stack_opts=n_stack,
        app_id=header.app_id,
        dpf_ptr=_ptr(header.dpf_ptr),
        egress_ptr=_ptr(header.egress_ptr),
    )


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
            raise EncodingError(f"{name}: {problem}", codes.ENCODE_BAD_POINTER)
    stack = header.stack
    depth = len(stack)
    if depth > profile.stack_max_depth:
        raise EncodingError(
            f"stack of {depth} entries exceeds {profile.name}'s depth of {profile.stack_max_depth}",
            codes.ENCODE_STACK_TOO_DEEP,
        )
    # min/max in C first; the loop (which names the first bad value) only when one is bad
    if stack and not (min(stack) >= 0 and max(stack) <= _ENTRY.mask):
        for value in stack:
            if not 0 <= value <= _ENTRY.mask:
                raise EncodingError(
                    f"stack value {value} does not fit in {_ENTRY.width} bits",
                    codes.ENCODE_HEADER_VALUE_RANGE,
                )
    if not 0 <= header.app_id <= _APP_ID.mask:
        raise EncodingError(
            f"app id {header.app_id} does not fit in {_APP_ID.width} bits",
            codes.ENCODE_HEADER_VALUE_RANGE,
        )
    if not 0 <= header.gas <= profile.max_gas:
        raise EncodingError(
            f"gas {header.gas} out of range 0..{profile.max_gas}", codes.ENCODE_HEADER_VALUE_RANGE
        )
    if not 0 <= header.flags <= _FLAGS.mask:
        raise EncodingError(
            f"flags must fit in {_FLAGS.width} bits", codes.ENCODE_HEADER_VALUE_RANGE
        )
    stack_chunks = [
        stack[i : i + STACK_ENTRIES_PER_OPTION] for i in range(0, depth, STACK_ENTRIES_PER_OPTION)
    ]
    code_options = packed.options
    if len(code_options) > _N_CODE.mask or len(stack_chunks) > _N_STACK.mask:
        raise EncodingError(
            f"more than {_N_CODE.mask} code or stack options", codes.ENCODE_TOO_MANY_OPTIONS
        )
    head = _header_option(header, depth, len(code_options), len(stack_chunks), profile.code_format)
    code_parts = [geneve_option(TYPE_CODE, payload) for payload in code_options]
    try:  # the values are checked above: struct packs exactly what to_bytes would
        stack_parts = [
            geneve_option(TYPE_STACK, struct.pack(f"!{len(chunk)}{_ENTRY_CODE}", *chunk))
            for chunk in stack_chunks
        ]
    except struct.error:  # not ints: raise what the plain conversion always raised
        stack_parts = [
            geneve_option(TYPE_STACK, b"".join(v.to_bytes(STACK_ENTRY.size, "big") for v in chunk))
            for chunk in stack_chunks
        ]
    if profile.code_format == TAGGED_FORMAT:  # the stack at a fixed offset, after the header
        data = b"".join([head, *stack_parts, *code_parts])
    else:
        data = b"".join([head, *code_parts, *stack_parts])
    code_bytes = sum(len(p) + OPTION_HEAD.size for p in code_options)
    stack_bytes = STACK_ENTRY.size * depth + OPTION_HEAD.size * len(stack_chunks)
    if len(data) > OPTIONS_MAX:
        raise EncodingError(
            f"SwitchVM options take {len(data)} bytes, over the Geneve limit of {OPTIONS_MAX} "
            f"(header {HEADER_OPTION_BYTES}, code {code_bytes}, stack {stack_bytes})",
            codes.ENCODE_OPTIONS_TOO_LARGE,
        )
    return EncodedOptions(
        data=data,
        header_bytes=HEADER_OPTION_BYTES,
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
    if depth > profile.stack_max_depth or depth > _DEPTH.mask:
        return None
    if stack and not (min(stack) >= 0 and max(stack) <= _ENTRY.mask):
        return None
    chunks = []
    for i in range(0, depth, STACK_ENTRIES_PER_OPTION):
        chunk = stack[i : i + STACK_ENTRIES_PER_OPTION]
        try:
            chunks.append(
                geneve_option(TYPE_STACK, struct.pack(f"!{len(chunk)}{_ENTRY_CODE}", *chunk))
            )
        except struct.error:  # not ints
            return None
    if len(chunks) > _N_STACK.mask:
        return None
    head = bytearray(encoded.data[: encoded.header_bytes])
    head[_DEPTH_AT] = depth
    counts = head[_N_STACK_AT] & ~(_N_STACK.mask << _N_STACK.low)
    head[_N_STACK_AT] = counts | (len(chunks) << _N_STACK.low)
    if profile.code_format == TAGGED_FORMAT:
        code = encoded.data[encoded.header_bytes + encoded.stack_bytes :]
        out = b"".join([head, *chunks, code])
    else:
        code = encoded.data[encoded.header_bytes : encoded.header_bytes + encoded.code_bytes]
        out = b"".join([head, code, *chunks])
    return out if len(out) <= OPTIONS_MAX else None
