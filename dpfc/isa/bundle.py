"""Machine code: registers, PCs and the bundles that fill one stage of a DPF.

A DPF is a prolog bundle, one bundle per EU on each path, and an epilog bundle. A
:class:`Bundle` is what one stage executes for one packet: the selectors (register moves,
hashes, immediates; or, in the prolog, register initialisation), one ALU and one memory op
per lane, and the EU's single branch. :class:`EpilogBundle` holds PUSH/FWD/NEXT_PC/HDR_MOD.
These objects are target-independent data; :mod:`dpfc.isa.check` validates them against a
profile, and :mod:`dpfc.encoding` turns them into bytes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import NamedTuple

from dpfc.isa.opcodes import AluOp, CtrlOp, EpilogOp, MemOp, SelectorKind, Unit


class RegClass(Enum):
    A = 0
    B = 1


@dataclass(frozen=True, order=True)
class Register:
    """``A[lane]`` or ``B[lane]``; sorts in prolog initialisation order (all A, then all B)."""

    cls: RegClass = field(compare=False)
    lane: int = field(compare=False)
    order_key: tuple[int, int] = field(init=False, repr=False, compare=True)

    def __post_init__(self) -> None:
        object.__setattr__(self, "order_key", (self.cls.value, self.lane))

    @staticmethod
    def a(lane: int) -> Register:
        return Register(RegClass.A, lane)

    @staticmethod
    def b(lane: int) -> Register:
        return Register(RegClass.B, lane)

    @property
    def code(self) -> int:
        """5-bit register number of the encoding: class bit 4, lane bits 3..0."""
        return (self.cls.value << 4) | self.lane

    @staticmethod
    def from_code(code: int) -> Register:
        if not 0 <= code <= 0x1F:
            raise ValueError(f"register code {code:#x} out of range")
        return Register(RegClass(code >> 4), code & 0xF)

    def __str__(self) -> str:
        return f"{self.cls.name}{self.lane}"


@dataclass(frozen=True, order=True)
class PC:
    """A code pointer into the *next* stage: in-switch code-memory slot or in-packet bundle."""

    in_packet: bool
    index: int

    def __str__(self) -> str:
        return f"@{'packet' if self.in_packet else 'switch'}:{self.index}"

    @staticmethod
    def parse(text: str) -> PC:
        """Inverse of ``str``: ``@packet:N`` or ``@switch:N``; raises ValueError."""
        where, _, number = text.removeprefix("@").partition(":")
        if where not in ("packet", "switch") or not number.isdigit():
            raise ValueError(f"a PC is @switch:N or @packet:N, got `{text}`")
        return PC(where == "packet", int(number))


@dataclass(frozen=True)
class Imm:
    """A 32-bit immediate operand."""

    value: int

    def __str__(self) -> str:
        return format_imm(self.value)


Operand = Register | Imm


def format_imm(value: int) -> str:
    return str(value) if value < 256 else f"{value:#x}"


@dataclass(frozen=True)
class Selector:
    """One register-selector entry: ``dest`` gets a value from ``kind``.

    ``source`` is the MOV source; ``value`` is the immediate (LOAD_IMM), the constant-table
    index (LOAD_CONST) or the metadata index (LOAD_MD); it is 0 for the other kinds.
    """

    dest: Register
    kind: SelectorKind
    source: Register | None = None
    value: int = 0


@dataclass(frozen=True)
class Control:
    """The EU branch unit: JMP/HALT go to ``taken``; the rest choose taken/not_taken."""

    op: CtrlOp
    taken: PC
    x: Operand | None = None
    y: Operand | None = None
    not_taken: PC | None = None


@dataclass(frozen=True)
class Bundle:
    """One prolog or EU bundle. ``alu`` and ``mem`` hold one opcode per lane."""

    selectors: tuple[Selector, ...]
    alu: tuple[AluOp, ...]
    mem: tuple[MemOp, ...]
    control: Control

    @staticmethod
    def empty(lanes: int, taken: PC) -> Bundle:
        return Bundle((), (AluOp.NOP,) * lanes, (MemOp.NOP,) * lanes, Control(CtrlOp.JMP, taken))

    def immediates(self) -> tuple[int, ...]:
        """Distinct 32-bit immediates in canonical slot order (selectors, then x, then y)."""
        out: list[int] = []
        for sel in self.selectors:
            if sel.kind is SelectorKind.LOAD_IMM and sel.value not in out:
                out.append(sel.value)
        for operand in (self.control.x, self.control.y):
            if isinstance(operand, Imm) and operand.value not in out:
                out.append(operand.value)
        return tuple(out)


@dataclass(frozen=True)
class Steering:
    """FWD: a steering action by name (see the profile's steering table) and its value."""

    action: str
    value: Operand | None = None


@dataclass(frozen=True)
class EpilogBundle:
    push: tuple[Register, ...] = ()
    steering: Steering = Steering("pass")
    next_pc: PC | Register | None = None
    hdr_mod: bool = False


StageBundle = Bundle | EpilogBundle


@dataclass(frozen=True)
class CodeImage:
    """All bundles of a code section, per stage, in PC-index order.

    ``prologs[i]`` is addressed by ``@packet:i`` (or a slot) from a DPF pointer, ``eus[k][i]``
    by a PC held in stage k-1, ``epilogs[i]`` by a PC held in the last EU (or a HALT).
    """

    prologs: tuple[Bundle, ...] = ()
    eus: tuple[tuple[Bundle, ...], ...] = ()
    epilogs: tuple[EpilogBundle, ...] = ()

    def stages(self) -> list[tuple[int, tuple[StageBundle, ...]]]:
        """(stage id, bundles) pairs: 0 = prolog, 1..n = EU0..EU(n-1), 31 = epilog."""
        out: list[tuple[int, tuple[StageBundle, ...]]] = [(PROLOG_STAGE, self.prologs)]
        out.extend((k + 1, bundles) for k, bundles in enumerate(self.eus))
        out.append((EPILOG_STAGE, self.epilogs))
        return out

    def is_empty(self) -> bool:
        return not self.prologs and not any(self.eus) and not self.epilogs


class InstructionSlot(NamedTuple):
    """One instruction of a bundle, by the unit that runs it: ``SELECTOR`` and the index in
    ``selectors`` (prolog selectors too), ``ALU`` or ``MEMORY`` and the lane, ``CONTROL``
    and 0, ``EPILOG`` and the :class:`~dpfc.isa.opcodes.EpilogOp` (``position``). What a
    debug line or a trace event is attached to."""

    unit: Unit
    position: int


def instruction_slots(bundle: StageBundle) -> tuple[InstructionSlot, ...]:
    """The instructions of ``bundle`` in canonical order, the order in which the assembly
    printer prints them (one line each) and objects list their source lines: selectors,
    ALU ops by lane, memory ops by lane, the branch; an epilog's PUSH, FWD (unless the
    plain ``pass``), NEXT_PC, HDR_MOD."""
    if isinstance(bundle, EpilogBundle):
        slots = []
        if bundle.push:
            slots.append(InstructionSlot(Unit.EPILOG, EpilogOp.PUSH))
        steering = bundle.steering
        if steering.action != "pass" or steering.value is not None:
            slots.append(InstructionSlot(Unit.EPILOG, EpilogOp.FWD))
        if bundle.next_pc is not None:
            slots.append(InstructionSlot(Unit.EPILOG, EpilogOp.NEXT_PC))
        if bundle.hdr_mod:
            slots.append(InstructionSlot(Unit.EPILOG, EpilogOp.HDR_MOD))
        return tuple(slots)
    return (
        *(InstructionSlot(Unit.SELECTOR, k) for k in range(len(bundle.selectors))),
        *(
            InstructionSlot(Unit.ALU, lane)
            for lane, op in enumerate(bundle.alu)
            if op is not AluOp.NOP
        ),
        *(
            InstructionSlot(Unit.MEMORY, lane)
            for lane, op in enumerate(bundle.mem)
            if op is not MemOp.NOP
        ),
        InstructionSlot(Unit.CONTROL, 0),
    )


PROLOG_STAGE = 0
EPILOG_STAGE = 31


def stage_name(stage: int) -> str:
    if stage == PROLOG_STAGE:
        return "prolog"
    if stage == EPILOG_STAGE:
        return "epilog"
    return f"eu{stage - 1}"
