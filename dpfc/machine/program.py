"""The machine program of one DPF: placed bundles, what a packet needs to invoke it, the
memory it needs and the chain targets a linker must fill in.

This is the one hand-off type between the producers of machine code (the assembler,
:mod:`dpfc.codegen`, the object reader) and its consumers (the encoders of
:mod:`dpfc.machine.encoded`, the object writer, the linker, the printer). It holds no bytes:
:func:`dpfc.machine.encoded.encode_program` encodes and checks it once.

Addresses: every bundle has a PC of its stage — an in-packet bundle index
(``@packet:i``) or a code-memory slot (``@switch:i``). For code that is not yet linked the
slots are *local*: numbered from 0 per stage within the DPF, moved by the linker. A PC
field of a bundle is local when the program has a bundle at that (stage, PC); a field
named by a :class:`Relocation` awaits a chained DPF's prolog; any other PC is absolute
(hand-written assembly may name a prolog already installed, ``NEXT_PC @switch:1``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from enum import Enum

from dpfc.diagnostics import Span
from dpfc.encoding import SwitchVMHeader
from dpfc.isa import (
    EPILOG_STAGE,
    PC,
    PROLOG_STAGE,
    Bundle,
    CodeImage,
    Control,
    CtrlOp,
    EpilogBundle,
    StageBundle,
)
from dpfc.target import TargetProfile


class Placement(Enum):
    """Where a DPF's code lives by default: in each packet or in switch code memory."""

    PACKET = "packet"
    SWITCH = "switch"


class Pipeline(Enum):
    """The pipeline that runs a DPF (docs/isa.md §6 item 20): the ingress DPF is named by
    the header's ``dpf_ptr`` (or the tenant's default DPF), the egress DPF by its
    ``egress_ptr``, once the output port is chosen."""

    INGRESS = "ingress"
    EGRESS = "egress"


@dataclass(frozen=True)
class PlacedBundle:
    stage: int  # 0 prolog, 1..n = EU0..EU(n-1), 31 epilog
    pc: PC  # its own address: in-packet index or code-memory slot of its stage
    bundle: StageBundle
    label: str
    span: Span | None = None  # the bundle head in the source, when assembled from text


@dataclass(frozen=True)
class ArrayBinding:
    """An array the DPF accesses and where it lives: ``size`` words of (``eu``, ``lane``),
    mapped ``direct`` (one exact-match entry per index) or in ``segment`` mappings. ``name`` is
    qualified by its module (``kvs.index``), so DPFs of several modules name one array
    alike."""

    name: str
    mapping: str  # "direct" | "segment"
    size: int
    eu: int
    lane: int


@dataclass(frozen=True)
class Relocation:
    """The epilog ``label`` chains to DPF ``target`` (a symbol, ``module.dpf``): its
    NEXT_PC holds :data:`PLACEHOLDER` until the linker writes the target's prolog PC."""

    label: str
    target: str


PLACEHOLDER = PC(False, 0)  # NEXT_PC of an unresolved chain


