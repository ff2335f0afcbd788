"""In-switch instruction words: what one code-memory slot of each stage holds.

In-switch code lives in per-stage code memories (prolog, EU0..EU(n-1), epilog). A slot is a
fixed-width word -- in the P4 data plane it is the action data of the stage's code table --
whose fields are derived from the target profile by :func:`slot_layout`. Fields are packed
most-significant first into a big-endian integer padded with zero bits to whole bytes.
Unlike the compact in-packet format, every field is present (nops are zero).

Selector fields exist for every register (``sel_<reg>_valid/kind/operand``); operands use
the same numbering as the in-packet format (register code, immediate slot, constant or
metadata index; branch operands set bit 7 for an immediate slot).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from functools import lru_cache

from dpfc.catalog import codes
from dpfc.encoding.code import IMM_FLAG, REGISTER_MAX, decode_pc, encode_pc
from dpfc.encoding.errors import DecodeError
from dpfc.encoding.layouts import NEXT_PC_IMM, NEXT_PC_NONE, NEXT_PC_REG, OPERAND
from dpfc.isa import (
    EPILOG_STAGE,
    PC,
    PROLOG_STAGE,
    AluOp,
    Bundle,
    Control,
    CtrlOp,
    EpilogBundle,
    Imm,
    MemOp,
    Operand,
    Register,
    Selector,
    SelectorKind,
    StageBundle,
    Steering,
    check_bundle,
    check_epilog,
)
from dpfc.target import TargetProfile

_SLOT_MASK = OPERAND.field("index").mask  # the immediate slot of an operand with IMM_FLAG


class StageKind(Enum):
    PROLOG = "prolog"
    EU = "eu"
    EPILOG = "epilog"


def stage_kind(stage: int) -> StageKind:
    """The code-memory kind of a stage id (0 prolog, 31 epilog, else an EU)."""
    if stage == PROLOG_STAGE:
        return StageKind.PROLOG
    if stage == EPILOG_STAGE:
        return StageKind.EPILOG
    return StageKind.EU


@dataclass(frozen=True)
class FieldSpec:
    name: str
    width: int


def _registers(profile: TargetProfile) -> list[Register]:
    return [Register.a(i) for i in range(profile.lanes)] + [
        Register.b(i) for i in range(profile.lanes)
    ]


@lru_cache(maxsize=64)
def slot_layout(kind: StageKind, profile: TargetProfile) -> tuple[FieldSpec, ...]:
    """The fields of one code-memory slot of a stage, most significant first (derived from
    the profile once per profile: every word of a stage has this layout)."""
    if kind is StageKind.EPILOG:
        fields = [FieldSpec("n_push", 5)]
        fields += [FieldSpec(f"push_{k}", 5) for k in range(profile.max_push)]
        fields += [
            FieldSpec("steer_action", 3),
            FieldSpec("steer_src", 1),
            FieldSpec("steer_value", 16),
            FieldSpec("next_pc_src", 2),
            FieldSpec("next_pc", 16),
            FieldSpec("hdr_mod", 1),
        ]
        return tuple(fields)
    fields = []
    if kind is StageKind.EU:
        fields += [FieldSpec("ctrl_op", 4), FieldSpec("ctrl_x", 8), FieldSpec("ctrl_y", 8)]
    fields.append(FieldSpec("pc_taken", 16))
    if kind is StageKind.EU:
        fields.append(FieldSpec("pc_not_taken", 16))
    for reg in _registers(profile):
        fields += [
            FieldSpec(f"sel_{reg}_valid", 1),
            FieldSpec(f"sel_{reg}_kind", 3),
            FieldSpec(f"sel_{reg}_operand", 8),
        ]
    if kind is StageKind.EU:
        fields += [FieldSpec(f"alu_{lane}", 4) for lane in range(profile.lanes)]
        fields += [FieldSpec(f"mem_{lane}", 4) for lane in range(profile.lanes)]
        fields += [FieldSpec(f"imm_{k}", 32) for k in range(profile.immediates_per_bundle)]
    return tuple(fields)


def slot_bits(kind: StageKind, profile: TargetProfile) -> int:
    return sum(f.width for f in slot_layout(kind, profile))


def slot_bytes(kind: StageKind, profile: TargetProfile) -> int:
    return (slot_bits(kind, profile) + 7) // 8


def _pack(layout: tuple[FieldSpec, ...], values: dict[str, int]) -> bytes:
    word = 0
    total = 0
    for spec in layout:
        value = values.get(spec.name, 0)
        assert 0 <= value < (1 << spec.width), (spec, value)
        word = (word << spec.width) | value
        total += spec.width
    pad = -total % 8
    return (word << pad).to_bytes((total + pad) // 8, "big")


def _unpack(layout: tuple[FieldSpec, ...], data: bytes) -> dict[str, int]:
    total = sum(f.width for f in layout)
    word = int.from_bytes(data, "big") >> (-total % 8)
    out: dict[str, int] = {}
    for spec in reversed(layout):
        out[spec.name] = word & ((1 << spec.width) - 1)
        word >>= spec.width
    return out


def slot_fields(kind: StageKind, data: bytes, profile: TargetProfile) -> dict[str, int]:
    """The raw field values of a code-memory word (check it with :func:`decode_slot` first):
    what a data plane's code table takes as action data (the P4 back end's)."""
    return _unpack(slot_layout(kind, profile), data)


def _operand_code(op: Operand | None, immediates: tuple[int, ...]) -> int:
    if op is None:
        return 0
    if isinstance(op, Register):
        return op.code
    return IMM_FLAG | immediates.index(op.value)


def encode_slot(kind: StageKind, bundle: StageBundle, profile: TargetProfile) -> bytes:
    """The code-memory word of a (checked) bundle for a stage of ``kind``."""
    layout = slot_layout(kind, profile)
    values: dict[str, int] = {}
    if kind is StageKind.EPILOG:
        assert isinstance(bundle, EpilogBundle)
        action = profile.steering_by_name(bundle.steering.action)
        assert action is not None
        values["n_push"] = len(bundle.push)
        for k, reg in enumerate(bundle.push):
            values[f"push_{k}"] = reg.code
        values["steer_action"] = action.code
        steer = bundle.steering.value
        values["steer_src"] = int(isinstance(steer, Register))
        values["steer_value"] = (
            steer.code if isinstance(steer, Register) else (steer.value if steer else 0)
        )
        if isinstance(bundle.next_pc, PC):
            values["next_pc_src"], values["next_pc"] = NEXT_PC_IMM, encode_pc(bundle.next_pc)
        elif isinstance(bundle.next_pc, Register):
            values["next_pc_src"], values["next_pc"] = NEXT_PC_REG, bundle.next_pc.code
        values["hdr_mod"] = int(bundle.hdr_mod)
        return _pack(layout, values)
    assert isinstance(bundle, Bundle)
    immediates = bundle.immediates()
    ctrl = bundle.control
    values["pc_taken"] = encode_pc(ctrl.taken)
    if kind is StageKind.EU:
        values["ctrl_op"] = ctrl.op
        values["ctrl_x"] = _operand_code(ctrl.x, immediates)
        values["ctrl_y"] = _operand_code(ctrl.y, immediates)
        values["pc_not_taken"] = encode_pc(ctrl.not_taken) if ctrl.not_taken else 0
        for lane in range(profile.lanes):
            values[f"alu_{lane}"] = bundle.alu[lane]
            values[f"mem_{lane}"] = bundle.mem[lane]
        for k, value in enumerate(immediates):
            values[f"imm_{k}"] = value
    for sel in bundle.selectors:
        values[f"sel_{sel.dest}_valid"] = 1
        values[f"sel_{sel.dest}_kind"] = sel.kind
        if sel.kind is SelectorKind.MOV:
            assert sel.source is not None
            operand = sel.source.code
        elif sel.kind is SelectorKind.LOAD_IMM:
            operand = immediates.index(sel.value)
        else:
            operand = sel.value
        values[f"sel_{sel.dest}_operand"] = operand
    return _pack(layout, values)


def decode_slot(kind: StageKind, data: bytes, profile: TargetProfile) -> StageBundle:
    """Inverse of :func:`encode_slot`; raises :class:`DecodeError` on a malformed word.

    Like the in-packet decoder it is strict: the decoded bundle must obey every rule of
    :mod:`dpfc.isa.check` for its stage, and the word must be the canonical encoding of it
    (unused fields zero), so decode and encode are inverse bijections.
    """
    bundle = _decode_slot_fields(kind, data, profile)
    if isinstance(bundle, EpilogBundle):
        violations = check_epilog(bundle, profile)
    else:
        violations = check_bundle(
            bundle, profile, prolog=kind is StageKind.PROLOG, next_stage="the next stage"
        )
    if violations:
        raise DecodeError(f"{kind.value} slot: {violations[0].message}", 0, violations[0].code)
    if encode_slot(kind, bundle, profile) != data:
        raise DecodeError(
            f"non-canonical {kind.value} slot (an unused field is not zero)",
            0,
            codes.DECODE_WORD_NON_CANONICAL,
        )
    return bundle


def _decode_slot_fields(kind: StageKind, data: bytes, profile: TargetProfile) -> StageBundle:
    expected = slot_bytes(kind, profile)
    if len(data) != expected:
        raise DecodeError(
            f"{kind.value} slot must be {expected} bytes, got {len(data)}",
            0,
            codes.DECODE_WORD_LENGTH,
        )
    layout = slot_layout(kind, profile)
    values = _unpack(layout, data)
    if _pack(layout, values) != data:
        raise DecodeError(
            "padding bits of the slot are set", len(data) - 1, codes.DECODE_WORD_PADDING
        )
    if kind is StageKind.EPILOG:
        return _decode_epilog_slot(values, profile)
    immediates = tuple(values.get(f"imm_{k}", 0) for k in range(profile.immediates_per_bundle))

    def reg(code: int, what: str) -> Register:
        if code > REGISTER_MAX:
            raise DecodeError(
                f"invalid register number {code:#04x} in {what}", 0, codes.DECODE_BAD_REGISTER
            )
        return Register.from_code(code)

    def operand(code: int, what: str) -> Operand:
        if code & IMM_FLAG:
            slot = code & _SLOT_MASK
            if slot >= len(immediates):
                raise DecodeError(
                    f"{what} names immediate slot {slot}", 0, codes.DECODE_MISSING_IMMEDIATE
                )
            return Imm(immediates[slot])
        return reg(code, what)

    selectors = []
    for r in _registers(profile):
        if not values[f"sel_{r}_valid"]:
            continue
        sel_kind = SelectorKind(values[f"sel_{r}_kind"])
        raw = values[f"sel_{r}_operand"]
        if sel_kind is SelectorKind.MOV:
            selectors.append(Selector(r, sel_kind, reg(raw, "MOV source")))
        elif sel_kind is SelectorKind.LOAD_IMM:
            if raw >= len(immediates):
                raise DecodeError(
                    f"LOAD_IMM names immediate slot {raw}", 0, codes.DECODE_MISSING_IMMEDIATE
                )
            selectors.append(Selector(r, sel_kind, None, immediates[raw]))
        else:
            selectors.append(Selector(r, sel_kind, None, raw))
    if kind is StageKind.PROLOG:
        return Bundle(
            tuple(selectors),
            (AluOp.NOP,) * profile.lanes,
            (MemOp.NOP,) * profile.lanes,
            Control(CtrlOp.JMP, decode_pc(values["pc_taken"])),
        )
    try:
        ctrl_op = CtrlOp(values["ctrl_op"])
        alu = tuple(AluOp(values[f"alu_{lane}"]) for lane in range(profile.lanes))
        mem = tuple(MemOp(values[f"mem_{lane}"]) for lane in range(profile.lanes))
    except ValueError as exc:
        raise DecodeError(
            f"unknown opcode in slot: {exc}", 0, codes.DECODE_UNKNOWN_OPCODE
        ) from None
    if ctrl_op.conditional:
        control = Control(
            ctrl_op,
            decode_pc(values["pc_taken"]),
            operand(values["ctrl_x"], "branch operand x"),
            operand(values["ctrl_y"], "branch operand y"),
            decode_pc(values["pc_not_taken"]),
        )
    else:
        control = Control(ctrl_op, decode_pc(values["pc_taken"]))
    return Bundle(tuple(selectors), alu, mem, control)


def _decode_epilog_slot(values: dict[str, int], profile: TargetProfile) -> EpilogBundle:
    n_push = values["n_push"]
    if n_push > profile.max_push:
        raise DecodeError(
            f"PUSH of {n_push} registers exceeds 2L = {profile.max_push}",
            0,
            codes.DECODE_PUSH_TOO_MANY,
        )
    pushed = [values[f"push_{k}"] for k in range(n_push)]
    if any(c > REGISTER_MAX for c in pushed):
        raise DecodeError("invalid PUSH register", 0, codes.DECODE_BAD_REGISTER)
    action = profile.steering_by_code(values["steer_action"])
    if action is None:
        raise DecodeError(
            f"unknown steering action code {values['steer_action']}",
            0,
            codes.DECODE_UNKNOWN_STEERING,
        )
    value: Operand | None = None
    if action.takes_value:
        raw = values["steer_value"]
        value = Register.from_code(raw & REGISTER_MAX) if values["steer_src"] else Imm(raw)
    next_pc: PC | Register | None = None
    src = values["next_pc_src"]
    if src == NEXT_PC_IMM:
        next_pc = decode_pc(values["next_pc"])
    elif src == NEXT_PC_REG:
        next_pc = Register.from_code(values["next_pc"] & REGISTER_MAX)
    elif src != NEXT_PC_NONE:
        raise DecodeError("invalid NEXT_PC source 3", 0, codes.DECODE_BAD_EPILOG_SOURCE)
    return EpilogBundle(
        tuple(Register.from_code(c) for c in pushed),
        Steering(action.name, value),
        next_pc,
        bool(values["hdr_mod"]),
    )
