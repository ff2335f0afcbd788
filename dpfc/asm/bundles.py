"""Building one bundle (pass 2 of the assembler): its instructions are dispatched to their
unit's reader, then the bundle is made and checked by the ISA checker.

Contract:

* An unknown mnemonic is DPF0101; an instruction of another section (an EU's ``ADD`` in the
  epilog) is DPF0102, with a hint saying where it belongs. A prolog's ``JMP`` is allowed.
* A bundle whose instructions had errors is not built (its diagnostics stand alone); an EU
  or prolog bundle with no branch is DPF0116 (unless one of its lines failed to parse).
* Each violation :mod:`dpfc.isa.check` finds in the built bundle is reported at the span of
  the instruction or operand it is about (else the bundle's head), and the bundle dropped.
* For in-packet bundles the spans of their PC operands are kept (``operand_spans``), so
  that whole-image violations can point at them too.
"""

from __future__ import annotations

from dpfc.asm.state import AssemblerState, BundleDraft, Group, suggest
from dpfc.asm.syntax import Instruction
from dpfc.asm.units import UnitReader
from dpfc.catalog import codes
from dpfc.diagnostics import Span
from dpfc.isa import (
    BY_MNEMONIC,
    EPILOG_STAGE,
    PROLOG_STAGE,
    AluOp,
    Bundle,
    EpilogBundle,
    InstructionSpec,
    MemOp,
    StageBundle,
    Steering,
    Unit,
    Violation,
    check_bundle,
    check_epilog,
    stage_name,
)
from dpfc.machine import PlacedBundle


class BundleBuilder:
    """Builds and checks each bundle from the instructions its group holds, each
    instruction read by a :class:`~dpfc.asm.units.UnitReader`."""

    def __init__(self, state: AssemblerState, units: UnitReader) -> None:
        self.state = state
        self.units = units

    def build(self, group: Group) -> PlacedBundle | None:
        assert group.pc is not None
        builder = BundleDraft(self.state.profile.lanes)
        before = len(self.state.diagnostics)
        for instr in group.instructions:
            self._instruction(group, builder, instr)
        if len(self.state.diagnostics) > before:
            return None
        bundle: StageBundle
        if group.stage == EPILOG_STAGE:
            bundle = EpilogBundle(
                tuple(r for r, _ in builder.push),
                builder.steering[0] if builder.steering else Steering("pass"),
                builder.next_pc[0] if builder.next_pc else None,
                builder.hdr_mod is not None,
            )
            violations = check_epilog(bundle, self.state.profile)
        else:
            if builder.control is None:
                if group.has_syntax_error:
                    return None
                self.state.error(
                    codes.ASM_NO_CONTROL,
                    f"{stage_name(group.stage)} bundle `{group.label}` names no successor: end it with "
                    + ("JMP" if group.stage == PROLOG_STAGE else "JMP, HALT or a branch"),
                    group.head.span,
                )
                return None
            bundle = Bundle(
                tuple(sel for _, (sel, _) in sorted(builder.selectors.items())),
                tuple(
                    builder.alu.get(lane, (AluOp.NOP, None))[0]
                    for lane in range(self.state.profile.lanes)
                ),
                tuple(
                    builder.mem.get(lane, (MemOp.NOP, None))[0]
                    for lane in range(self.state.profile.lanes)
                ),
                builder.control[0],
            )
            violations = check_bundle(
                bundle,
                self.state.profile,
                prolog=group.stage == PROLOG_STAGE,
                next_stage=self._next_stage_name(group.stage),
            )
        for violation in violations:
            self.state.error(
                violation.code, violation.message, self._where_span(group, builder, violation)
            )
        if violations:
            return None
        if group.pc.in_packet:
            spans = dict(builder.control_operands)
            if builder.next_pc is not None:
                spans["next_pc"] = builder.next_pc[1]
            self.state.operand_spans[(group.stage, group.pc.index)] = spans
        return PlacedBundle(group.stage, group.pc, bundle, group.label, group.head.span)

    def _next_stage_name(self, stage: int) -> str:
        return "epilog" if stage == self.state.profile.num_eus else stage_name(stage + 1)

    def _where_span(self, group: Group, b: BundleDraft, v: Violation) -> Span:
        key = v.where
        if key[:1] == ("selector",):
            for reg, (_, span) in b.selectors.items():
                if str(reg) == key[1]:
                    return span
        if key[:1] == ("alu",) and isinstance(key[1], int) and key[1] in b.alu:
            return b.alu[key[1]][1]
        if key[:1] == ("mem",) and isinstance(key[1], int) and key[1] in b.mem:
            return b.mem[key[1]][1]
        if key[:1] == ("control",) and len(key) > 1 and key[1] in b.control_operands:
            return b.control_operands[str(key[1])]
        if key[:1] == ("control",) and b.control is not None:
            return b.control[1]
        if key[:1] == ("immediates",) and b.immediate_spans:
            limit = self.state.profile.immediates_per_bundle
            spans = list(b.immediate_spans.values())
            return spans[min(limit, len(spans) - 1)]
        if key[:1] == ("push",):
            if len(key) > 1 and isinstance(key[1], int):
                return b.push[key[1]][1]
            if len(b.push) > self.state.profile.max_push:
                return b.push[self.state.profile.max_push][1]
            return b.push_spans[-1] if b.push_spans else group.head.span
        if key[:1] == ("steering",) and b.steering is not None:
            return b.steering[1]
        if key[:1] == ("next_pc",) and b.next_pc is not None:
            return b.next_pc[1]
        return group.head.span

    def _instruction(self, group: Group, b: BundleDraft, instr: Instruction) -> None:
        mnemonic = instr.mnemonic.upper()
        spec = BY_MNEMONIC.get(mnemonic)
        if spec is None:
            self.state.error(
                codes.ASM_UNKNOWN_INSTRUCTION,
                f"unknown instruction `{instr.mnemonic}`" + suggest(mnemonic, list(BY_MNEMONIC)),
                instr.mnemonic_span,
            )
            return
        section = (
            "prolog"
            if group.stage == PROLOG_STAGE
            else "epilog"
            if group.stage == EPILOG_STAGE
            else "eu"
        )
        prolog_jump = section == "prolog" and spec.mnemonic == "JMP"
        if spec.section.value != section and not prolog_jump:
            kind = {"prolog": "a prolog", "eu": "an EU", "epilog": "an epilog"}[spec.section.value]
            self.state.error(
                codes.ASM_WRONG_SECTION,
                f"`{mnemonic}` is {kind} instruction and cannot appear in {stage_name(group.stage)}",
                instr.mnemonic_span,
                hint=_section_hint(spec, section),
            )
            return
        handler = {
            Unit.PROLOG: self.units.selector,
            Unit.SELECTOR: self.units.selector,
            Unit.ALU: self.units.alu,
            Unit.MEMORY: self.units.memory,
            Unit.CONTROL: self.units.control,
            Unit.EPILOG: self.units.epilog,
        }[spec.unit]
        handler(group, b, spec, instr)


def _section_hint(spec: InstructionSpec, section: str) -> str:
    if section == "prolog" and spec.unit is Unit.CONTROL:
        return "a prolog ends with `JMP` to an eu0 bundle; it has no other branch"
    if spec.unit is Unit.PROLOG:
        return "registers are initialised (POP, PEEK, LOAD_MD, RAND) only in the prolog"
    if spec.unit is Unit.EPILOG:
        return "PUSH, FWD, NEXT_PC and HDR_MOD run only in the epilog"
    return "ALU, memory, selector and branch instructions run only in EU bundles"
