"""Strict, bounds-checked parsing of SwitchVM packets (no scapy: this is the switch's view).

A SwitchVM packet is Ethernet / IPv4 / UDP (destination port 6081) / Geneve (VNI = tenant
id) / options / inner frame. :func:`parse_packet` checks every length field against the
bytes actually present, so a malformed packet is rejected with a reason and an offset and
can never make the parser read out of bounds or loop (each step consumes at least 4 bytes).
A well-formed packet takes a fast path of plain indexing; any other takes the checked
reader, so that the error (message, offset, code) is always the checked reader's.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from dpfc.catalog import codes
from dpfc.encoding import (
    OPTION_CLASS,
    ByteReader,
    DecodeError,
    SwitchVMHeader,
    decode_options,
    split_options,
)
from dpfc.target import TargetProfile

GENEVE_PORT = 6081
ETHERTYPE_IPV4 = 0x0800
ETHERTYPE_VLAN = 0x8100
ETHERTYPE_TEB = 0x6558  # Transparent Ethernet Bridging: the inner frame is Ethernet
ETHER_HEADER = 14
VLAN_TAG = 4  # an 802.1Q tag
IPV4_MIN_HEADER = 20
UDP_HEADER = 8
GENEVE_HEADER = 8


@dataclass(frozen=True)
class ParsedPacket:
    eth_dst: bytes
    eth_src: bytes
    vlan: int | None
    ip_src: bytes
    ip_dst: bytes
    ip_ttl: int
    udp_sport: int
    tenant_id: int
    geneve_protocol: int
    options_offset: int
    options: bytes
    header: SwitchVMHeader | None  # None: no SwitchVM option in the Geneve header
    inner: bytes
    inner_offset: int


OptionsDecoder = Callable[[bytes, TargetProfile, int], SwitchVMHeader]


def parse_packet(
    data: bytes, profile: TargetProfile, *, decode: OptionsDecoder | None = None
) -> ParsedPacket:
    """Parse a whole SwitchVM packet; raises :class:`DecodeError` (with offset) if malformed.

    ``decode`` decodes the options area (a memoised :func:`decode_options` in the simulator).
    """
    fast = _parse_well_formed(data, profile, decode)
    if fast is not None:
        return fast
    return _parse_checked(data, profile, decode)


def ipv4_in_ethernet(data: bytes) -> tuple[int, int, int | None] | None:
    """Where the IPv4 header of the Ethernet frame ``data`` starts, its length (IHL x 4) and
    the 802.1Q VLAN id (None untagged): Ethernet with at most one tag, EtherType IPv4,
    version 4, IHL at least 5 and the whole header present. None when any of that fails;
    plain indexing that never reads outside ``data``."""
    size = len(data)
    if size < ETHER_HEADER:
        return None
    ethertype = (data[12] << 8) | data[13]
    vlan = None
    ip_start = ETHER_HEADER
    if ethertype == ETHERTYPE_VLAN:
        if size < ETHER_HEADER + VLAN_TAG:
            return None
        vlan = ((data[14] << 8) | data[15]) & 0x0FFF
        ethertype = (data[16] << 8) | data[17]
        ip_start = ETHER_HEADER + VLAN_TAG
    if ethertype != ETHERTYPE_IPV4 or size < ip_start + IPV4_MIN_HEADER:
        return None
    version_ihl = data[ip_start]
    ihl = (version_ihl & 0xF) * 4
    if version_ihl >> 4 != 4 or ihl < IPV4_MIN_HEADER or size < ip_start + ihl:
        return None
    return ip_start, ihl, vlan


def _parse_well_formed(
    data: bytes, profile: TargetProfile, decode: OptionsDecoder | None
) -> ParsedPacket | None:
    """The fast path of :func:`parse_packet` (the simulator parses every packet, and most
    are well formed): plain indexing, valid only when every check of
    :func:`_parse_checked` up to the options passes; None as soon as one fails, so that
    the checked parser raises its error (message, offset and code) exactly as before.
    The options area is split and decoded by the same calls as in the checked parser,
    with the same arguments, so their errors are the same too."""
    size = len(data)
    found = ipv4_in_ethernet(data)
    if found is None:
        return None
    ip_start, ihl, vlan = found
    total_length = (data[ip_start + 2] << 8) | data[ip_start + 3]
    if (
        total_length < ihl + UDP_HEADER
        or ip_start + total_length > size
        or data[ip_start + 9] != 17
    ):
        return None
    udp_start = ip_start + ihl  # total_length >= ihl + 8: the UDP header is present
    udp_length = (data[udp_start + 4] << 8) | data[udp_start + 5]
    end = udp_start + udp_length
    if (
        (data[udp_start + 2] << 8) | data[udp_start + 3] != GENEVE_PORT
        or udp_length < UDP_HEADER + GENEVE_HEADER
        or end > ip_start + total_length
    ):
        return None
    geneve_start = udp_start + UDP_HEADER  # udp_length >= 16: the Geneve header is present
    first = data[geneve_start]
    options_offset = geneve_start + GENEVE_HEADER
    inner_offset = options_offset + (first & 0x3F) * 4
    if first >> 6 != 0 or inner_offset > end:
        return None
    options = data[options_offset:inner_offset]
    ours = [o for o in split_options(options, options_offset) if o[1] == OPTION_CLASS]
    decoder = decode_options if decode is None else decode
    header = decoder(options, profile, options_offset) if ours else None
    return ParsedPacket(
        eth_dst=data[0:6],
        eth_src=data[6:12],
        vlan=vlan,
        ip_src=data[ip_start + 12 : ip_start + 16],
        ip_dst=data[ip_start + 16 : ip_start + 20],
        ip_ttl=data[ip_start + 8],
        udp_sport=(data[udp_start] << 8) | data[udp_start + 1],
        tenant_id=int.from_bytes(data[geneve_start + 4 : geneve_start + 7], "big"),
        geneve_protocol=(data[geneve_start + 2] << 8) | data[geneve_start + 3],
        options_offset=options_offset,
        options=options,
        header=header,
        inner=data[inner_offset:end],
        inner_offset=inner_offset,
    )


def _parse_checked(
    data: bytes, profile: TargetProfile, decode: OptionsDecoder | None
) -> ParsedPacket:
    """:func:`parse_packet` with every read bounds-checked: the path of malformed packets."""
    r = ByteReader(data)
    eth_dst = r.take(6, "Ethernet destination")
    eth_src = r.take(6, "Ethernet source")
    ethertype = r.u16("EtherType")
    vlan = None
    if ethertype == ETHERTYPE_VLAN:
        vlan = r.u16("802.1Q tag") & 0x0FFF
        ethertype = r.u16("EtherType")
    if ethertype != ETHERTYPE_IPV4:
        raise DecodeError(
            f"not IPv4 (EtherType {ethertype:#06x})", r.offset - 2, codes.PACKET_NOT_IPV4
        )
    ip_start = r.offset
    version_ihl = r.u8("IPv4 header")
    if version_ihl >> 4 != 4:
        raise DecodeError(
            f"IP version {version_ihl >> 4}, expected 4", ip_start, codes.PACKET_IP_VERSION
        )
    ihl = (version_ihl & 0xF) * 4
    if ihl < IPV4_MIN_HEADER:
        raise DecodeError(
            f"IPv4 header length {ihl} is below 20", ip_start, codes.PACKET_IP_HEADER_LENGTH
        )
    r.take(1, "IPv4 header")
    total_length = r.u16("IPv4 total length")
    r.take(4, "IPv4 header")
    ttl = r.u8("IPv4 TTL")
    protocol = r.u8("IPv4 protocol")
    r.take(2, "IPv4 checksum")
    ip_src = r.take(4, "IPv4 source")
    ip_dst = r.take(4, "IPv4 destination")
    r.take(ihl - IPV4_MIN_HEADER, "IPv4 options")
    if total_length < ihl + UDP_HEADER:
        raise DecodeError(
            f"IPv4 total length {total_length} too small for UDP",
            ip_start + 2,
            codes.PACKET_IP_TOTAL_LENGTH,
        )
    if ip_start + total_length > len(data):
        raise DecodeError(
            f"IPv4 total length {total_length} exceeds the {len(data) - ip_start} bytes present",
            ip_start + 2,
            codes.PACKET_IP_TOTAL_LENGTH,
        )
    if protocol != 17:
        raise DecodeError(f"not UDP (IP protocol {protocol})", ip_start + 9, codes.PACKET_NOT_UDP)
    udp_start = r.offset
    sport = r.u16("UDP source port")
    dport = r.u16("UDP destination port")
    udp_length = r.u16("UDP length")
    r.take(2, "UDP checksum")
    if dport != GENEVE_PORT:
        raise DecodeError(
            f"UDP destination port {dport} is not Geneve (6081)",
            udp_start + 2,
            codes.PACKET_NOT_GENEVE_PORT,
        )
    if udp_length < UDP_HEADER + GENEVE_HEADER:
        raise DecodeError(
            f"UDP length {udp_length} leaves no room for the 8-byte Geneve header",
            udp_start + 4,
            codes.PACKET_UDP_LENGTH,
        )
    if udp_start + udp_length > ip_start + total_length:
        raise DecodeError(
            f"UDP length {udp_length} runs past the end of the IPv4 packet "
            f"({ip_start + total_length - udp_start} bytes from the UDP header on)",
            udp_start + 4,
            codes.PACKET_UDP_LENGTH,
        )
    end = udp_start + udp_length
    geneve_start = r.offset
    first = r.u8("Geneve header")
    version, opt_words = first >> 6, first & 0x3F
    if version != 0:
        raise DecodeError(
            f"Geneve version {version}, expected 0", geneve_start, codes.PACKET_GENEVE_VERSION
        )
    r.u8("Geneve flags")
    protocol_type = r.u16("Geneve protocol type")
    vni = int.from_bytes(r.take(3, "Geneve VNI"), "big")
    r.u8("Geneve reserved")
    options_offset = r.offset
    if options_offset + opt_words * 4 > end:
        raise DecodeError(
            f"Geneve options length {opt_words * 4} runs past the UDP payload "
            f"({end - options_offset} bytes follow the Geneve header)",
            geneve_start,
            codes.PACKET_GENEVE_OPTIONS_LENGTH,
        )
    options = r.take(opt_words * 4, "Geneve options")
    ours = [o for o in split_options(options, options_offset) if o[1] == OPTION_CLASS]
    decoder = decode_options if decode is None else decode
    header = decoder(options, profile, options_offset) if ours else None
    inner = data[r.offset : end]
    return ParsedPacket(
        eth_dst=eth_dst,
        eth_src=eth_src,
        vlan=vlan,
        ip_src=ip_src,
        ip_dst=ip_dst,
        ip_ttl=ttl,
        udp_sport=sport,
        tenant_id=vni,
        geneve_protocol=protocol_type,
        options_offset=options_offset,
        options=options,
        header=header,
        inner=inner,
        inner_offset=r.offset,
    )
