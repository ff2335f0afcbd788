"""The HASH functions a lane can have: the CRC-32 family of the CRC catalogue, as data.

Contract: :class:`HashFunction` is one CRC-32 variant in the Rocksoft model (polynomial,
initial value, reflections, final XOR) with its catalogue check value; :data:`CRC32_FAMILY`
lists every variant a profile may name, :data:`HASH_FUNCTIONS` finds one by name. The
profile (:mod:`.profile`) names one per lane; the semantics (``dpfc.isa.semantics``) and
every back end compute it from these fields.
"""

from __future__ import annotations

from dataclasses import dataclass


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
