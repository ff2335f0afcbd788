"""Legality of one bundle against a target profile (the rules of docs/isa.md).

``check_bundle`` (a prolog or EU bundle) and ``check_epilog`` return :class:`Violation`
records; they never raise. Each violation carries a ``where`` key naming the offending
element, so the assembler can point at the source line that produced it and the decoder at
its byte offset. The same functions serve the assembler, the decoder, the code generator
and the simulator's admission of installed code: one statement of the rules. Where a bundle
sits (the kind a stage holds, the in-packet image as a whole) is :mod:`.placement`'s.
"""

from __future__ import annotations

from dataclasses import dataclass

from dpfc.catalog import codes
from dpfc.isa.bundle import (
    PC,
    Bundle,
    EpilogBundle,
    Imm,
    Operand,
    RegClass,
    Register,
)
from dpfc.isa.opcodes import (
    EU_SELECTOR_KINDS,
    PROLOG_KINDS,
    AluOp,
    CtrlOp,
    MemOp,
    SelectorKind,
)
from dpfc.target import TargetProfile

WORD_MAX = 0xFFFF_FFFF
STEERING_VALUE_MAX = 0xFFFF

Where = tuple[str | int, ...]


@dataclass(frozen=True)
class Violation:
    code: str  # diagnostic code, DPF1xxx for machine-code rules
    message: str
    where: Where = ()


def check_register(reg: Register, profile: TargetProfile, where: Where) -> list[Violation]:
    if reg.lane >= profile.lanes:
        return [
            Violation(
                codes.ISA_NO_SUCH_REGISTER,
                f"register {reg} does not exist: {profile.name} has {profile.lanes} lanes "
                f"(A0..A{profile.lanes - 1}, B0..B{profile.lanes - 1})",
                where,
            )
        ]
    return []


def check_pc(pc: PC, profile: TargetProfile, where: Where, *, target: str) -> list[Violation]:
    limit = profile.packet_bundles_per_stage if pc.in_packet else profile.code_slots_per_stage
    kind = "in-packet bundle index" if pc.in_packet else "code-memory slot"
    if not 0 <= pc.index < limit:
        return [
            Violation(
                codes.ISA_SLOT_OUT_OF_RANGE,
                f"{kind} {pc.index} out of range for {target}: {profile.name} allows 0..{limit - 1}",
                where,
            )
        ]
    return []


def _check_operand(op: Operand, profile: TargetProfile, where: Where) -> list[Violation]:
    if isinstance(op, Register):
        return check_register(op, profile, where)
    if not 0 <= op.value <= WORD_MAX:
        return [
            Violation(
                codes.ISA_IMMEDIATE_OUT_OF_RANGE,
                f"immediate {op.value} does not fit in 32 bits",
                where,
            )
        ]
    return []


def check_bundle(
    bundle: Bundle, profile: TargetProfile, *, prolog: bool, next_stage: str
) -> list[Violation]:
    """Rules for a prolog bundle (``prolog=True``) or an EU bundle."""
    out: list[Violation] = []
    lanes = profile.lanes
    if len(bundle.alu) != lanes or len(bundle.mem) != lanes:
        out.append(
            Violation(
                codes.ISA_BUNDLE_SHAPE,
                f"bundle must have {lanes} ALU and memory slots",
                ("bundle",),
            )
        )
        return out
    seen: list[Register] = []
    for sel in bundle.selectors:
        where: Where = ("selector", str(sel.dest))
        out += check_register(sel.dest, profile, where)
        if sel.dest in seen:
            out.append(
                Violation(
                    codes.ISA_REGISTER_WRITTEN_TWICE,
                    f"register {sel.dest} written by two selectors",
                    where,
                )
            )
        elif seen and sel.dest < seen[-1]:
            out.append(
                Violation(
                    codes.ISA_SELECTORS_UNSORTED, "selectors must be sorted by destination", where
                )
            )
        seen.append(sel.dest)
        out += _check_selector(sel.kind, sel.dest, sel.source, sel.value, profile, prolog, where)
    if prolog:
        for lane, op in enumerate(bundle.alu):
            if op is not AluOp.NOP:
                out.append(
                    Violation(
                        codes.ISA_OP_IN_PROLOG,
                        f"ALU op {op.name} is not allowed in the prolog",
                        ("alu", lane),
                    )
                )
        for lane, mop in enumerate(bundle.mem):
            if mop is not MemOp.NOP:
                out.append(
                    Violation(
                        codes.ISA_OP_IN_PROLOG,
                        f"memory op {mop.name} is not allowed in the prolog",
                        ("mem", lane),
                    )
                )
        if bundle.control.op is not CtrlOp.JMP:
            out.append(
                Violation(
                    codes.ISA_OP_IN_PROLOG,
                    f"{bundle.control.op.name} is not allowed in the prolog",
                    ("control",),
                )
            )
    immediates = bundle.immediates()
    if len(immediates) > profile.immediates_per_bundle:
        out.append(
            Violation(
                codes.ISA_TOO_MANY_IMMEDIATES,
                f"bundle needs {len(immediates)} distinct immediates but {profile.name} allows "
                f"{profile.immediates_per_bundle} per bundle",
                ("immediates",),
            )
        )
    out += _check_control(bundle, profile, next_stage)
    return out


