"""Scapy layers for the SwitchVM Geneve options, and packet building with scapy.

Importing this module teaches scapy's Geneve dissector (``scapy.contrib.geneve``) to show
the three SwitchVM option types (class 0xFFF0) with named fields; other options keep
scapy's generic layer. This is the only module of dpfc that imports scapy.
"""

from __future__ import annotations

from typing import Any

from scapy.contrib.geneve import CLASS_IDS, GENEVE, GeneveOptions
from scapy.fields import (
    BitField,
    FieldListField,
    IntField,
    StrLenField,
    XByteField,
    XIntField,
    XShortEnumField,
    XShortField,
)
from scapy.layers.inet import IP, TCP, UDP
from scapy.layers.l2 import Ether
from scapy.packet import Packet, Raw
from scapy.utils import PcapWriter, RawPcapReader

from dpfc.encoding import OPTION_CLASS, TYPE_CODE, TYPE_HEADER, TYPE_STACK

CLASS_IDS.setdefault(OPTION_CLASS, "SwitchVM (dpfc, experimental)")


def _option_header(default_type: int) -> list[Any]:
    return [
        XShortEnumField("classid", OPTION_CLASS, CLASS_IDS),
        XByteField("type", default_type),
        BitField("reserved", 0, 3),
        BitField("length", None, 5),
    ]


class _SwitchVMOption(Packet):
    def extract_padding(self, s: bytes) -> tuple[bytes, bytes]:
        return b"", s

    def post_build(self, p: bytes, pay: bytes) -> bytes:
        if self.length is None:
            words = (len(p) - 4) // 4
            p = p[:3] + bytes([(p[3] & 0xE0) | (words & 0x1F)]) + p[4:]
        return p + pay

    @classmethod
    def dispatch_hook(cls, _pkt: bytes | None = None, *args: Any, **kargs: Any) -> type[Packet]:
        return cls


class SwitchVMHeaderOption(_SwitchVMOption):
    name = "SwitchVM header option"
    fields_desc = [
        *_option_header(TYPE_HEADER),
        BitField("version", 1, 4),
        BitField("flags", 0, 4),
        XByteField("gas", 8),
        XByteField("stack_depth", 0),
        BitField("n_code_opts", 0, 4),
        BitField("n_stack_opts", 0, 4),
        XIntField("app_id", 0),
        XShortField("dpf_ptr", 0xFFFF),
        XShortField("egress_ptr", 0xFFFF),
    ]


class SwitchVMCodeOption(_SwitchVMOption):
    name = "SwitchVM code option"
    fields_desc = [
        *_option_header(TYPE_CODE),
        StrLenField("code", b"", length_from=lambda pkt: (pkt.length or 0) * 4),
    ]


class SwitchVMStackOption(_SwitchVMOption):
    name = "SwitchVM stack option"
    fields_desc = [
        *_option_header(TYPE_STACK),
        FieldListField(
            "entries", [], IntField("entry", 0), length_from=lambda pkt: (pkt.length or 0) * 4
        ),
    ]


_BY_TYPE: dict[int, type[Packet]] = {
    TYPE_HEADER: SwitchVMHeaderOption,
    TYPE_CODE: SwitchVMCodeOption,
    TYPE_STACK: SwitchVMStackOption,
}


def _dispatch(
    cls: type[Packet], _pkt: bytes | None = None, *args: Any, **kargs: Any
) -> type[Packet]:
    ours = _pkt is not None and len(_pkt) >= 4 and int.from_bytes(_pkt[:2], "big") == OPTION_CLASS
    if cls is not GeneveOptions or not ours or _pkt is None or _pkt[2] not in _BY_TYPE:
        return cls
    option = _BY_TYPE[_pkt[2]]
    if option is SwitchVMHeaderOption and (_pkt[3] & 0x1F) * 4 != 12:
        return cls  # wrong length: the generic layer shows it as raw data
    return option


GeneveOptions.dispatch_hook = classmethod(_dispatch)  # type: ignore[attr-defined]


