"""What a target profile is made of: its metadata fields, steering actions and hash functions.

Contract: :data:`DEFAULT_METADATA` and :data:`DEFAULT_STEERING` are the built-in profiles'
``LOAD_MD`` fields and epilog steering actions (paper §3.4, §3.5, §3.7);
:data:`HASH_FUNCTIONS` maps a name a profile's ``hash_functions`` may use to its
Rocksoft-model parameters (:class:`HashFunction`), every entry expressible as a P4
CRCPolynomial (Tofino) and as bmv2's crc32_custom. The profile itself is
:mod:`.profile`'s; computing a hash is :mod:`dpfc.isa.semantics`'s.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class MetadataField:
    """A switch-metadata value readable by ``LOAD_MD`` (index = the instruction operand)."""

    name: str
    index: int
    description: str


@dataclass(frozen=True)
class SteeringAction:
    """An epilog steering action (paper §3.5)."""

    name: str
    code: int
    takes_value: bool
    privileged: bool
    description: str


@dataclass(frozen=True)
class HashFunction:
    """A CRC-32 variant (Rocksoft model), the HASH function of one lane."""

    name: str
    polynomial: int
    init: int
    reflect_in: bool
    reflect_out: bool
    xor_out: int
    check: int  # CRC of b"123456789", the catalogue's known answer


# The CRC-32 family from the CRC catalogue: every entry is expressible as a P4
# CRCPolynomial (Tofino) and as bmv2's crc32_custom, so all back ends compute the same hash.
CRC32_FAMILY: tuple[HashFunction, ...] = (
    HashFunction("crc32", 0x04C11DB7, 0xFFFFFFFF, True, True, 0xFFFFFFFF, 0xCBF43926),
    HashFunction("crc32c", 0x1EDC6F41, 0xFFFFFFFF, True, True, 0xFFFFFFFF, 0xE3069283),
    HashFunction("crc32d", 0xA833982B, 0xFFFFFFFF, True, True, 0xFFFFFFFF, 0x87315576),
    HashFunction("crc32q", 0x814141AB, 0x00000000, False, False, 0x00000000, 0x3010BF7F),
    HashFunction("crc32_bzip2", 0x04C11DB7, 0xFFFFFFFF, False, False, 0xFFFFFFFF, 0xFC891918),
    HashFunction("crc32_mpeg2", 0x04C11DB7, 0xFFFFFFFF, False, False, 0x00000000, 0x0376E6E7),
    HashFunction("crc32_posix", 0x04C11DB7, 0x00000000, False, False, 0xFFFFFFFF, 0x765E7680),
    HashFunction("crc32_xfer", 0x000000AF, 0x00000000, False, False, 0x00000000, 0xBD0BE338),
)
HASH_FUNCTIONS: dict[str, HashFunction] = {h.name: h for h in CRC32_FAMILY}

# §3.4: "ingress/egress ports, timestamps, or a switch identifier"; §3.7: "port queue length".
# ``egress_port`` came last (index 6), so the indices of programs written before it hold.
SWITCH_METADATA: tuple[MetadataField, ...] = (
    MetadataField("ingress_port", 0, "physical ingress port of the packet"),
    MetadataField("timestamp", 1, "ingress timestamp, nanoseconds, low 32 bits"),
    MetadataField("switch_id", 2, "operator-assigned identifier of the switch"),
    MetadataField("queue_depth", 3, "depth of the egress queue at enqueue (cells)"),
    MetadataField("packet_length", 4, "length of the whole packet in bytes"),
    MetadataField("pipe_id", 5, "index of the pipe processing the packet"),
    MetadataField(
        "egress_port", 6, "output port in the egress pipeline; 0xFFFF (none yet) in the ingress"
    ),
)

# §3.7: "the parser can be easily modified to expose new packet fields to a DPF and use them
# in the prolog to initialize DPF registers". Fields of the tenant's (inner) packet, 0 when it
# has no such header (docs/isa.md §4); a profile exposes one by listing it under its name.
HEADER_METADATA: tuple[MetadataField, ...] = (
    MetadataField("ipv4_src", 7, "inner IPv4 source address; 0 if not IPv4"),
    MetadataField("ipv4_dst", 8, "inner IPv4 destination address; 0 if not IPv4"),
    MetadataField("ip_proto", 9, "inner IPv4 protocol; 0 if not IPv4"),
    MetadataField("dscp", 10, "inner IPv4 DSCP (upper 6 bits of the TOS byte); 0 if not IPv4"),
    MetadataField("ttl", 11, "inner IPv4 TTL; 0 if not IPv4"),
    MetadataField("l4_src", 12, "inner TCP/UDP source port; 0 without one"),
    MetadataField("l4_dst", 13, "inner TCP/UDP destination port; 0 without one"),
)
HEADER_FIELD_NAMES: tuple[str, ...] = tuple(m.name for m in HEADER_METADATA)
DEFAULT_METADATA: tuple[MetadataField, ...] = SWITCH_METADATA + HEADER_METADATA

# §3.5: "pass, drop, return-to-sender, forward, multicast, set_port, recirculate".
DEFAULT_STEERING: tuple[SteeringAction, ...] = (
    SteeringAction("pass", 0, False, False, "continue along the packet's route (default)"),
    SteeringAction("drop", 1, False, False, "drop the packet"),
    SteeringAction("return_to_sender", 2, False, False, "swap addresses, send back"),
    SteeringAction("forward", 3, True, False, "send to the tenant's virtual destination #value"),
    SteeringAction("multicast", 4, True, False, "replicate to the tenant's multicast group #value"),
    SteeringAction("set_port", 5, True, True, "send out of physical port #value (privileged)"),
    SteeringAction("recirculate", 6, False, True, "run the pipeline again (privileged)"),
)
