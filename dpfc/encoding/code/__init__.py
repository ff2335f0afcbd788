"""The compact in-packet code format: bundles, blocks and their packing into code options.

Contract: a checked :class:`~dpfc.isa.bundle.CodeImage` has exactly one encoding, the
payloads of SwitchVM code options (docs/encoding.md §2.2, §3); :func:`pack_code` writes it
and :func:`unpack_code` reads it back, rejecting every malformed or non-canonical byte
string with a :class:`~dpfc.encoding.errors.DecodeError` that names the offending byte and
its code, so decode∘encode and encode∘decode are identities. Every position and width comes
from the tables of :mod:`dpfc.encoding.layouts`.

Modules:

* :mod:`.packing`: blocks (format version 1) or bundle starts (version 2), greedy canonical
  packing into code options, their unpacking and padding checks; :func:`encode_stage_bundle`;
  the version is the profile's ``code_format``;
* :mod:`.bundle`: prolog and EU bundles (:func:`encode_bundle`, :func:`decode_bundle`);
* :mod:`.epilog`: epilog bundles (:func:`encode_epilog`, :func:`decode_epilog`);
* :mod:`.tagged`: a format-version-2 bundle: the version-1 bytes of :mod:`.bundle` and
  :mod:`.epilog` with a tag before the bundle and each part (:func:`encode_tagged`,
  :func:`decode_tagged`, :func:`bundle_field_offset`);
* :mod:`.fields`: what both bundle kinds share: PCs (:func:`encode_pc`, :func:`decode_pc`),
  register bytes, the canonical-bytes check, :func:`field_offset` (the byte a checker
  violation names).

Not responsible for the other SwitchVM options nor their framing (:mod:`dpfc.encoding.header`)
nor for checking what the decoded code does (:mod:`dpfc.isa.check`).
"""

from dpfc.encoding.code.bundle import decode_bundle, encode_bundle
from dpfc.encoding.code.epilog import decode_epilog, encode_epilog
from dpfc.encoding.code.fields import (
    IMM_FLAG,
    IN_PACKET,
    PC_INDEX_MASK,
    REGISTER_MAX,
    decode_pc,
    encode_pc,
    field_offset,
)
from dpfc.encoding.code.packing import (
    MAX_BLOCK_BUNDLES,
    PackedCode,
    encode_stage_bundle,
    pack_code,
    unpack_code,
)
from dpfc.encoding.code.tagged import bundle_field_offset, decode_tagged, encode_tagged

__all__ = [
    "IMM_FLAG",
    "IN_PACKET",
    "MAX_BLOCK_BUNDLES",
    "PC_INDEX_MASK",
    "REGISTER_MAX",
    "PackedCode",
    "bundle_field_offset",
    "decode_bundle",
    "decode_epilog",
    "decode_pc",
    "decode_tagged",
    "encode_bundle",
    "encode_epilog",
    "encode_pc",
    "encode_stage_bundle",
    "encode_tagged",
    "field_offset",
    "pack_code",
    "unpack_code",
]
