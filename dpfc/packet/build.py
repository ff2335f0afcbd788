"""Build a whole SwitchVM packet from a header description, and explain one in text."""

from __future__ import annotations

from dataclasses import dataclass

from dpfc.encoding import EncodedOptions, PackedCode, SwitchVMHeader, encode_options
from dpfc.machine import disassemble_header
from dpfc.packet.layers import build_frame, build_inner
from dpfc.packet.wire import ParsedPacket
from dpfc.target import TargetProfile

TENANT_MAX = (1 << 24) - 1  # the Geneve VNI is 24 bits


@dataclass(frozen=True)
class PacketSpec:
    tenant_id: int
    header: SwitchVMHeader
    payload: bytes = b""
    inner: bytes | None = None  # a whole inner frame; default: Ethernet/IPv4/UDP + payload


@dataclass(frozen=True)
class BuiltPacket:
    frame: bytes
    options: EncodedOptions


def build_packet(
    spec: PacketSpec, profile: TargetProfile, *, packed: PackedCode | None = None
) -> BuiltPacket:
    """Encode the SwitchVM options and wrap them; raises EncodingError or ValueError.
    ``packed``: the header's code as already packed (see :func:`encode_options`)."""
    if not 0 <= spec.tenant_id <= TENANT_MAX:
        raise ValueError(f"tenant id {spec.tenant_id} does not fit the 24-bit Geneve VNI")
    options = encode_options(spec.header, profile, packed=packed)
    inner = spec.inner if spec.inner is not None else build_inner(spec.payload)
    return BuiltPacket(
        build_frame(tenant_id=spec.tenant_id, options=options.data, inner=inner), options
    )


def describe_packet(parsed: ParsedPacket, profile: TargetProfile) -> str:
    """Human-readable explanation: outer headers, SwitchVM fields, then the code as assembly."""
    ip = ".".join(str(b) for b in parsed.ip_src) + " -> " + ".".join(str(b) for b in parsed.ip_dst)
    lines = [
        f"; outer: {ip}, UDP {parsed.udp_sport} -> 6081, Geneve VNI (tenant) {parsed.tenant_id}"
        + (f", VLAN {parsed.vlan}" if parsed.vlan is not None else ""),
        f"; Geneve options: {len(parsed.options)} bytes; inner frame: {len(parsed.inner)} bytes",
    ]
    if parsed.header is None:
        lines.append("; no SwitchVM option: the tenant's default DPF runs, if any")
        return "\n".join(lines) + "\n"
    return "\n".join(lines) + "\n" + disassemble_header(parsed.header, profile)
