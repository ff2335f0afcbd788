"""SwitchVM packets: strict parsing (:mod:`.wire`), scapy layers, building and pcap files.

Importing this package (or anything from it) binds dpfc's scapy layers: scapy's Geneve
layer on UDP port 6081 (scapy leaves its ``contrib`` modules unloaded) and the SwitchVM
option layers under it, so scapy's ``rdpcap`` and ``Ether(frame)`` show SwitchVM options
with named fields instead of ``Raw`` bytes. ``import dpfc`` alone does not: it stays free of
scapy's import time (docs/packets.md).
"""

from dpfc.packet.build import PacketSpec, build_packet, describe_packet
from dpfc.packet.inner import header_fields
from dpfc.packet.layers import (
    SwitchVMCodeOption,
    SwitchVMHeaderOption,
    SwitchVMStackOption,
    build_frame,
    build_inner,
    dissect,
    read_pcap,
    show,
    write_pcap,
)
from dpfc.packet.wire import GENEVE_PORT, ParsedPacket, parse_packet

__all__ = [
    "GENEVE_PORT",
    "PacketSpec",
    "ParsedPacket",
    "SwitchVMCodeOption",
    "SwitchVMHeaderOption",
    "SwitchVMStackOption",
    "build_frame",
    "build_inner",
    "build_packet",
    "describe_packet",
    "dissect",
    "header_fields",
    "parse_packet",
    "read_pcap",
    "show",
    "write_pcap",
]
