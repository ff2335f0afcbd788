"""Operands of ``.dpfasm`` instructions: counts, registers, immediates and branch targets.

Contract: each reader returns the operand's value, or reports why it is not one (with the
operand's span) and returns None, so that the instruction reading it stops without a second,
derived error. Registers are checked against the target (DPF0110 not a register, the ISA
checker's codes for a register the profile lacks); immediates are 32-bit words, signed or
unsigned (DPF0111 not a number, DPF1003 or the caller's code out of range); a branch target
is a label of the next stage, ``HALT``'s of the epilog, ``NEXT_PC``'s of a prolog, or an
address ``@switch:N`` / ``@packet:N`` (DPF0120 unknown label, DPF0121 wrong stage).
"""

from __future__ import annotations

from dpfc.asm.state import (
    REGISTER,
    WORD_MAX,
    WORD_MIN,
    AssemblerState,
    BundleDraft,
    Group,
    hex_text,
    suggest,
    with_article,
)
from dpfc.asm.syntax import Instruction, Operand
from dpfc.catalog import codes
from dpfc.diagnostics import Note
from dpfc.isa import (
    EPILOG_STAGE,
    PC,
    PROLOG_STAGE,
    Imm,
    InstructionSpec,
    RegClass,
    Register,
    check_register,
    stage_name,
)


class OperandReader:
    """Reads the operands of one instruction; see the module docstring for the contract."""

    def __init__(self, state: AssemblerState) -> None:
        self.state = state

    def arity(self, spec: InstructionSpec, instr: Instruction, *counts: int) -> bool:
        if len(instr.operands) in counts:
            return True
        forms = " or ".join(str(c) for c in counts)
        self.state.error(
            codes.ASM_OPERAND_COUNT,
            f"`{spec.mnemonic}` takes {forms} operand{'s' if counts != (1,) else ''} "
            f"({', '.join(o.value for o in spec.operands) or 'none'}), got {len(instr.operands)}",
            instr.span,
        )
        return False

    def register(self, op: Operand, what: str) -> Register | None:
        match = REGISTER.match(op.text) if op.kind in ("name", "mem") else None
        if match is None:
            self.state.error(
                codes.ASM_EXPECTED_REGISTER,
                f"{what} must be a register (A0, B1, ...), got `{op.text}`",
                op.span,
            )
            return None
        reg = Register(RegClass[match.group(1).upper()], int(match.group(2)))
        for violation in check_register(reg, self.state.profile, ()):
            self.state.error(violation.code, violation.message, op.span)
            return None
        if reg.lane > 15:  # beyond the 4-bit lane field, whatever the profile says
            self.state.error(codes.ISA_NO_SUCH_REGISTER, f"register {reg} does not exist", op.span)
            return None
        return reg

    def immediate(
        self,
        op: Operand,
        what: str,
        lo: int = WORD_MIN,
        hi: int = WORD_MAX,
        *,
        code: str = codes.ISA_IMMEDIATE_OUT_OF_RANGE,
        why: str = "",
    ) -> int | None:
        if op.kind != "number" or op.number is None:
            self.state.error(
                codes.ASM_EXPECTED_NUMBER_OR_LABEL,
                f"{what} must be a number, got `{op.text}`",
                op.span,
            )
            return None
        if not lo <= op.number <= hi:
            if not why and (lo, hi) == (WORD_MIN, WORD_MAX):
                why = " (a 32-bit word, signed or unsigned)"
            self.state.error(
                code,
                f"{what} {op.text} out of range {hex_text(lo)}..{hex_text(hi)}{why}",
                op.span,
            )
            return None
        return op.number & 0xFFFF_FFFF

    def reg_or_imm(self, b: BundleDraft, op: Operand, what: str) -> Register | Imm | None:
        if op.kind == "number":
            value = self.immediate(op, what)
            if value is None:
                return None
            b.immediate_spans.setdefault(value, op.span)
            return Imm(value)
        return self.register(op, what)

    def target(
        self, group: Group, op: Operand, *, halt: bool = False, prolog: bool = False
    ) -> PC | None:
        if op.kind == "pcref":
            if op.text not in ("switch", "packet") or op.number is None:
                self.state.error(
                    codes.ASM_EXPECTED_NUMBER_OR_LABEL,
                    f"an address is `@switch:N` or `@packet:N`, got `@{op.text}`",
                    op.span,
                )
                return None
            return PC(op.text == "packet", op.number)
        if op.kind != "name" or REGISTER.match(op.text):
            self.state.error(
                codes.ASM_EXPECTED_NUMBER_OR_LABEL,
                f"expected a label or `@switch:N`/`@packet:N`, got `{op.text}`",
                op.span,
            )
            return None
        target = self.state.labels.get(op.text)
        if target is None:
            self.state.error(
                codes.ASM_UNKNOWN_LABEL,
                f"unknown label `{op.text}`" + suggest(op.text, list(self.state.labels)),
                op.span,
            )
            return None
        if target.pc is None:
            # Its bundle head was rejected (bad stage, bad slot) and reported; a placeholder
            # keeps this reference from adding a second, derived error.
            return PC(False, 0)
        if prolog:
            wanted = PROLOG_STAGE
        elif halt or group.stage == self.state.profile.num_eus:
            wanted = EPILOG_STAGE
        else:
            wanted = group.stage + 1
        if target.stage != wanted:
            self.state.error(
                codes.ASM_LABEL_WRONG_STAGE,
                f"label `{op.text}` is {with_article(stage_name(target.stage))} bundle but this "
                f"{'NEXT_PC' if prolog else 'HALT' if halt else 'target'} must name "
                f"{with_article(stage_name(wanted))} bundle",
                op.span,
                Note(f"`{op.text}` defined here", target.head.label_span or target.head.span),
                hint=None
                if halt or prolog
                else "a PC in stage k names code of stage k+1; use HALT to jump to the epilog",
            )
            return None
        return target.pc
