"""The assembler's output: placed bundles of one DPF, plus what a packet needs to invoke it."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from dpfc.diagnostics import Span
from dpfc.encoding.header import SwitchVMHeader
from dpfc.isa.bundle import (
    EPILOG_STAGE,
    PC,
    PROLOG_STAGE,
    Bundle,
    CodeImage,
    EpilogBundle,
    StageBundle,
)
from dpfc.target.profile import TargetProfile


class Placement(Enum):
    """Where a DPF's code lives by default: in each packet or in switch code memory."""

    PACKET = "packet"
    SWITCH = "switch"


@dataclass(frozen=True)
class PlacedBundle:
    stage: int  # 0 prolog, 1..n = EU0..EU(n-1), 31 epilog
    pc: PC  # its own address: in-packet index or code-memory slot of its stage
    bundle: StageBundle
    label: str
    span: Span | None = None  # the bundle head in the source, when assembled from text


@dataclass(frozen=True)
class AssembledProgram:
    name: str
    profile: TargetProfile
    placement: Placement
    app_id: int
    entry: PC
    bundles: tuple[PlacedBundle, ...]

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
        """The SwitchVM header of a packet that runs this DPF with ``stack`` as input."""
        return SwitchVMHeader(
            app_id=self.app_id,
            dpf_ptr=self.entry,
            gas=self.profile.default_gas if gas is None else gas,
            stack=stack,
            code=self.image(),
        )
