"""Deparsing: the outgoing bytes of a packet after SwitchVM has run.

The switch rewrites only what SwitchVM owns: its Geneve options (new stack, DPF pointer,
gas; the code options removed after HDR_MOD), the lengths that depend on them (Geneve
option length, UDP length, IPv4 total length and header checksum; the outer UDP checksum
is set to 0, which IPv4 allows), and the outer addresses that steering rewrites
(return-to-sender swaps them; a forwarding entry may set the destination). Options of
other classes keep their order; the inner frame is copied unchanged.

:class:`OptionsCodec` (one per target profile, :func:`codec_for`) is how both pipelines
decode and encode SwitchVM options: memoised, since a switch sees the same options again
and again, with the same results and errors as :func:`decode_options` and
:func:`encode_options`.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache, partial

from dpfc.encoding import (
    OPTION_CLASS,
    OPTIONS_MAX,
    EncodedOptions,
    PackedCode,
    SwitchVMHeader,
    decode_options,
    encode_options,
    pack_checked,
    restack,
    split_options,
)
from dpfc.isa import PC, CodeImage
from dpfc.packet import ParsedPacket
from dpfc.target import TargetProfile

ETHERTYPE_VLAN = b"\x81\x00"
ETHERTYPE_IPV4 = b"\x08\x00"


class DeparseError(ValueError):
    """The outgoing packet cannot be formed (e.g. its options exceed Geneve's limit)."""


def ip_start(frame: bytes) -> int:
    return 18 if frame[12:14] == ETHERTYPE_VLAN else 14


def plain_ipv4_destination(frame: bytes) -> bytes | None:
    """The outer IPv4 destination of any frame, or None when it is not IPv4."""
    if len(frame) < 14:
        return None
    start = ip_start(frame)
    if frame[start - 2 : start] != ETHERTYPE_IPV4 or len(frame) < start + 20:
        return None
    if frame[start] >> 4 != 4:
        return None
    return bytes(frame[start + 16 : start + 20])


def ipv4_checksum(header: bytes) -> int:
    if len(header) % 2 == 0:  # every IPv4 header: its 16-bit words unpacked in C
        total: int = sum(struct.unpack(f"!{len(header) // 2}H", header))
    else:  # not a header (IndexError on the last byte, as the word loop always raised)
        total = 0
        for i in range(0, len(header), 2):
            total += (header[i] << 8) | header[i + 1]
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def _with_checksum(ip_header: bytearray) -> bytes:
    ip_header[10:12] = b"\x00\x00"
    ip_header[10:12] = ipv4_checksum(bytes(ip_header)).to_bytes(2, "big")
    return bytes(ip_header)


def rebuild_frame(
    frame: bytes,
    parsed: ParsedPacket | None,
    switchvm_options: bytes | None,
    *,
    ip_dst: bytes | None = None,
    eth_dst: bytes | None = None,
) -> bytes:
    """``frame`` with its SwitchVM options replaced (when ``parsed`` and the new options are
    given) and its outer destination rewritten (when ``ip_dst``/``eth_dst`` are given)."""
    start = ip_start(frame)
    ihl = (frame[start] & 0xF) * 4
    udp = start + ihl
    if parsed is not None and switchvm_options is not None:
        options = _merge_options(parsed, switchvm_options)
        inner = parsed.inner
        udp_length = 8 + 8 + len(options) + len(inner)  # UDP and Geneve headers, options, inner
        ip_header = bytearray(frame[start:udp])
        ip_header[2:4] = (ihl + udp_length).to_bytes(2, "big")
        # one join of the pieces (this runs for every packet a DPF sends)
        frame = b"".join(
            (
                frame[:start],
                _with_checksum(ip_header),
                frame[udp : udp + 4],  # UDP ports
                udp_length.to_bytes(2, "big"),
                b"\x00\x00",  # UDP checksum: none
                bytes([(frame[udp + 8] & 0xC0) | (len(options) // 4)]),  # Geneve Opt Len
                frame[udp + 9 : udp + 16],
                options,
                inner,
            )
        )
    if ip_dst is not None or eth_dst is not None:
        out = bytearray(frame)
        if eth_dst is not None:
            out[0:6] = eth_dst
        if ip_dst is not None:
            ip_header = bytearray(out[start:udp])
            ip_header[16:20] = ip_dst
            out[start:udp] = _with_checksum(ip_header)
        frame = bytes(out)
    return frame


def _merge_options(parsed: ParsedPacket, ours: bytes) -> bytes:
    before, after = _other_options(parsed.options)
    options = before + ours + after
    if len(options) > OPTIONS_MAX:
        raise DeparseError(
            f"the outgoing Geneve options take {len(options)} bytes, over the limit of {OPTIONS_MAX}"
        )
    return options


@lru_cache(maxsize=4096)
def _other_options(options: bytes) -> tuple[bytes, bytes]:
    """The options of other classes that go before and after the SwitchVM options: before
    the first SwitchVM option they keep their place, the rest follow (all of them when the
    packet had none). A pure function of the options area, which a flow repeats: memoised."""
    before: list[bytes] = []
    after: list[bytes] = []
    pieces = before
    for _, opt_class, opt_type, data in split_options(options):
        if opt_class == OPTION_CLASS:
            pieces = after
            continue
        pieces.append(opt_class.to_bytes(2, "big") + bytes([opt_type, len(data) // 4]) + data)
    if pieces is before:  # no SwitchVM option: ours go first
        return b"", b"".join(before)
    return b"".join(before), b"".join(after)


def swap_addresses(frame: bytes) -> bytes:
    """Return-to-sender: swap the outer MAC and IPv4 addresses (the checksum is unchanged,
    since a one's-complement sum does not depend on the order of its words)."""
    out = bytearray(frame)
    out[0:6], out[6:12] = frame[6:12], frame[0:6]
    start = ip_start(frame)
    out[start + 12 : start + 16], out[start + 16 : start + 20] = (
        frame[start + 16 : start + 20],
        frame[start + 12 : start + 16],
    )
    return bytes(out)


# -- memoised options codec ------------------------------------------------------------------
_EMPTY_CODE = CodeImage()
_CACHE_SIZE = 4096  # entries of each table below; a full table is emptied (no LRU bookkeeping)
_STACKS_PER_HEADER = 64


class OptionsCodec:
    """Memoised :func:`decode_options` and :func:`encode_options` for one target profile.

    Both are pure functions of their arguments, and a switch sees the same options (and
    sends the same code) again and again. ``functools.lru_cache`` over the plain functions
    would hash the profile and the whole header (its code image, bundle by bundle) for
    every packet, which cost more than the rest of a pass; here the profile is fixed and
    the code is known by identity: the header a packet decodes to is memoised, so the code
    image a DPF keeps is the same object from packet to packet. Errors are never memoised:
    the call runs again and raises again.
    """

    def __init__(self, profile: TargetProfile) -> None:
        self.profile = profile
        self._decode: Callable[[bytes, int], SwitchVMHeader] = lru_cache(maxsize=_CACHE_SIZE)(
            partial(_decode_at, profile)
        )
        self._packed: dict[int, tuple[CodeImage, PackedCode]] = {}
        self._encoded: dict[
            tuple[int, int, PC | None, PC | None, int, int], tuple[CodeImage, _Encoded]
        ] = {}

    def decode(self, options: bytes, profile: TargetProfile, base_offset: int) -> SwitchVMHeader:
        """:func:`decode_options` (the ``decode`` of :func:`~dpfc.packet.wire.parse_packet`)."""
        assert profile is self.profile
        return self._decode(options, base_offset)

    def encode(self, header: SwitchVMHeader) -> bytes:
        """``encode_options(header, profile).data``; raises its :class:`EncodingError`."""
        code = header.code
        # an empty image is the common HDR_MOD / in-switch case: one key for all of them
        token = 0 if code == _EMPTY_CODE else id(code)
        key = (token, header.app_id, header.dpf_ptr, header.egress_ptr, header.gas, header.flags)
        hit = self._encoded.get(key)
        # the entry holds its code image, so the id cannot name another object meanwhile
        if hit is not None and (token == 0 or hit[0] is code):
            before = hit[1]
            data = before.by_stack.get(header.stack)
            if data is not None:
                return data
            # the same header but for the stack (a counter's value, say): swap the stack
            data = restack(before.encoded, header.stack, self.profile)
            if data is not None:
                if len(before.by_stack) >= _STACKS_PER_HEADER:
                    before.by_stack.clear()
                before.by_stack[header.stack] = data
                return data
        encoded = encode_options(header, self.profile, packed=self._pack(code, token))
        if len(self._encoded) >= _CACHE_SIZE:
            self._encoded.clear()
        self._encoded[key] = (code, _Encoded(encoded, {header.stack: encoded.data}))
        return encoded.data

    def _pack(self, code: CodeImage, token: int) -> PackedCode:
        """``pack_checked(code)``, once per code image (what ``encode_options`` does first)."""
        hit = self._packed.get(token)
        if hit is not None and (token == 0 or hit[0] is code):
            return hit[1]
        packed = pack_checked(code, self.profile)
        if len(self._packed) >= _CACHE_SIZE:
            self._packed.clear()
        self._packed[token] = (code, packed)
        return packed


@dataclass(frozen=True)
class _Encoded:
    """The options of one key of :meth:`OptionsCodec.encode` (a header but for its stack),
    and the options of the stacks seen with it (a few flows' replies, say)."""

    encoded: EncodedOptions
    by_stack: dict[tuple[int, ...], bytes]


def _decode_at(profile: TargetProfile, options: bytes, base_offset: int) -> SwitchVMHeader:
    return decode_options(options, profile, base_offset)


_CODECS: dict[int, OptionsCodec] = {}


def codec_for(profile: TargetProfile) -> OptionsCodec:
    """The :class:`OptionsCodec` of ``profile`` (found by identity: hashing a profile costs
    microseconds, and a pipe's profile is one object)."""
    codec = _CODECS.get(id(profile))
    if codec is None or codec.profile is not profile:
        if len(_CODECS) >= 64:  # profiles made on the fly (tests): keep the table small
            _CODECS.clear()
        codec = _CODECS[id(profile)] = OptionsCodec(profile)
    return codec
