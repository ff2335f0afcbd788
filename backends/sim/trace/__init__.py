"""Per-pass execution traces (``dpfc run --trace``): what is recorded, and how it is printed.

A trace is recorded only when asked for, so ordinary runs pay nothing for it.

* :mod:`.record`: :class:`PacketTrace`, one pass (or one egress run) of one packet: for
  each stage it ran (:class:`StageTrace`) the stage and PC, one :class:`TraceEvent` per unit
  that did something, with the operand values that unit used (the text of
  :mod:`.events`) and the instruction it ran (:class:`~dpfc.isa.InstructionSlot`), the
  registers after the stage and the next PC; then the steering verdict and its reason, and
  the egress runs of the frames that left.
* :mod:`.render`: :func:`render_trace`, the text of a trace; given a :class:`TraceSources`
  (the simulator knows nothing of how code was made: a front end that does — ``dpfc run``'s
  scenarios — supplies one), each stage also names its DPF and bundle, each event the
  source line of its instruction, and each stage the variables its registers hold.
"""

from .record import PacketTrace, StageTrace, TraceEvent
from .render import SourceLine, StageSource, TraceSources, render_trace

__all__ = [
    "PacketTrace",
    "SourceLine",
    "StageSource",
    "StageTrace",
    "TraceEvent",
    "TraceSources",
    "render_trace",
]
