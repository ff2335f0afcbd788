"""Epilog bundles in their compact in-packet form (docs/encoding.md, "In-packet code").

Layout (the tables of :mod:`dpfc.encoding.layouts`)::

    EPILOG_HEAD  n_push:5 | steer_action:3 | hdr_mod:1 | steer_src:1 | next_pc_src:2 | reserved:4
    n_push x REGISTER_BYTE
    [value-taking action: STEER_IMMEDIATE (steer_src 0) or REGISTER_BYTE (steer_src 1)]
    [next_pc_src NEXT_PC_IMM: PC_FORMAT; NEXT_PC_REG: REGISTER_BYTE]

Contract: :func:`encode_epilog` writes the one canonical byte string of a checked epilog
bundle; :func:`decode_epilog` reads one back and rejects malformed bytes (DPF3010-DPF3019)
and any non-canonical form (DPF3040) with the offset of the offending byte.

Not responsible for prolog/EU bundles (:mod:`.bundle`), nor for checking what the
epilog does (that is :mod:`dpfc.isa.check`), nor for blocks and options (:mod:`.packing`).
"""

from __future__ import annotations

from dpfc.catalog import codes
from dpfc.encoding.code.fields import (
    check_canonical_bytes,
    decode_pc,
    encode_pc,
    read_register,
)
from dpfc.encoding.errors import ByteReader, DecodeError
from dpfc.encoding.layouts import (
    EPILOG_HEAD,
    NEXT_PC_IMM,
    NEXT_PC_NONE,
    NEXT_PC_REG,
    PC_FORMAT,
    REGISTER_BYTE,
    STEER_IMMEDIATE,
)
from dpfc.isa import PC, EpilogBundle, Imm, Operand, Register, Steering
from dpfc.target import TargetProfile


def encode_epilog(epilog: EpilogBundle, profile: TargetProfile) -> bytes:
    action = profile.steering_by_name(epilog.steering.action)
    assert action is not None
    value = epilog.steering.value
    steer_src = 1 if isinstance(value, Register) else 0
    if epilog.next_pc is None:
        next_src = NEXT_PC_NONE
    elif isinstance(epilog.next_pc, PC):
        next_src = NEXT_PC_IMM
    else:
        next_src = NEXT_PC_REG
    out = bytearray(
        EPILOG_HEAD.pack(
            n_push=len(epilog.push),
            steer_action=action.code,
            hdr_mod=epilog.hdr_mod,
            steer_src=steer_src,
            next_pc_src=next_src,
        )
    )
    for reg in epilog.push:
        out += REGISTER_BYTE.pack(register=reg.code)
    if isinstance(value, Register):
        out += REGISTER_BYTE.pack(register=value.code)
    elif isinstance(value, Imm):
        out += STEER_IMMEDIATE.pack(value=value.value)
    if isinstance(epilog.next_pc, PC):
        out += encode_pc(epilog.next_pc).to_bytes(PC_FORMAT.size, "big")
    elif isinstance(epilog.next_pc, Register):
        out += REGISTER_BYTE.pack(register=epilog.next_pc.code)
    return bytes(out)


def decode_epilog(reader: ByteReader, profile: TargetProfile) -> EpilogBundle:
    """Decode one epilog bundle; rejects malformed and non-canonical bytes."""
    start = reader.offset
    head = EPILOG_HEAD.read(reader)
    n_push, action_code = head["n_push"], head["steer_action"]
    hdr_mod, steer_src, next_src = head["hdr_mod"], head["steer_src"], head["next_pc_src"]

    def at(name: str) -> int:
        return start + EPILOG_HEAD.field(name).byte

    if head["reserved"]:
        raise DecodeError(
            "reserved bits of the epilog header are set", at("reserved"), codes.DECODE_RESERVED_BITS
        )
    action = profile.steering_by_code(action_code)
    if action is None:
        raise DecodeError(
            f"unknown steering action code {action_code}",
            at("steer_action"),
            codes.DECODE_UNKNOWN_STEERING,
        )
    if n_push > profile.max_push:
        raise DecodeError(
            f"PUSH of {n_push} registers exceeds 2L = {profile.max_push}",
            at("n_push"),
            codes.DECODE_PUSH_TOO_MANY,
        )
    push = tuple(read_register(reader, "PUSH register") for _ in range(n_push))
    value: Operand | None = None
    if action.takes_value:
        value = (
            read_register(reader, "steering register")
            if steer_src
            else Imm(STEER_IMMEDIATE.read(reader)["value"])
        )
    elif steer_src:
        raise DecodeError(
            f"steering action `{action.name}` takes no value but steer_src is set",
            at("steer_src"),
            codes.DECODE_BAD_EPILOG_SOURCE,
        )
    next_pc: PC | Register | None = None
    if next_src == NEXT_PC_IMM:
        next_pc = decode_pc(reader.uint(PC_FORMAT.size, "NEXT_PC"))
    elif next_src == NEXT_PC_REG:
        next_pc = read_register(reader, "NEXT_PC register")
    elif next_src != NEXT_PC_NONE:
        raise DecodeError(
            f"invalid NEXT_PC source {next_src}", at("next_pc_src"), codes.DECODE_BAD_EPILOG_SOURCE
        )
    epilog = EpilogBundle(push, Steering(action.name, value), next_pc, bool(hdr_mod))
    check_canonical_bytes(reader, start, encode_epilog(epilog, profile), "epilog")
    return epilog