def _check_selector(
    kind: SelectorKind,
    dest: Register,
    source: Register | None,
    value: int,
    profile: TargetProfile,
    prolog: bool,
    where: Where,
) -> list[Violation]:
    out: list[Violation] = []
    allowed = PROLOG_KINDS if prolog else EU_SELECTOR_KINDS
    if kind not in allowed:
        if not prolog:
            return [
                Violation(
                    codes.ISA_SELECTOR_NOT_ALLOWED,
                    f"{kind.name} is only allowed in the prolog",
                    where,
                )
            ]
        return [
            Violation(
                codes.ISA_SELECTOR_NOT_ALLOWED, f"{kind.name} is not allowed in the prolog", where
            )
        ]
    if kind is SelectorKind.MOV:
        if source is None:
            out.append(Violation(codes.ISA_SELECTOR_OPERAND, "MOV needs a source register", where))
        else:
            out += check_register(source, profile, where)
    elif source is not None:
        out.append(
            Violation(codes.ISA_SELECTOR_OPERAND, f"{kind.name} takes no source register", where)
        )
    if kind is SelectorKind.HASH and dest.cls is not RegClass.A:
        out.append(
            Violation(codes.ISA_HASH_INTO_B, f"HASH writes only A registers, not {dest}", where)
        )
    if kind in (SelectorKind.LOAD_IMM, SelectorKind.LOAD_CONST) and dest.cls is not RegClass.B:
        out.append(
            Violation(
                codes.ISA_LOAD_INTO_A, f"{kind.name} writes only B registers, not {dest}", where
            )
        )
    if kind is SelectorKind.LOAD_IMM and not 0 <= value <= WORD_MAX:
        out.append(
            Violation(
                codes.ISA_IMMEDIATE_OUT_OF_RANGE,
                f"immediate {value} does not fit in 32 bits",
                where,
            )
        )
    elif kind is SelectorKind.LOAD_CONST and not 0 <= value < profile.const_table_entries:
        out.append(
            Violation(
                codes.ISA_CONSTANT_INDEX_RANGE,
                f"constant index {value} out of range: {profile.name} has "
                f"{profile.const_table_entries} constant-table entries",
                where,
            )
        )
    elif kind is SelectorKind.LOAD_MD and profile.metadata_by_index(value) is None:
        out.append(Violation(codes.ISA_UNKNOWN_METADATA, f"unknown metadata index {value}", where))
    elif (
        kind not in (SelectorKind.LOAD_IMM, SelectorKind.LOAD_CONST, SelectorKind.LOAD_MD) and value
    ):
        out.append(
            Violation(codes.ISA_SELECTOR_OPERAND, f"{kind.name} takes no operand value", where)
        )
    return out


def _check_control(bundle: Bundle, profile: TargetProfile, next_stage: str) -> list[Violation]:
    control = bundle.control
    out: list[Violation] = []
    if control.op.conditional:
        if control.x is None or control.y is None or control.not_taken is None:
            out.append(
                Violation(
                    codes.ISA_BRANCH_OPERANDS,
                    f"{control.op.name} needs two operands and two targets",
                    ("control",),
                )
            )
            return out
        out += _check_operand(control.x, profile, ("control", "x"))
        out += _check_operand(control.y, profile, ("control", "y"))
        out += check_pc(control.not_taken, profile, ("control", "not_taken"), target=next_stage)
    elif control.x is not None or control.y is not None or control.not_taken is not None:
        out.append(
            Violation(
                codes.ISA_BRANCH_OPERANDS, f"{control.op.name} takes only a target", ("control",)
            )
        )
    halt_target = "the epilog"
    out += check_pc(
        control.taken,
        profile,
        ("control", "taken"),
        target=halt_target if control.op is CtrlOp.HALT else next_stage,
    )
    return out


def check_epilog(epilog: EpilogBundle, profile: TargetProfile) -> list[Violation]:
    out: list[Violation] = []
    if len(epilog.push) > profile.max_push:
        out.append(
            Violation(
                codes.ISA_PUSH_TOO_MANY,
                f"PUSH of {len(epilog.push)} registers exceeds the limit of 2L = {profile.max_push}",
                ("push",),
            )
        )
    for index, reg in enumerate(epilog.push):
        out += check_register(reg, profile, ("push", index))
    action = profile.steering_by_name(epilog.steering.action)
    if action is None:
        names = ", ".join(s.name for s in profile.steering)
        out.append(
            Violation(
                codes.ISA_UNKNOWN_STEERING,
                f"unknown steering action `{epilog.steering.action}` (known: {names})",
                ("steering",),
            )
        )
    elif action.takes_value and epilog.steering.value is None:
        out.append(
            Violation(
                codes.ISA_STEERING_VALUE,
                f"steering action `{action.name}` needs a value",
                ("steering",),
            )
        )
    elif not action.takes_value and epilog.steering.value is not None:
        out.append(
            Violation(
                codes.ISA_STEERING_VALUE,
                f"steering action `{action.name}` takes no value",
                ("steering",),
            )
        )
    value = epilog.steering.value
    if isinstance(value, Register):
        out += check_register(value, profile, ("steering",))
    elif isinstance(value, Imm) and not 0 <= value.value <= STEERING_VALUE_MAX:
        out.append(
            Violation(
                codes.ISA_STEERING_VALUE_RANGE,
                f"steering value {value.value} does not fit in 16 bits",
                ("steering",),
            )
        )
    if isinstance(epilog.next_pc, Register):
        out += check_register(epilog.next_pc, profile, ("next_pc",))
    elif isinstance(epilog.next_pc, PC):
        out += check_pc(epilog.next_pc, profile, ("next_pc",), target="a DPF pointer (prolog)")
    return out
