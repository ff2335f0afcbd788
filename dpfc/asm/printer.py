"""Disassembler: print machine code as canonical ``.dpfasm`` text.

The output assembles back to the same bytes, and printing is canonical (one text per
program), so asm -> bytes -> disasm -> asm is an identity. Bundles print in stage order,
in-packet ones first by index, then in-switch ones (with ``@slot``); instructions inside a
bundle print in a fixed order: selectors by destination, ALU ops by lane, memory ops by
lane, the branch; epilogs print PUSH, FWD, NEXT_PC, HDR_MOD.
"""

from __future__ import annotations

from dpfc.asm.program import AssembledProgram, PlacedBundle, Placement
from dpfc.encoding.header import SwitchVMHeader
from dpfc.isa.bundle import (
    EPILOG_STAGE,
    PC,
    PROLOG_STAGE,
    Bundle,
    CodeImage,
    EpilogBundle,
    Operand,
    Register,
    format_imm,
    stage_name,
)
from dpfc.isa.opcodes import AluOp, CtrlOp, MemOp, SelectorKind
from dpfc.target.profile import TargetProfile

INDENT = "    "


def _operand(op: Operand) -> str:
    return str(op) if isinstance(op, Register) else format_imm(op.value)


class _Labels:
    def __init__(self, bundles: list[PlacedBundle], num_eus: int) -> None:
        self.by_address = {(b.stage, b.pc): b.label for b in bundles}
        self.num_eus = num_eus

    def pc(self, stage: int, pc: PC) -> str:
        return self.by_address.get((stage, pc), str(pc))


def _bundle_lines(placed: PlacedBundle, labels: _Labels, profile: TargetProfile) -> list[str]:
    bundle = placed.bundle
    lines: list[str] = []
    if isinstance(bundle, EpilogBundle):
        if bundle.push:
            lines.append("PUSH " + ", ".join(str(r) for r in bundle.push))
        steering = bundle.steering
        if steering.action != "pass" or steering.value is not None:
            value = f", {_operand(steering.value)}" if steering.value is not None else ""
            lines.append(f"FWD {steering.action}{value}")
        if isinstance(bundle.next_pc, Register):
            lines.append(f"NEXT_PC {bundle.next_pc}")
        elif isinstance(bundle.next_pc, PC):
            lines.append(f"NEXT_PC {labels.pc(PROLOG_STAGE, bundle.next_pc)}")
        if bundle.hdr_mod:
            lines.append("HDR_MOD")
        return lines
    assert isinstance(bundle, Bundle)
    for sel in bundle.selectors:
        name = sel.kind.name
        if sel.kind is SelectorKind.MOV:
            lines.append(f"MOV {sel.dest}, {sel.source}")
        elif sel.kind is SelectorKind.LOAD_IMM:
            lines.append(f"LOAD_IMM {sel.dest}, {format_imm(sel.value)}")
        elif sel.kind is SelectorKind.LOAD_CONST:
            lines.append(f"LOAD_CONST {sel.dest}, {sel.value}")
        elif sel.kind is SelectorKind.LOAD_MD:
            md = profile.metadata_by_index(sel.value)
            lines.append(f"LOAD_MD {sel.dest}, {md.name if md else sel.value}")
        else:
            lines.append(f"{name} {sel.dest}")
    for lane, alu in enumerate(bundle.alu):
        if alu is AluOp.NEG:
            lines.append(f"NEG A{lane}")
        elif alu is not AluOp.NOP:
            lines.append(f"{alu.name} A{lane}, B{lane}")
    for lane, mem in enumerate(bundle.mem):
        if mem is MemOp.STORE:
            lines.append(f"STORE [A{lane}], B{lane}")
        elif mem is not MemOp.NOP:
            lines.append(f"{mem.name} B{lane}, [A{lane}]")
    ctrl = bundle.control
    next_stage = EPILOG_STAGE if placed.stage == labels.num_eus else placed.stage + 1
    if ctrl.op is CtrlOp.HALT:
        lines.append(f"HALT {labels.pc(EPILOG_STAGE, ctrl.taken)}")
    elif ctrl.op is CtrlOp.JMP:
        lines.append(f"JMP {labels.pc(next_stage, ctrl.taken)}")
    else:
        assert ctrl.x is not None and ctrl.y is not None and ctrl.not_taken is not None
        lines.append(
            f"{ctrl.op.name} {_operand(ctrl.x)}, {_operand(ctrl.y)}, "
            f"{labels.pc(next_stage, ctrl.taken)}, {labels.pc(next_stage, ctrl.not_taken)}"
        )
    return lines


