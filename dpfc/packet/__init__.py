"""SwitchVM packets: strict parsing (:mod:`.wire`), scapy layers, building and pcap files."""

from dpfc.packet.build import PacketSpec, build_packet, describe_packet
from dpfc.packet.layers import build_frame, build_inner, dissect, read_pcap, show, write_pcap
from dpfc.packet.wire import GENEVE_PORT, ParsedPacket, parse_packet

__all__ = [
    "GENEVE_PORT",
    "PacketSpec",
    "ParsedPacket",
    "build_frame",
    "build_inner",
    "build_packet",
    "describe_packet",
    "dissect",
    "parse_packet",
    "read_pcap",
    "show",
    "write_pcap",
]
