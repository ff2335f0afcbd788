"""The SwitchVM Geneve options' format: layout constants, the header model, option framing.

A SwitchVM packet carries, in its Geneve header (RFC 8926), a sequence of options of class
:data:`OPTION_CLASS` (experimental range), each an ``OPTION_HEAD`` and its data (the tables
of :mod:`dpfc.encoding.layouts`)::

    header option (type 0x01): HEADER_OPTION, 12 bytes: version:4 flags:4 | gas:8 |
        stack_depth:8 | n_code_opts:4 n_stack_opts:4 | app_id:32 | dpf_ptr:16 | egress_ptr:16
    code options  (type 0x02): see :mod:`dpfc.encoding.code`
    stack options (type 0x03): STACK_ENTRY s (32 bits), top of stack first, 31 per option

The header option comes first, then the code options, then the stack options (format
version 1); in version 2 the stack options come before the code options. The header's
``version`` is the profile's ``code_format``; the counts in the header are the parser's
hints. A DPF pointer of 0xFFFF means "none" (run the
tenant's default DPF). All options together must fit the 252 bytes Geneve allows.

This module holds what both directions share: the constants above, :class:`SwitchVMHeader`
(what a packet says) and :class:`EncodedOptions` (its bytes and their accounting), the
Geneve option framing (:func:`geneve_option` builds one option, :func:`split_options`
splits an area into options without interpreting them) and :func:`pointer_problem`, the
one rule for DPF and egress pointers. It does not check or encode a header
(:mod:`.encode`) nor decode one (:mod:`.decode`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache

from dpfc.catalog import codes
from dpfc.encoding.errors import ByteReader, DecodeError
from dpfc.encoding.layouts import (
    HEADER_OPTION,
    OPTION_DATA_MAX,
    OPTION_HEAD,
    OPTION_WORD_BYTES,
)
from dpfc.isa import PC, CodeImage
from dpfc.target import TargetProfile

OPTION_CLASS = 0xFFF0  # RFC 8926 §8: 0xFFF0..0xFFFF are for experimental use
TYPE_HEADER = 0x01
TYPE_CODE = 0x02
TYPE_STACK = 0x03
OPTION_TYPE_NAMES = {
    TYPE_HEADER: "SwitchVM header",
    TYPE_CODE: "SwitchVM code",
    TYPE_STACK: "SwitchVM stack",
}
HEADER_DATA_LEN = HEADER_OPTION.size
HEADER_OPTION_BYTES = OPTION_HEAD.size + HEADER_DATA_LEN  # the header option whole
PTR_NONE = 0xFFFF


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


def geneve_option(opt_type: int, data: bytes) -> bytes:
    """One SwitchVM option of type ``opt_type``: its option header, then ``data``."""
    assert len(data) % OPTION_WORD_BYTES == 0 and len(data) <= OPTION_DATA_MAX
    return _option_head(opt_type, len(data) // OPTION_WORD_BYTES) + data


@cache  # a few types, 32 lengths; the simulator builds options per packet
def _option_head(opt_type: int, words: int) -> bytes:
    return OPTION_HEAD.pack(option_class=OPTION_CLASS, option_type=opt_type, length=words)


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


# The fast path of split_options reads these bytes and bits of an option header directly.
_CLASS, _TYPE = OPTION_HEAD.field("option_class"), OPTION_HEAD.field("option_type")
_RESERVED, _LENGTH = OPTION_HEAD.field("reserved"), OPTION_HEAD.field("length")
assert _TYPE.whole_bytes and _TYPE.nbytes == 1 and _CLASS.whole_bytes
assert _LENGTH.nbytes == 1 and _RESERVED.byte == _LENGTH.byte
_TYPE_AT = _TYPE.byte
_LENGTH_AT, _LENGTH_LOW, _LENGTH_MASK = _LENGTH.byte, _LENGTH.low, _LENGTH.mask
_RESERVED_BITS = _RESERVED.mask << _RESERVED.low  # in the length field's byte

Option = tuple[int, int, int, bytes]  # (offset, class, type, data) as split_options gives


def split_options(data: bytes, base_offset: int = 0) -> list[Option]:
    """Split a Geneve options area into (offset, class, type, data) without interpreting it."""
    # Fast path (the simulator splits every packet's options): plain indexing while every
    # option is well formed; anything else is left to the checked reader below, which
    # raises the error (message, offset, code) of the first problem.
    out: list[Option] = []
    pos, size = 0, len(data)
    head = OPTION_HEAD.size
    while pos + head <= size:
        length_byte = data[pos + _LENGTH_AT]
        end = pos + head + ((length_byte >> _LENGTH_LOW) & _LENGTH_MASK) * OPTION_WORD_BYTES
        if length_byte & _RESERVED_BITS or end > size:
            break
        out.append(
            (
                base_offset + pos,
                int.from_bytes(data[pos + _CLASS.byte : pos + _CLASS.end], "big"),
                data[pos + _TYPE_AT],
                data[pos + head : end],
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
        head = OPTION_HEAD.read(reader)
        opt_class, opt_type = head["option_class"], head["option_type"]
        if head["reserved"]:
            raise DecodeError(
                "reserved bits of a Geneve option header are set",
                offset + _RESERVED.byte,
                codes.DECODE_OPTION_RESERVED_BITS,
            )
        payload = reader.take(
            head["length"] * OPTION_WORD_BYTES,
            f"data of Geneve option {opt_class:#06x}/{opt_type:#04x}",
        )
        out.append((offset, opt_class, opt_type, payload))
    return out
