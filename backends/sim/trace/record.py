"""What a trace records: one pass of one packet through a pipeline, stage by stage.

Records hold values, not text to parse: the stage number and PC, the registers as words,
each event's text with the instruction it belongs to. :func:`~.render.render_trace` prints
them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from dpfc.isa import EPILOG_STAGE, PC, CodeImage, InstructionSlot, stage_name


@dataclass(frozen=True)
class TraceEvent:
    """One unit's work in a stage, as printed (``lane 0: AND A0=0x5, B0=0x3 -> A0=0x1``),
    and the instruction it ran; None for what the stage does without an instruction (the
    epilog's plain ``FWD pass``)."""

    text: str
    slot: InstructionSlot | None = None


@dataclass
class StageTrace:
    """One stage a packet ran: ``stage`` 0 (prolog), 1.. (EU0..), 31 (epilog), at ``pc``."""

    stage: int
    pc: PC
    events: list[TraceEvent] = field(default_factory=list)
    # A0..A(L-1), B0..B(L-1) after the stage; for the epilog, the registers it read
    registers: tuple[int, ...] = ()
    next_pc: str = ""

    @property
    def name(self) -> str:
        """``prolog``, ``eu0`` .., ``epilog``."""
        return stage_name(self.stage)

    @property
    def is_epilog(self) -> bool:
        return self.stage == EPILOG_STAGE


@dataclass
class PacketTrace:
    """One pass of a packet through a pipe's ingress, or (``egress_port`` set) one frame's
    run through the egress of the pipe that owns its port."""

    pipe: int
    ingress_port: int
    lanes: int = 0  # of the profile: registers A0..A(lanes-1), B0..
    tenant: int | None = None
    stages: list[StageTrace] = field(default_factory=list)
    verdict: str = ""
    reason: str = ""
    outputs: list[int] = field(default_factory=list)
    node: str = ""  # the switch
    sequence: int = 0  # the pass number in the run
    packet: int = 0  # the id of the injected packet this pass belongs to
    egress_port: int | None = None  # set in the trace of an egress pipeline run
    egress: list[PacketTrace] = field(default_factory=list)  # the egress runs of the pass
    code: CodeImage = field(default_factory=CodeImage)  # the in-packet code the packet carried

    @property
    def pipeline(self) -> str:
        """``ingress`` or ``egress``."""
        return "ingress" if self.egress_port is None else "egress"


__all__ = ["PacketTrace", "StageTrace", "TraceEvent"]
