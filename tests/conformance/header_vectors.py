"""Conformance vectors of the header fields (LOAD_MD of the tenant's packet, docs/isa.md §4).

One DPF loads all seven fields and pushes them; it runs on one packet per inner frame of
``tests/inner_frames.py`` (every case the rules tell apart: TCP, UDP, ICMP, IPv4 options,
fragments, an 802.1Q tag, IPv6, ARP, and frames cut short at each header), in the packet
and from the switch's code memory, as the tenant's default DPF (a packet without SwitchVM
options) and as an egress DPF; a tenant without the ``metadata`` bit is refused (R5). The
example load balancer ``flow_lb`` hashes the 5-tuple of flows that differ in one field.
"""

from __future__ import annotations

from dpfc.packet import build_inner
from dpfc.target import HEADER_FIELD_NAMES
from tests.conformance.harness import Packet, Vector
from tests.inner_frames import CASES

FIELDS = HEADER_FIELD_NAMES
REGISTERS = ("A0", "A1", "A2", "A3", "B0", "B1", "B2")


def _source(placement: str, pipeline: str = "ingress") -> str:
    loads = "".join(f"    LOAD_MD {r}, {f}\n" for r, f in zip(REGISTERS, FIELDS, strict=True))
    return (
        f".dpf h\n.target tofino1\n.placement {placement}\n.pipeline {pipeline}\n.app 0x77\n"
        f"prolog p:\n{loads}    JMP e\n"
        "eu0 e:\n    HALT out\n"
        f"epilog out:\n    PUSH {', '.join(REGISTERS)}\n"
    )


def header_vectors() -> list[Vector]:
    every = tuple(Packet(inner=frame) for frame, _ in CASES.values())
    some = tuple(Packet(inner=CASES[name][0]) for name in ("udp", "tcp", "vlan", "arp"))
    default = tuple(Packet(inner=CASES[name][0], no_dpf=True) for name in ("udp", "icmp"))
    return [
        Vector("header_fields_packet", _source("packet"), packets=every),
        Vector("header_fields_switch", _source("switch"), packets=some),
        Vector("header_fields_default_dpf", _source("switch"), default_dpf=True, packets=default),
        Vector("header_fields_egress", _source("switch", "egress"), packets=some),
        Vector("header_fields_refused", _source("packet"), deny_metadata=True, packets=some[:1]),
        Vector("app_flow_lb", "flow_lb", kind="app", entry="flow_lb", packets=_flows()),
    ]


def _flows() -> tuple[Packet, ...]:
    """examples/dpf/flow_lb.dpf: flows that differ in one field of the 5-tuple at a time
    (forwarding entry i leads to port i: the port is the bucket), and a packet without
    ports."""
    flows = [
        build_inner(b"", src="10.1.0.1", dst="10.2.0.1", proto=proto, sport=sport, dport=443)
        for proto in (6, 17)
        for sport in (40000, 40001, 40002, 40003)
    ]
    flows += [build_inner(b"", src="10.1.0.2", dst="10.2.0.1", proto=6, sport=1, dport=443)]
    flows += [build_inner(b"", src="10.1.0.1", dst="10.2.0.9", proto=1)]
    return tuple(Packet(inner=frame) for frame in flows)
