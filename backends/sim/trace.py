"""Per-packet execution traces (``dpfc run --trace``) and how they are printed.

A trace is recorded only when asked for, so ordinary runs pay nothing for it. It lists, for
each stage the packet ran: the stage and PC, one line per unit that did something
(selector, lane ALU, lane memory access with its translation, branch with its operands and
outcome, epilog actions), the registers after the stage and the next PC; then the steering
verdict and its reason; then, for each frame that left with an egress DPF, the egress
pipeline's trace of that frame, indented under the pass.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class StageTrace:
    stage: str  # prolog, eu0.., epilog
    pc: str
    events: list[str] = field(default_factory=list)
    registers: str = ""
    next_pc: str = ""


@dataclass
class PacketTrace:
    pipe: int
    ingress_port: int
    tenant: int | None = None
    stages: list[StageTrace] = field(default_factory=list)
    verdict: str = ""
    reason: str = ""
    outputs: list[int] = field(default_factory=list)
    node: str = ""
    sequence: int = 0  # the pass number in the run
    packet: int = 0  # the id of the injected packet this pass belongs to
    egress_port: int | None = None  # set in the trace of an egress pipeline run
    egress: list[PacketTrace] = field(default_factory=list)  # the egress runs of the pass

    def render(self) -> str:
        tenant = "?" if self.tenant is None else str(self.tenant)
        lines = [
            f"pass {self.sequence} (packet {self.packet}) at {self.node} pipe {self.pipe} "
            f"port {self.ingress_port}, tenant {tenant}"
        ]
        lines += self._body()
        for run in self.egress:
            lines.append(
                f"  egress pipe {run.pipe} port {run.egress_port}, tenant "
                + ("?" if run.tenant is None else str(run.tenant))
            )
            lines += ["  " + line for line in run._body()]
        return "\n".join(lines) + "\n"

    def _body(self) -> list[str]:
        lines = []
        for stage in self.stages:
            lines.append(f"  {stage.stage} {stage.pc}")
            lines.extend(f"    {event}" for event in stage.events)
            if stage.registers:
                lines.append(f"    regs {stage.registers}")
            if stage.next_pc:
                lines.append(f"    next {stage.next_pc}")
        ports = f" -> port(s) {', '.join(map(str, self.outputs))}" if self.outputs else ""
        lines.append(f"  {self.verdict}: {self.reason}{ports}")
        return lines


def format_registers(regs: list[int], lanes: int) -> str:
    a = " ".join(f"{v:#x}" for v in regs[:lanes])
    b = " ".join(f"{v:#x}" for v in regs[lanes:])
    return f"A=[{a}] B=[{b}]"
