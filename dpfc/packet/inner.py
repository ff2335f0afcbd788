"""The header fields of the tenant's packet (the inner frame) that ``LOAD_MD`` exposes.

Contract: :func:`header_fields` takes the inner frame of a parsed SwitchVM packet
(``ParsedPacket.inner``: the bytes after the Geneve options up to the end of the UDP
payload) and returns the value of every header field of ``dpfc.target.HEADER_METADATA``
by name. The rules (docs/isa.md §4), which the simulator, its JIT and the generated P4
parser all follow:

* the inner frame is Ethernet: 14 bytes, with at most one 802.1Q tag (4 more bytes) as in
  the outer frame; its EtherType must be 0x0800;
* the IPv4 header must be whole in the frame (20 bytes, version 4, IHL at least 5, and the
  IHL's options present); then ``ipv4_src``, ``ipv4_dst``, ``ip_proto``, ``dscp`` (the TOS
  byte's upper 6 bits) and ``ttl`` are its fields;
* ``l4_src`` and ``l4_dst`` are the first two 16-bit words after the IPv4 header when the
  protocol is TCP (6) or UDP (17), the fragment offset is 0 (a later fragment carries no
  ports) and those 4 bytes are in the frame;
* a field whose header is missing (not IPv4, a short frame, no ports) is 0.

The total-length and checksum fields are not checked: the fields are read as the parser
finds them. The function never reads outside ``inner`` and never raises.
"""

from __future__ import annotations

from dpfc.packet.wire import ipv4_in_ethernet
from dpfc.target import HEADER_FIELD_NAMES

L4_PORTS = 4
PORT_PROTOCOLS = (6, 17)  # TCP, UDP: both start with the source and destination ports


def header_fields(inner: bytes) -> dict[str, int]:
    """Every header field of the inner frame by name (0 where its header is missing)."""
    out = dict.fromkeys(HEADER_FIELD_NAMES, 0)
    found = ipv4_in_ethernet(inner)
    if found is None:
        return out
    l3, ihl, _ = found
    protocol = inner[l3 + 9]
    out["ipv4_src"] = int.from_bytes(inner[l3 + 12 : l3 + 16], "big")
    out["ipv4_dst"] = int.from_bytes(inner[l3 + 16 : l3 + 20], "big")
    out["ip_proto"] = protocol
    out["dscp"] = inner[l3 + 1] >> 2
    out["ttl"] = inner[l3 + 8]
    fragment_offset = int.from_bytes(inner[l3 + 6 : l3 + 8], "big") & 0x1FFF
    l4 = l3 + ihl
    if protocol in PORT_PROTOCOLS and fragment_offset == 0 and len(inner) >= l4 + L4_PORTS:
        out["l4_src"] = int.from_bytes(inner[l4 : l4 + 2], "big")
        out["l4_dst"] = int.from_bytes(inner[l4 + 2 : l4 + 4], "big")
    return out
