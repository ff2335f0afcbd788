"""Inner (tenant) frames for the header-field tests: one of each case the rules of
``dpfc.packet.header_fields`` (docs/isa.md §4) tell apart, built with scapy, and the
values of the fields each must give, stated here independently of the code under test.

:data:`CASES` maps a name to (frame, expected fields). The conformance vectors
(``tests/conformance/header_vectors.py``), the unit tests (``tests/test_header_fields.py``)
and the JIT comparison use them.
"""

from __future__ import annotations

from typing import Any

from scapy.layers.inet import ICMP, IP, TCP, UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import ARP, Dot1Q, Ether
from scapy.packet import Raw

ETH = Ether(src="02:00:00:00:01:01", dst="02:00:00:00:01:02")
NO_FIELDS = {
    "ipv4_src": 0,
    "ipv4_dst": 0,
    "ip_proto": 0,
    "dscp": 0,
    "ttl": 0,
    "l4_src": 0,
    "l4_dst": 0,
}


def fields(
    src: int, dst: int, proto: int, tos: int, ttl: int, ports: tuple[int, int] | None
) -> dict[str, int]:
    sport, dport = ports if ports is not None else (0, 0)
    return {
        "ipv4_src": src,
        "ipv4_dst": dst,
        "ip_proto": proto,
        "dscp": tos >> 2,
        "ttl": ttl,
        "l4_src": sport,
        "l4_dst": dport,
    }


def _ip(**kwargs: Any) -> IP:
    return IP(src="192.168.7.9", dst="10.20.30.40", **kwargs)


SRC, DST = 0xC0A8_0709, 0x0A14_1E28
UDP_FRAME = bytes(ETH / _ip(tos=0xB8, ttl=17) / UDP(sport=5353, dport=53) / Raw(b"query"))
TCP_FRAME = bytes(ETH / _ip(ttl=255) / TCP(sport=443, dport=51000) / Raw(b"x" * 9))
OPTIONS = bytes(
    ETH / _ip(ttl=9, options=b"\x94\x04\x00\x00\x01\x01\x01\x00") / UDP(sport=1, dport=65535)
)
LATER_FRAGMENT = bytes(ETH / _ip(frag=10, proto=17, ttl=64) / Raw(b"\x12\x34\x56\x78rest"))
FIRST_FRAGMENT = bytes(ETH / _ip(flags="MF", ttl=64) / UDP(sport=7, dport=8) / Raw(b"more"))
# an IPv4 header announcing 8 option bytes of which the frame holds 4
SHORT_OPTIONS = bytes(ETH / _ip(ttl=5, proto=17, ihl=7, options=b"\x01\x01\x01\x01"))[:38]

CASES: dict[str, tuple[bytes, dict[str, int]]] = {
    "udp": (UDP_FRAME, fields(SRC, DST, 17, 0xB8, 17, (5353, 53))),
    "tcp": (TCP_FRAME, fields(SRC, DST, 6, 0, 255, (443, 51000))),
    "icmp": (bytes(ETH / _ip(tos=0x03) / ICMP()), fields(SRC, DST, 1, 0x03, 64, None)),
    "ip_options": (OPTIONS, fields(SRC, DST, 17, 0, 9, (1, 65535))),
    "later_fragment": (LATER_FRAGMENT, fields(SRC, DST, 17, 0, 64, None)),
    "first_fragment": (FIRST_FRAGMENT, fields(SRC, DST, 17, 0, 64, (7, 8))),
    "vlan": (
        bytes(ETH / Dot1Q(vlan=5) / _ip(ttl=2) / TCP(sport=80, dport=8080)),
        fields(SRC, DST, 6, 0, 2, (80, 8080)),
    ),
    "ports_cut": (
        bytes(ETH / _ip(ttl=1) / UDP(sport=9, dport=9))[:36],
        fields(SRC, DST, 17, 0, 1, None),
    ),
    "ipv6": (bytes(ETH / IPv6() / UDP(sport=1, dport=2)), NO_FIELDS),
    "arp": (bytes(ETH / ARP()), NO_FIELDS),
    "ipv4_cut": (bytes(ETH / _ip() / UDP())[:30], NO_FIELDS),
    "options_cut": (SHORT_OPTIONS, NO_FIELDS),
    "version_6_as_ipv4": (bytes(ETH / _ip(version=6) / UDP()), NO_FIELDS),
    "ihl_4": (bytes(ETH / _ip(ihl=4) / UDP()), NO_FIELDS),
    "ethernet_only": (bytes(ETH / Raw(b""))[:12] + b"\x08\x00", NO_FIELDS),
    "vlan_cut": (bytes(ETH / Dot1Q(vlan=5))[:16], NO_FIELDS),
    "short": (b"\x02" * 13, NO_FIELDS),
    "empty": (b"", NO_FIELDS),
}