def format_program(
    program: AssembledProgram, *, comments: dict[tuple[int, PC], str] | None = None
) -> str:
    """Canonical assembly text of a program."""
    profile = program.profile
    ordered = sorted(program.bundles, key=lambda b: (b.stage, not b.pc.in_packet, b.pc.index))
    labels = _Labels(ordered, profile.num_eus)
    out = [
        f".dpf {program.name}",
        f".target {profile.name}",
        f".placement {program.placement.value}",
    ]
    if program.app_id:
        out.append(f".app {program.app_id:#x}")
    out.append(f".entry {labels.pc(PROLOG_STAGE, program.entry)}")
    for placed in ordered:
        out.append("")
        if comments and (placed.stage, placed.pc) in comments:
            out.append(f"; {comments[(placed.stage, placed.pc)]}")
        slot = ""
        if (
            program.placement is Placement.PACKET and not placed.pc.in_packet
        ) or program.placement is Placement.SWITCH:
            slot = f" @{placed.pc.index}"
        out.append(f"{stage_name(placed.stage)} {placed.label}{slot}:")
        out.extend(INDENT + line for line in _bundle_lines(placed, labels, profile))
    return "\n".join(out) + "\n"


def program_from_image(
    image: CodeImage,
    profile: TargetProfile,
    *,
    name: str = "dpf",
    app_id: int = 0,
    entry: PC | None = None,
) -> AssembledProgram:
    """Wrap decoded in-packet code as a program with generated labels (``eu1_0``...)."""
    placed: list[PlacedBundle] = []
    for stage, bundles in image.stages():
        for index, bundle in enumerate(bundles):
            placed.append(
                PlacedBundle(stage, PC(True, index), bundle, f"{stage_name(stage)}_{index}")
            )
    return AssembledProgram(
        name,
        profile,
        Placement.PACKET,
        app_id,
        entry if entry is not None else PC(True, 0),
        tuple(placed),
    )


def program_from_slots(
    slots: dict[int, dict[int, Bundle | EpilogBundle]],
    profile: TargetProfile,
    *,
    name: str = "dpf",
    app_id: int = 0,
    entry: PC | None = None,
) -> AssembledProgram:
    """Wrap in-switch code (stage -> slot -> bundle) as a program with generated labels."""
    placed = [
        PlacedBundle(stage, PC(False, slot), bundle, f"{stage_name(stage)}_s{slot}")
        for stage in sorted(slots)
        for slot, bundle in sorted(slots[stage].items())
    ]
    first = entry if entry is not None else PC(False, min(slots.get(PROLOG_STAGE, {0: None})))
    return AssembledProgram(name, profile, Placement.SWITCH, app_id, first, tuple(placed))


def disassemble_header(header: SwitchVMHeader, profile: TargetProfile, name: str = "dpf") -> str:
    """Assembly text of a packet's in-packet code, with the header's fields as comments."""
    lines = [
        f"; SwitchVM header: app_id={header.app_id:#x} dpf_ptr={header.dpf_ptr or 'none'} "
        f"egress_ptr={header.egress_ptr or 'none'} gas={header.gas} flags={header.flags:#x}",
        "; stack (top first): " + (", ".join(f"{v:#x}" for v in header.stack) or "empty"),
    ]
    if header.code.is_empty():
        lines.append(
            "; no in-packet code"
            + (f": runs in-switch DPF at {header.dpf_ptr}" if header.dpf_ptr else "")
        )
        return "\n".join(lines) + "\n"
    entry = header.dpf_ptr if header.dpf_ptr is not None and header.dpf_ptr.in_packet else None
    if entry is None and header.code.prologs:
        lines.append(
            "; the DPF pointer does not name in-packet code; entry is the first in-packet prolog"
        )
    program = program_from_image(header.code, profile, name=name, app_id=header.app_id, entry=entry)
    return "\n".join(lines) + "\n" + format_program(program)


__all__ = [
    "disassemble_header",
    "format_program",
    "program_from_image",
    "program_from_slots",
]