@dataclass(frozen=True)
class MachineProgram:
    name: str
    profile: TargetProfile
    placement: Placement
    app_id: int
    entry: PC
    bundles: tuple[PlacedBundle, ...]
    arrays: tuple[ArrayBinding, ...] = ()
    relocations: tuple[Relocation, ...] = ()
    # An egress DPF's arrays live in the egress pipeline's lane memories and its chains
    # name egress DPFs; its code shares the one (stage, slot) address space.
    pipeline: Pipeline = Pipeline.INGRESS

    def image(self) -> CodeImage:
        """The in-packet bundles, per stage, in PC-index order."""
        packet = [b for b in self.bundles if b.pc.in_packet]

        def stage_list(stage: int) -> list[StageBundle]:
            return [
                b.bundle
                for b in sorted((b for b in packet if b.stage == stage), key=lambda b: b.pc.index)
            ]

        prologs = [b for b in stage_list(PROLOG_STAGE) if isinstance(b, Bundle)]
        eus = [
            tuple(b for b in stage_list(k + 1) if isinstance(b, Bundle))
            for k in range(self.profile.num_eus)
        ]
        while eus and not eus[-1]:
            eus.pop()
        epilogs = [b for b in stage_list(EPILOG_STAGE) if isinstance(b, EpilogBundle)]
        return CodeImage(tuple(prologs), tuple(eus), tuple(epilogs))

    def switch_slots(self) -> dict[int, dict[int, StageBundle]]:
        """In-switch bundles: stage -> slot -> bundle (what must be installed)."""
        out: dict[int, dict[int, StageBundle]] = {}
        for placed in self.bundles:
            if not placed.pc.in_packet:
                out.setdefault(placed.stage, {})[placed.pc.index] = placed.bundle
        return out

    def header(self, stack: tuple[int, ...] = (), gas: int | None = None) -> SwitchVMHeader:
        """The SwitchVM header of a packet that runs this DPF with ``stack`` as input: an
        ingress DPF's entry is the DPF pointer; an egress DPF's is the egress pointer, and
        the DPF pointer is none (the ingress runs the tenant's default DPF, or nothing)."""
        egress = self.pipeline is Pipeline.EGRESS
        return SwitchVMHeader(
            app_id=self.app_id,
            dpf_ptr=None if egress else self.entry,
            egress_ptr=self.entry if egress else None,
            gas=self.profile.default_gas if gas is None else gas,
            stack=stack,
            code=self.image(),
        )

    def ordered(self) -> list[PlacedBundle]:
        """The bundles in canonical order: by stage, in-packet before in-switch, by index."""
        return sorted(self.bundles, key=lambda b: (b.stage, not b.pc.in_packet, b.pc.index))

    def entry_label(self) -> str:
        return next(b.label for b in self.bundles if b.stage == PROLOG_STAGE and b.pc == self.entry)

    def as_switch(self) -> MachineProgram:
        """The same code with every in-packet PC turned into the local switch slot of the
        same index: the form an in-packet DPF takes when a linker installs it (a chain
        target). In-switch programs are returned unchanged."""
        if not any(b.pc.in_packet for b in self.bundles):
            return self

        def local(pc: PC, _stage: int) -> PC:
            return PC(False, pc.index) if pc.in_packet else pc

        bundles = tuple(
            replace(
                b,
                pc=local(b.pc, b.stage),
                bundle=move_pcs(b.bundle, b.stage, self.profile.num_eus, local),
            )
            for b in self.bundles
        )
        return replace(
            self,
            placement=Placement.SWITCH,
            entry=local(self.entry, PROLOG_STAGE),
            bundles=bundles,
        )


def successor_stage(stage: int, op: CtrlOp, num_eus: int) -> int:
    """The stage a control op of ``stage`` jumps into: the next stage, or the epilog for a
    HALT or from the last EU."""
    if op is CtrlOp.HALT or stage == num_eus:
        return EPILOG_STAGE
    return stage + 1


def move_pcs(
    bundle: StageBundle, stage: int, num_eus: int, move: Callable[[PC, int], PC]
) -> StageBundle:
    """``bundle`` (of ``stage``) with each PC field replaced by ``move(pc, stage the PC
    points into)``: the branch targets of a bundle, the NEXT_PC of an epilog."""
    if isinstance(bundle, EpilogBundle):
        if isinstance(bundle.next_pc, PC):
            return replace(bundle, next_pc=move(bundle.next_pc, PROLOG_STAGE))
        return bundle
    control = bundle.control
    target = successor_stage(stage, control.op, num_eus)
    moved = Control(
        control.op,
        move(control.taken, target),
        control.x,
        control.y,
        None if control.not_taken is None else move(control.not_taken, target),
    )
    return replace(bundle, control=moved)


def pc_fields(bundle: StageBundle, stage: int, num_eus: int) -> list[tuple[int, PC]]:
    """The (stage, PC) pairs ``bundle`` names (its successors and chain target)."""
    found: list[tuple[int, PC]] = []

    def note(pc: PC, target: int) -> PC:
        found.append((target, pc))
        return pc

    move_pcs(bundle, stage, num_eus, note)
    return found


__all__ = [
    "PLACEHOLDER",
    "ArrayBinding",
    "MachineProgram",
    "Pipeline",
    "PlacedBundle",
    "Placement",
    "Relocation",
    "move_pcs",
    "pc_fields",
    "successor_stage",
]
