"""Deparsing: the outgoing bytes of a packet after SwitchVM has run.

The switch rewrites only what SwitchVM owns: its Geneve options (new stack, DPF pointer,
gas; the code options removed after HDR_MOD), the lengths that depend on them (Geneve
option length, UDP length, IPv4 total length and header checksum; the outer UDP checksum
is set to 0, which IPv4 allows), and the outer addresses that steering rewrites
(return-to-sender swaps them; a forwarding entry may set the destination). Options of
other classes keep their order; the inner frame is copied unchanged.
"""

from __future__ import annotations

from dpfc.encoding.header import OPTION_CLASS, OPTIONS_MAX, split_options
from dpfc.packet.wire import ParsedPacket

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
        geneve = bytearray(frame[udp + 8 : udp + 16])
        geneve[0] = (geneve[0] & 0xC0) | (len(options) // 4)
        payload = bytes(geneve) + options + parsed.inner
        udp_header = bytearray(frame[udp : udp + 8])
        udp_header[4:6] = (8 + len(payload)).to_bytes(2, "big")
        udp_header[6:8] = b"\x00\x00"
        ip_header = bytearray(frame[start:udp])
        ip_header[2:4] = (ihl + 8 + len(payload)).to_bytes(2, "big")
        frame = frame[:start] + _with_checksum(ip_header) + bytes(udp_header) + payload
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
    pieces: list[bytes] = []
    placed = False
    for _, opt_class, opt_type, data in split_options(parsed.options):
        if opt_class == OPTION_CLASS:
            if not placed:
                pieces.append(ours)
                placed = True
            continue
        pieces.append(opt_class.to_bytes(2, "big") + bytes([opt_type, len(data) // 4]) + data)
    if not placed:
        pieces.insert(0, ours)
    options = b"".join(pieces)
    if len(options) > OPTIONS_MAX:
        raise DeparseError(
            f"the outgoing Geneve options take {len(options)} bytes, over the limit of {OPTIONS_MAX}"
        )
    return options


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
