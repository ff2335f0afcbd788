"""Epilog bundles in their compact in-packet form (docs/encoding.md, "In-packet code").

Layout::

    byte 0   n_push:5 | steer_action:3
    byte 1   hdr_mod:1 | steer_src:1 | next_pc_src:2 | reserved:4 (0)
    n_push x u8 (register)
    [value-taking action: u16 immediate (steer_src 0) or u8 register (steer_src 1)]
    [next_pc_src 1: u16 PC; 2: u8 register]

Contract: :func:`encode_epilog` writes the one canonical byte string of a checked epilog
bundle; :func:`decode_epilog` reads one back and rejects malformed bytes (DPF3010-DPF3019)
and any non-canonical form (DPF3040) with the offset of the offending byte.

Not responsible for prolog/EU bundles (:mod:`code_bundle`), nor for checking what the
epilog does (that is :mod:`dpfc.isa.check`), nor for blocks and options
(:mod:`dpfc.encoding.code`).
"""

from __future__ import annotations

from dpfc.encoding.code_fields import (
    NEXT_PC_IMM,
    NEXT_PC_NONE,
    NEXT_PC_REG,
    check_canonical_bytes,
    decode_pc,
    encode_pc,
    read_register,
)
from dpfc.encoding.errors import ByteReader, DecodeError
from dpfc.isa.bundle import PC, EpilogBundle, Imm, Operand, Register, Steering
from dpfc.target.profile import TargetProfile


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
        [
            (len(epilog.push) << 3) | action.code,
            (int(epilog.hdr_mod) << 7) | (steer_src << 6) | (next_src << 4),
        ]
    )
    out += bytes(reg.code for reg in epilog.push)
    if isinstance(value, Register):
        out.append(value.code)
    elif isinstance(value, Imm):
        out += value.value.to_bytes(2, "big")
    if isinstance(epilog.next_pc, PC):
        out += encode_pc(epilog.next_pc).to_bytes(2, "big")
    elif isinstance(epilog.next_pc, Register):
        out.append(epilog.next_pc.code)
    return bytes(out)


def decode_epilog(reader: ByteReader, profile: TargetProfile) -> EpilogBundle:
    """Decode one epilog bundle; rejects malformed and non-canonical bytes."""
    start = reader.offset
    head = reader.u8("epilog header")
    flags = reader.u8("epilog header")
    n_push, action_code = head >> 3, head & 7
    hdr_mod, steer_src, next_src = flags >> 7, (flags >> 6) & 1, (flags >> 4) & 3
    if flags & 0xF:
        raise DecodeError("reserved bits of the epilog header are set", start + 1, "DPF3011")
    action = profile.steering_by_code(action_code)
    if action is None:
        raise DecodeError(f"unknown steering action code {action_code}", start, "DPF3017")
    if n_push > profile.max_push:
        raise DecodeError(
            f"PUSH of {n_push} registers exceeds 2L = {profile.max_push}", start, "DPF3018"
        )
    push = tuple(read_register(reader, "PUSH register") for _ in range(n_push))
    value: Operand | None = None
    if action.takes_value:
        value = (
            read_register(reader, "steering register")
            if steer_src
            else Imm(reader.u16("steering value"))
        )
    elif steer_src:
        raise DecodeError(
            f"steering action `{action.name}` takes no value but steer_src is set",
            start + 1,
            "DPF3019",
        )
    next_pc: PC | Register | None = None
    if next_src == NEXT_PC_IMM:
        next_pc = decode_pc(reader.u16("NEXT_PC"))
    elif next_src == NEXT_PC_REG:
        next_pc = read_register(reader, "NEXT_PC register")
    elif next_src != NEXT_PC_NONE:
        raise DecodeError("invalid NEXT_PC source 3", start + 1, "DPF3019")
    epilog = EpilogBundle(push, Steering(action.name, value), next_pc, bool(hdr_mod))
    check_canonical_bytes(reader, start, encode_epilog(epilog, profile), "epilog")
    return epilog
