"""Byte formats: in-packet code and SwitchVM Geneve options, in-switch instruction words."""

from dpfc.encoding.code import PackedCode, decode_pc, encode_pc, pack_code, unpack_code
from dpfc.encoding.errors import DecodeError, EncodingError
from dpfc.encoding.header import (
    OPTION_CLASS,
    OPTIONS_MAX,
    TYPE_CODE,
    TYPE_HEADER,
    TYPE_STACK,
    EncodedOptions,
    SwitchVMHeader,
    decode_options,
    encode_options,
    pack_checked,
    split_options,
)
from dpfc.encoding.words import (
    FieldSpec,
    StageKind,
    decode_slot,
    encode_slot,
    slot_bits,
    slot_bytes,
    slot_layout,
    stage_kind,
)

__all__ = [
    "OPTIONS_MAX",
    "OPTION_CLASS",
    "TYPE_CODE",
    "TYPE_HEADER",
    "TYPE_STACK",
    "DecodeError",
    "EncodedOptions",
    "EncodingError",
    "FieldSpec",
    "PackedCode",
    "StageKind",
    "SwitchVMHeader",
    "decode_options",
    "decode_pc",
    "decode_slot",
    "encode_options",
    "encode_pc",
    "encode_slot",
    "pack_checked",
    "pack_code",
    "slot_bits",
    "slot_bytes",
    "slot_layout",
    "split_options",
    "stage_kind",
    "unpack_code",
]
