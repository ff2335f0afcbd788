"""The text of a trace, with the source of the code when a front end knows it.

:func:`render_trace` is the one printer of traces: ``dpfc run --trace`` and
``--trace-file`` print through it, and any other command that runs packets through the
simulator and prints their traces calls it the same way. Without sources it prints the
machine view alone::

    pass 1 (packet 1) at tor pipe 0 port 0, tenant 7
      eu1 @switch:0
        HASH A0 <- crc32(A0=0xa001389) = 0xbb72456e
        lane 0: AND A0=0xbb72456e, B0=0xff -> A0=0x6e
        regs A=[0x6e 0x0 0x0 0x0] B=[0xff 0x1 0x0 0x1]
        next @switch:0
      pass: passed -> port(s) 2

With a :class:`TraceSources` (which maps each stage run to a :class:`StageSource`, or None
where it knows nothing of the code), the stage line names the DPF and the bundle's label,
each event ends with the source line of its instruction (``; file:line: text``; the text
once per stage, ``; file:line`` when a line repeats), and a ``vars`` line under the
registers names the source variables they hold, with their values::

      eu1 @switch:0 in flow_guard.flow_guard (eu1_n0)
        HASH A0 <- crc32(A0=0xa001389) = 0xbb72456e     ; flow_guard.dpf:20: let flow = ...
        LOAD_IMM B0 <- 0xff = 0xff
        lane 0: AND A0=0xbb72456e, B0=0xff -> A0=0x6e   ; flow_guard.dpf:20
        regs A=[0x6e 0x0 0x0 0x0] B=[0xff 0x1 0x0 0x1]
        vars flow=0x6e (A0)
        next @switch:0

For the epilog, ``vars`` names what the registers it read hold. Egress runs follow the
pass, indented one step further, rendered alike.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from dpfc.isa import InstructionSlot, Register

from .record import PacketTrace, StageTrace

NOTE_COLUMN = 48  # events shorter than this are padded to it before their source note


@dataclass(frozen=True)
class SourceLine:
    """A line of source: ``location`` (``file:line``) and its text (stripped; empty when
    the file cannot be read)."""

    location: str
    text: str


@dataclass(frozen=True)
class StageSource:
    """What the source says about the bundle one stage ran: the DPF (its symbol), the
    bundle's label, the source line of each of its instructions that has one, and the
    source variable each register holds (after the bundle; for an epilog, when it runs)."""

    dpf: str
    label: str
    lines: Mapping[InstructionSlot, SourceLine] = field(default_factory=dict)
    variables: Mapping[Register, str] = field(default_factory=dict)


class TraceSources(Protocol):
    """Maps the stages of a traced run to the source of their code."""

    def stage_sources(self, run: PacketTrace) -> Sequence[StageSource | None]:
        """One entry per stage of ``run.stages`` (None: the code is not known). ``run`` is a
        pass or one of its egress runs (``run.egress_port`` set); ``run.node`` names the
        switch, ``run.code`` is the in-packet code the packet carried."""
        ...


def render_trace(trace: PacketTrace, sources: TraceSources | None = None) -> str:
    """The text of one traced pass, its egress runs indented under it; every line ends in
    a newline.

    ``trace`` is what a traced run recorded: ``PassResult.trace`` of
    ``Switch.process(frame, port, trace=True)`` or of a ``Network.run(trace=True)`` record
    (``network.records[k].result.trace``). ``sources`` maps its stages to the source of
    their code; None prints the machine view alone. A scenario's is
    ``Scenario.trace_sources()``; for code linked and deployed otherwise,
    ``dpfc.backends.scenario.CodeSources(profile, images, linked, objects)`` gives the same
    from the images installed on each switch and the object DPFs they were linked from.
    Rendering reads the traces and the sources only: the same run and sources give the
    same text. ``dpfc run --trace`` and ``--trace-file`` print through this function::

        sources = scenario.trace_sources()
        text = "".join(
            render_trace(r.result.trace, sources) for r in network.records if r.result.trace
        )
    """
    tenant = "?" if trace.tenant is None else str(trace.tenant)
    lines = [
        f"pass {trace.sequence} (packet {trace.packet}) at {trace.node} pipe {trace.pipe} "
        f"port {trace.ingress_port}, tenant {tenant}"
    ]
    lines += _body(trace, sources)
    for run in trace.egress:
        lines.append(
            f"  egress pipe {run.pipe} port {run.egress_port}, tenant "
            + ("?" if run.tenant is None else str(run.tenant))
        )
        lines += ["  " + line for line in _body(run, sources)]
    return "\n".join(lines) + "\n"


def _body(run: PacketTrace, sources: TraceSources | None) -> list[str]:
    known: Sequence[StageSource | None] = (
        sources.stage_sources(run) if sources is not None else [None] * len(run.stages)
    )
    lines = []
    for stage, source in zip(run.stages, known, strict=True):
        lines += _stage(stage, source, run.lanes)
    ports = f" -> port(s) {', '.join(map(str, run.outputs))}" if run.outputs else ""
    lines.append(f"  {run.verdict}: {run.reason}{ports}")
    return lines


def _stage(stage: StageTrace, source: StageSource | None, lanes: int) -> list[str]:
    head = f"  {stage.name} {stage.pc}"
    if source is not None:
        head += f" in {source.dpf} ({source.label})"
    lines = [head]
    shown: set[str] = set()  # locations whose text this stage printed
    for event in stage.events:
        line = source.lines.get(event.slot) if source is not None and event.slot else None
        if line is None:
            lines.append(f"    {event.text}")
            continue
        note = line.location
        if line.location not in shown and line.text:
            note += f": {line.text}"
        shown.add(line.location)
        lines.append(f"    {event.text.ljust(NOTE_COLUMN)}  ; {note}")
    if stage.registers and not stage.is_epilog:
        lines.append(f"    regs {format_registers(stage.registers, lanes)}")
    if source is not None and source.variables and stage.registers:
        lines.append(f"    vars {_variables(source.variables, stage.registers, lanes)}")
    if stage.next_pc:
        lines.append(f"    next {stage.next_pc}")
    return lines


def _variables(names: Mapping[Register, str], regs: Sequence[int], lanes: int) -> str:
    """``flow=0x6e (A0), before=0x2 (B0, B3)``: each variable with its value and registers,
    in register order."""
    held: dict[tuple[str, int], list[Register]] = {}
    for reg in sorted(names):
        at = reg.cls.value * lanes + reg.lane
        if at < len(regs):
            held.setdefault((names[reg], regs[at]), []).append(reg)
    return ", ".join(
        f"{name}={value:#x} ({', '.join(map(str, where))})" for (name, value), where in held.items()
    )


def format_registers(regs: Sequence[int], lanes: int) -> str:
    """``A=[0x64 0x0 0x0 0x0] B=[0x0 0x0 0x0 0x0]``."""
    a = " ".join(f"{v:#x}" for v in regs[:lanes])
    b = " ".join(f"{v:#x}" for v in regs[lanes:])
    return f"A=[{a}] B=[{b}]"


__all__ = ["SourceLine", "StageSource", "TraceSources", "format_registers", "render_trace"]