def options_to_scapy(options: bytes) -> list[Packet]:
    """Scapy option layers for a Geneve options area (dissected through the dispatch hook)."""
    geneve = GENEVE(bytes([len(options) // 4, 0, 0x65, 0x58, 0, 0, 0, 0]) + options)
    return list(geneve.options)


def build_frame(
    *,
    tenant_id: int,
    options: bytes,
    inner: bytes,
    eth_src: str = "02:00:00:00:00:01",
    eth_dst: str = "02:00:00:00:00:02",
    ip_src: str = "10.0.0.1",
    ip_dst: str = "10.0.0.2",
    udp_sport: int = 50000,
    ttl: int = 64,
) -> bytes:
    """Outer Ethernet/IPv4/UDP(6081)/Geneve around ``options`` and an inner Ethernet frame."""
    geneve = GENEVE(vni=tenant_id, proto=0x6558, options=options_to_scapy(options))
    packet = (
        Ether(src=eth_src, dst=eth_dst)
        / IP(src=ip_src, dst=ip_dst, ttl=ttl)
        / UDP(sport=udp_sport, dport=6081)
        / geneve
        / Raw(inner)
    )
    return bytes(packet)


def build_inner(
    payload: bytes,
    *,
    src: str = "192.168.0.1",
    dst: str = "192.168.0.2",
    dport: int = 9000,
    sport: int = 9000,
    proto: int = 17,
    ttl: int = 64,
    dscp: int = 0,
) -> bytes:
    """A default inner frame: Ethernet/IPv4/UDP carrying ``payload``; with ``proto`` 6 a
    TCP header instead (the ports the same), with another protocol none (the payload
    follows the IPv4 header)."""
    ip = IP(src=src, dst=dst, proto=proto, ttl=ttl, tos=dscp << 2)
    l4: Packet = ip
    if proto == 17:
        l4 = ip / UDP(sport=sport, dport=dport)
    elif proto == 6:
        l4 = ip / TCP(sport=sport, dport=dport)
    frame = Ether(src="02:00:00:00:01:01", dst="02:00:00:00:01:02") / l4 / Raw(payload)
    return bytes(frame)


def dissect(frame: bytes) -> Packet:
    """Scapy's view of a frame, SwitchVM options as their layers: ``dissect(f)[SwitchVMStackOption].entries``."""
    return Ether(frame)


def show(frame: bytes) -> str:
    """scapy's ``show()`` of :func:`dissect`, as text: every layer and field, one per line."""
    text = dissect(frame).show(dump=True)
    return str(text)


def write_pcap(path: str, frames: list[bytes]) -> None:
    """Write frames to a pcap file (Ethernet link type), exactly as given.

    Frames are written as raw bytes, never dissected, so malformed frames survive intact.
    Fixed timestamps (packet i at i microseconds) keep written pcap files deterministic;
    the file header is written even when there are no frames.
    """
    with PcapWriter(path, linktype=1, sync=True) as writer:
        writer.write_header(None)
        for index, frame in enumerate(frames):
            writer.write_packet(bytes(frame), sec=0, usec=index)


def read_pcap(path: str) -> list[bytes]:
    """Frames of a pcap file (raises OSError or ValueError on a bad file)."""
    frames: list[bytes] = []
    try:
        # The raw reader returns each record's bytes as captured (pcap or pcapng);
        # dissecting and rebuilding with scapy would change malformed or empty frames.
        # We own the file handle: scapy leaks its own when the header is rejected.
        # (scapy's hints say str, but its readers accept an open binary file too)
        with open(path, "rb") as handle, RawPcapReader(handle) as reader:  # type: ignore[arg-type]
            for record, _metadata in reader:
                frames.append(bytes(record))
    except OSError:
        raise
    except Exception as exc:  # scapy raises Scapy_Exception and struct errors on bad files
        raise ValueError(f"not a readable pcap file: {exc}") from None
    return frames


__all__ = [
    "SwitchVMCodeOption",
    "SwitchVMHeaderOption",
    "SwitchVMStackOption",
    "build_frame",
    "build_inner",
    "dissect",
    "options_to_scapy",
    "read_pcap",
    "show",
    "write_pcap",
]
