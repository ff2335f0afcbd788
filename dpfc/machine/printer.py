"""The canonical assembly printer of machine code (the one printer of dpfc).

The output assembles back to the same bytes, and printing is canonical (one text per
program), so asm -> bytes -> disasm -> asm is an identity. Bundles print in stage order,
in-packet ones first by index, then in-switch ones (with ``@slot``); instructions inside a
bundle print in a fixed order: selectors by destination, ALU ops by lane, memory ops by
lane, the branch; epilogs print PUSH, FWD, NEXT_PC, HDR_MOD. PCs print as the label of the
bundle they name (``@switch:N`` / ``@packet:N`` when the program has none there); a NEXT_PC
awaiting a relocation prints the symbol of the DPF it chains to (``NEXT_PC kvs.empty``; the
bytes hold the placeholder ``@switch:0``); the arrays the program binds print as ``.array``
directives, so the text holds everything an object holds but the compiler's notes.

:func:`format_program` optionally ends each instruction line with a note (the compiler's
source line of each instruction, ``; kvs.dpf:34: let tuple = index[key];``); the linker's
disassembler reuses :func:`bundle_lines` with its own names for PCs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from dpfc.encoding import SwitchVMHeader
from dpfc.isa import (
    PC,
    PROLOG_STAGE,
    AluOp,
    Bundle,
    CodeImage,
    CtrlOp,
    EpilogBundle,
    EpilogOp,
    InstructionSlot,
    MemOp,
    Operand,
    Register,
    SelectorKind,
    Unit,
    format_imm,
    instruction_slots,
    stage_name,
)
from dpfc.machine.program import (
    MachineProgram,
    Pipeline,
    PlacedBundle,
    Placement,
    successor_stage,
)
from dpfc.target import TargetProfile

INDENT = "    "

# How a PC field is printed: (stage the PC points into, PC) -> text.
PCNamer = Callable[[int, PC], str]


def _operand(op: Operand) -> str:
    return str(op) if isinstance(op, Register) else format_imm(op.value)


def label_namer(bundles: Sequence[PlacedBundle]) -> PCNamer:
    """Names PCs by the label of the bundle at that (stage, PC), else ``@switch:N``."""
    by_address = {(b.stage, b.pc): b.label for b in bundles}

    def name(stage: int, pc: PC) -> str:
        return by_address.get((stage, pc), str(pc))

    return name


def bundle_lines(
    placed: PlacedBundle,
    name_pc: PCNamer,
    profile: TargetProfile,
    *,
    relocation: str | None = None,
) -> list[str]:
    """The instructions of one bundle, in canonical order (:func:`dpfc.isa.instruction_slots`;
    ``relocation``: the symbol its NEXT_PC awaits, printed instead of the placeholder PC)."""
    return [
        _instruction(placed, slot, name_pc, profile, relocation)
        for slot in instruction_slots(placed.bundle)
    ]


def _instruction(
    placed: PlacedBundle,
    slot: InstructionSlot,
    name_pc: PCNamer,
    profile: TargetProfile,
    relocation: str | None,
) -> str:
    bundle = placed.bundle
    unit, index = slot
    if isinstance(bundle, EpilogBundle):
        if index == EpilogOp.PUSH:
            return "PUSH " + ", ".join(str(r) for r in bundle.push)
        if index == EpilogOp.FWD:
            steering = bundle.steering
            value = f", {_operand(steering.value)}" if steering.value is not None else ""
            return f"FWD {steering.action}{value}"
        if index == EpilogOp.NEXT_PC:
            if isinstance(bundle.next_pc, Register):
                return f"NEXT_PC {bundle.next_pc}"
            assert isinstance(bundle.next_pc, PC)
            return f"NEXT_PC {relocation or name_pc(PROLOG_STAGE, bundle.next_pc)}"
        return "HDR_MOD"
    if unit is Unit.SELECTOR:
        sel = bundle.selectors[index]
        if sel.kind is SelectorKind.MOV:
            return f"MOV {sel.dest}, {sel.source}"
        if sel.kind is SelectorKind.LOAD_IMM:
            return f"LOAD_IMM {sel.dest}, {format_imm(sel.value)}"
        if sel.kind is SelectorKind.LOAD_CONST:
            return f"LOAD_CONST {sel.dest}, {sel.value}"
        if sel.kind is SelectorKind.LOAD_MD:
            md = profile.metadata_by_index(sel.value)
            return f"LOAD_MD {sel.dest}, {md.name if md else sel.value}"
        return f"{sel.kind.name} {sel.dest}"
    if unit is Unit.ALU:
        alu = bundle.alu[index]
        return f"NEG A{index}" if alu is AluOp.NEG else f"{alu.name} A{index}, B{index}"
    if unit is Unit.MEMORY:
        mem = bundle.mem[index]
        if mem is MemOp.STORE:
            return f"STORE [A{index}], B{index}"
        return f"{mem.name} B{index}, [A{index}]"
    ctrl = bundle.control
    into = successor_stage(placed.stage, ctrl.op, profile.num_eus)
    if ctrl.op is CtrlOp.HALT:
        return f"HALT {name_pc(into, ctrl.taken)}"
    if ctrl.op is CtrlOp.JMP:
        return f"JMP {name_pc(into, ctrl.taken)}"
    assert ctrl.x is not None and ctrl.y is not None and ctrl.not_taken is not None
    return (
        f"{ctrl.op.name} {_operand(ctrl.x)}, {_operand(ctrl.y)}, "
        f"{name_pc(into, ctrl.taken)}, {name_pc(into, ctrl.not_taken)}"
    )


def program_lines(program: MachineProgram) -> dict[str, list[str]]:
    """label -> the canonical instructions of that bundle."""
    name_pc = label_namer(program.bundles)
    targets = {r.label: r.target for r in program.relocations}
    return {
        b.label: bundle_lines(b, name_pc, program.profile, relocation=targets.get(b.label))
        for b in program.bundles
    }


def format_program(
    program: MachineProgram,
    *,
    comments: Mapping[tuple[int, PC], str] | None = None,
    notes: Mapping[str, Sequence[str | None]] | None = None,
) -> str:
    """Canonical assembly text of a program. ``comments`` put a comment line above the
    bundle at (stage, PC); ``notes`` (label -> one note per instruction) end instruction
    lines with ``; note``, the instructions padded to one column."""
    profile = program.profile
    ordered = program.ordered()
    lines_of = program_lines(program)
    out = [
        f".dpf {program.name}",
        f".target {profile.name}",
        f".placement {program.placement.value}",
    ]
    if program.pipeline is Pipeline.EGRESS:  # the default, ingress, is not printed
        out.append(f".pipeline {program.pipeline.value}")
    if program.app_id:
        out.append(f".app {program.app_id:#x}")
    out.append(f".entry {label_namer(ordered)(PROLOG_STAGE, program.entry)}")
    for array in program.arrays:
        out.append(
            f".array {array.name} {array.mapping} {array.size} eu{array.eu} lane{array.lane}"
        )
    width = max((len(line) for lines in lines_of.values() for line in lines), default=20)
    for placed in ordered:
        out.append("")
        if comments and (placed.stage, placed.pc) in comments:
            out.append(f"; {comments[(placed.stage, placed.pc)]}")
        slot = ""
        if program.placement is Placement.SWITCH or not placed.pc.in_packet:
            slot = f" @{placed.pc.index}"
        out.append(f"{stage_name(placed.stage)} {placed.label}{slot}:")
        bundle_notes = list(notes.get(placed.label, ())) if notes else []
        for k, line in enumerate(lines_of[placed.label]):
            note = bundle_notes[k] if k < len(bundle_notes) else None
            if note is None:
                out.append(INDENT + line)
            else:
                out.append((INDENT + line.ljust(width) + "  ; " + note).rstrip())
    return "\n".join(out) + "\n"


def program_from_image(
    image: CodeImage,
    profile: TargetProfile,
    *,
    name: str = "dpf",
    app_id: int = 0,
    entry: PC | None = None,
    pipeline: Pipeline = Pipeline.INGRESS,
) -> MachineProgram:
    """Wrap decoded in-packet code as a program with generated labels (``eu1_0``...)."""
    placed: list[PlacedBundle] = []
    for stage, bundles in image.stages():
        for index, bundle in enumerate(bundles):
            placed.append(
                PlacedBundle(stage, PC(True, index), bundle, f"{stage_name(stage)}_{index}")
            )
    return MachineProgram(
        name,
        profile,
        Placement.PACKET,
        app_id,
        entry if entry is not None else PC(True, 0),
        tuple(placed),
        pipeline=pipeline,
    )


def program_from_slots(
    slots: dict[int, dict[int, Bundle | EpilogBundle]],
    profile: TargetProfile,
    *,
    name: str = "dpf",
    app_id: int = 0,
    entry: PC | None = None,
) -> MachineProgram:
    """Wrap in-switch code (stage -> slot -> bundle) as a program with generated labels."""
    placed = [
        PlacedBundle(stage, PC(False, slot), bundle, f"{stage_name(stage)}_s{slot}")
        for stage in sorted(slots)
        for slot, bundle in sorted(slots[stage].items())
    ]
    first = entry if entry is not None else PC(False, min(slots.get(PROLOG_STAGE, {0: None})))
    return MachineProgram(name, profile, Placement.SWITCH, app_id, first, tuple(placed))


def disassemble_header(header: SwitchVMHeader, profile: TargetProfile, name: str = "dpf") -> str:
    """Assembly text of a packet's in-packet code, with the header's fields as comments."""
    lines = [
        f"; SwitchVM header: app_id={header.app_id:#x} dpf_ptr={header.dpf_ptr or 'none'} "
        f"egress_ptr={header.egress_ptr or 'none'} gas={header.gas} flags={header.flags:#x}",
        "; stack (top first): " + (", ".join(f"{v:#x}" for v in header.stack) or "empty"),
    ]
    if header.code.is_empty():
        runs = [
            f"in-switch {what} DPF at {pointer}"
            for what, pointer in (("ingress", header.dpf_ptr), ("egress", header.egress_ptr))
            if pointer is not None
        ]
        lines.append("; no in-packet code" + (": runs " + " and ".join(runs) if runs else ""))
        return "\n".join(lines) + "\n"
    ingress = header.dpf_ptr if header.dpf_ptr is not None and header.dpf_ptr.in_packet else None
    egress = (
        header.egress_ptr if header.egress_ptr is not None and header.egress_ptr.in_packet else None
    )
    # The code is one program whose entry is the ingress DPF's prolog; a packet that carries
    # only an egress DPF prints as that egress DPF (so the text assembles back to it).
    pipeline = Pipeline.EGRESS if ingress is None and egress is not None else Pipeline.INGRESS
    entry = ingress if ingress is not None else egress
    if entry is None and header.code.prologs:
        lines.append(
            "; the DPF pointer does not name in-packet code; entry is the first in-packet prolog"
        )
    if ingress is not None and egress is not None:
        lines.append(f"; the egress DPF's prolog is in-packet prolog {egress.index}")
    program = program_from_image(
        header.code, profile, name=name, app_id=header.app_id, entry=entry, pipeline=pipeline
    )
    return "\n".join(lines) + "\n" + format_program(program)


__all__ = [
    "PCNamer",
    "bundle_lines",
    "disassemble_header",
    "format_program",
    "label_namer",
    "program_from_image",
    "program_from_slots",
    "program_lines",
]
