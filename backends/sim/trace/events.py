"""The text of each unit's work in a trace, with the operand values the unit used.

Every function takes the values the executing stage used — not the registers as they are
afterwards — and returns one :class:`~.record.TraceEvent` naming its instruction:

* prolog selectors: ``POP A0 = 0x64``, ``LOAD_MD A1 <- ingress_port = 0x3``;
* EU selectors (they read the EU-entry registers): ``MOV A3 <- A0 = 0x64``,
  ``LOAD_IMM B0 <- 0xff = 0xff``, ``LOAD_CONST B1 <- const[2] = 0x7``,
  ``HASH A0 <- crc32(A0=0xa001389) = 0xbb72456e`` (the lane's hash of the entry value);
* ALU: ``lane 0: AND A0=0xbb72456e, B0=0xff -> A0=0x6e`` (``NEG`` shows A alone);
* memory: ``lane 0: FAADD [A0=0x6e -> phys 110] B0=0x1 old=0x0 new=0x1 -> B0=0x0`` (the
  address as the profile's ``memory_address`` reads it; the data for every operation but
  LOAD), or ``... [A0=0x6e] B0=0x1 unmapped: memory unchanged -> B0=0x0``;
* branch: ``BLT B0=0x1, 0x3: taken`` (each operand as the profile's ``branch_operands``
  reads it: a register with its value, or the immediate);
* epilog: ``PUSH A0=0x6e, A3=0x1``, ``FWD forward, A1=0x10005 -> 5`` (a register value
  steers by its low 16 bits), ``NEXT_PC A2=0x8001 -> @packet:1``, ``HDR_MOD: code options
  removed``.
"""

from __future__ import annotations

from collections.abc import Sequence

from dpfc.isa import (
    PC,
    UNARY_ALU_OPS,
    AluOp,
    Control,
    EpilogBundle,
    EpilogOp,
    Imm,
    InstructionSlot,
    MemOp,
    Operand,
    Register,
    Selector,
    SelectorKind,
    Unit,
)
from dpfc.target import TargetProfile

from .record import TraceEvent


def _selector(index: int) -> InstructionSlot:
    return InstructionSlot(Unit.SELECTOR, index)


def prolog_event(index: int, sel: Selector, value: int, profile: TargetProfile) -> TraceEvent:
    """Prolog selector ``index`` of its bundle wrote ``value`` to its register."""
    if sel.kind is SelectorKind.LOAD_MD:
        field_ = profile.metadata_by_index(sel.value)
        name = field_.name if field_ is not None else f"metadata[{sel.value}]"
        return TraceEvent(f"LOAD_MD {sel.dest} <- {name} = {value:#x}", _selector(index))
    return TraceEvent(f"{sel.kind.name} {sel.dest} = {value:#x}", _selector(index))


def selector_event(
    index: int, sel: Selector, value: int, entry: Sequence[int], profile: TargetProfile
) -> TraceEvent:
    """EU selector ``index`` selected ``value`` for its register; ``entry`` are the
    EU-entry registers it read (A0.., B0..)."""
    lanes = profile.lanes
    if sel.kind is SelectorKind.MOV:
        assert sel.source is not None
        shown = f"{sel.source}"
    elif sel.kind is SelectorKind.LOAD_IMM:
        shown = f"{sel.value:#x}"
    elif sel.kind is SelectorKind.LOAD_CONST:
        shown = f"const[{sel.value}]"
    else:  # HASH: the CRC of the lane's hash function over the EU-entry value of the register
        function = profile.hash_for_lane(sel.dest.lane).name
        shown = f"{function}({sel.dest}={entry[_at(sel.dest, lanes)]:#x})"
    return TraceEvent(f"{sel.kind.name} {sel.dest} <- {shown} = {value:#x}", _selector(index))


def alu_event(lane: int, op: AluOp, a: int, b: int, result: int) -> TraceEvent:
    """The ALU of ``lane`` computed ``result`` from the selected A and B."""
    operands = f"A{lane}={a:#x}" if op in UNARY_ALU_OPS else f"A{lane}={a:#x}, B{lane}={b:#x}"
    return TraceEvent(
        f"lane {lane}: {op.name} {operands} -> A{lane}={result:#x}",
        InstructionSlot(Unit.ALU, lane),
    )


def memory_event(
    lane: int,
    op: MemOp,
    vaddr: int,
    data: int,
    physical: int | None,
    old: int,
    new: int,
    b_value: int | None,
) -> TraceEvent:
    """The memory unit of ``lane``: ``op`` at virtual address ``vaddr`` with ``data`` (the
    selected B), the word at ``physical`` going from ``old`` to ``new`` (``physical`` None:
    the address is unmapped), ``b_value`` written to B (None: B is left alone)."""
    data_shown = "" if op is MemOp.LOAD else f" B{lane}={data:#x}"
    if physical is None:
        where = f"[A{lane}={vaddr:#x}]{data_shown} unmapped: memory unchanged"
    else:
        where = f"[A{lane}={vaddr:#x} -> phys {physical}]{data_shown} old={old:#x} new={new:#x}"
    result = f" -> B{lane}={b_value:#x}" if b_value is not None else ""
    return TraceEvent(f"lane {lane}: {op.name} {where}{result}", InstructionSlot(Unit.MEMORY, lane))


def branch_event(control: Control, x: int, y: int, taken: bool) -> TraceEvent:
    """A conditional branch compared ``x`` and ``y`` (the values its operands gave)."""
    outcome = "taken" if taken else "not taken"
    text = f"{control.op.name} {_operand(control.x, x)}, {_operand(control.y, y)}: {outcome}"
    return TraceEvent(text, InstructionSlot(Unit.CONTROL, 0))


def _operand(operand: Operand | None, value: int) -> str:
    if isinstance(operand, Register):
        return f"{operand}={value:#x}"
    assert isinstance(operand, Imm)
    return f"{value:#x}"


def epilog_events(
    bundle: EpilogBundle,
    pushed: Sequence[int],
    regs: Sequence[int],
    steer_value: int,
    new_ptr: PC | None,
    lanes: int,
) -> list[TraceEvent]:
    """What the epilog did: pushed ``pushed`` (the values of its PUSH list), steered with
    ``steer_value``, set the pointer to ``new_ptr``; ``regs`` are the registers it read."""
    events = []
    if bundle.push:
        listed = ", ".join(f"{r}={v:#x}" for r, v in zip(bundle.push, pushed, strict=True))
        events.append(TraceEvent(f"PUSH {listed}", _epilog(EpilogOp.PUSH)))
    steering = bundle.steering
    value = steering.value
    if value is None:
        shown = ""
    elif isinstance(value, Imm):
        shown = f", {steer_value}"
    else:
        shown = f", {value}={regs[_at(value, lanes)]:#x} -> {steer_value}"
    explicit = steering.action != "pass" or value is not None  # else no FWD instruction
    events.append(
        TraceEvent(f"FWD {steering.action}{shown}", _epilog(EpilogOp.FWD) if explicit else None)
    )
    next_pc = bundle.next_pc
    if next_pc is not None:
        target = new_ptr if new_ptr is not None else "none"
        if isinstance(next_pc, Register):
            shown = f"{next_pc}={regs[_at(next_pc, lanes)]:#x} -> {target}"
        else:
            shown = f"{target}"
        events.append(TraceEvent(f"NEXT_PC {shown}", _epilog(EpilogOp.NEXT_PC)))
    if bundle.hdr_mod:
        events.append(TraceEvent("HDR_MOD: code options removed", _epilog(EpilogOp.HDR_MOD)))
    return events


def _epilog(op: EpilogOp) -> InstructionSlot:
    return InstructionSlot(Unit.EPILOG, op)


def _at(reg: Register, lanes: int) -> int:
    """The index of ``reg`` in a register list A0..A(L-1), B0..B(L-1)."""
    return reg.cls.value * lanes + reg.lane


__all__ = [
    "alu_event",
    "branch_event",
    "epilog_events",
    "memory_event",
    "prolog_event",
    "selector_event",
]
