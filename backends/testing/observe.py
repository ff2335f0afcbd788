"""What one packet of a case did, observed on the simulator (the interpreter or the JIT).

Contract: :class:`SimRun` runs a built case's network one packet at a time: it injects the
frame on its switch port with the metadata the packet asks for (``timestamp`` and
``queue_depth`` replace the network's for the packet's first pass), runs the network until
it is idle and returns an :class:`Observed`: every pass the packet caused (verdict,
reason), the frames that left the network (to a host or an unconnected port; frames on
cables are still inside), the reports it caused, the tenant's counters on the case's
switch so far, a reader of memory words, and the passes' traces when asked for. The JIT
runs the passes as native code where it can (``dpfc run --jit``); the traces are the
interpreter's. A network that does not settle within :data:`MAX_PASSES` is DPF4109.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields

from dpfc.backends import jit as native
from dpfc.backends.scenario import CODE_NOT_SETTLED, Scenario, ScenarioError
from dpfc.backends.sim import Network, PassResult, render_trace
from dpfc.switch import SwitchRefused

from .build import Injected
from .memory import Cell

MAX_PASSES = 100_000  # per packet: the hop limit ends any one packet long before


@dataclass(frozen=True)
class Pass:
    switch: str
    pipe: int
    port: int
    verdict: str
    reason: str


@dataclass(frozen=True)
class Output:
    """A frame that left: its port on the case's switch side, where it went, its bytes."""

    switch: str
    port: int
    to: str  # a host, or "" for an unconnected port
    frame: bytes


@dataclass
class Observed:
    """What a packet did; None (or a missing counter) is what the target cannot tell."""

    passes: list[Pass] | None
    outputs: list[Output]
    reports: list[str] | None
    counters: dict[str, int]
    read: Callable[[Cell], int | str]  # a word, or why it cannot be read
    trace: str = ""
    unobservable: str = ""  # why passes, reports and counters are missing, if they are
    notes: list[str] = field(default_factory=list)


class Metadata:
    """A switch's pass function whose next call gets the packet's own metadata."""

    def __init__(self, process: Callable[..., PassResult]) -> None:
        self.process = process
        self.next: tuple[int | None, int | None] | None = None

    def __call__(
        self, frame: bytes, port: int, *, now_ns: int = 0, queue_depth: int = 0, trace: bool = False
    ) -> PassResult:
        if self.next is not None:
            timestamp, depth = self.next
            self.next = None
            now_ns = now_ns if timestamp is None else timestamp
            queue_depth = queue_depth if depth is None else depth
        return self.process(frame, port, now_ns=now_ns, queue_depth=queue_depth, trace=trace)


def leaving(network: Network, switch: str, port: int) -> bool:
    """Whether a frame sent by ``switch:port`` leaves the network (no cable back in)."""
    peer = network.wires.get((switch, port))
    return peer is None or peer[1] is None


class SimRun:
    """One case's network, run packet by packet (module docstring)."""

    def __init__(self, scenario: Scenario, *, jit: bool, trace: bool) -> None:
        self.scenario = scenario
        self.network = scenario.network
        self.trace = trace
        self.engines: list[native.JitSwitch] = []
        self.metadata: dict[str, Metadata] = {}
        for name, switch in self.network.switches.items():
            process: Callable[..., PassResult] = switch.process
            if jit:
                engine = native.JitSwitch(switch)
                self.engines.append(engine)
                process = engine.process
            self.metadata[name] = Metadata(process)
            self.network.set_processor(name, self.metadata[name])

    @property
    def native_passes(self) -> tuple[int, int]:
        """Passes the JIT ran natively, and those it handed to the interpreter."""
        return sum(e.native for e in self.engines), sum(e.deopts for e in self.engines)

    def send(self, packet: Injected) -> Observed:
        network = self.network
        records, sent = len(network.records), len(network.transmissions)
        reports = {
            (name, pipe.index): len(pipe.reports)
            for name, switch in network.switches.items()
            for pipe in switch.pipes
        }
        self.metadata[packet.switch].next = (packet.timestamp, packet.queue_depth)
        ident = network.inject(packet.switch, packet.port, packet.frame)
        network.run(max_passes=MAX_PASSES, trace=self.trace)
        if network.queue:
            raise ScenarioError(
                self.scenario.file,
                CODE_NOT_SETTLED,
                f"{packet.path}: the network did not settle within {MAX_PASSES} passes",
            )
        mine = [r for r in network.records[records:] if r.packet == ident]
        new_reports = [
            report.kind
            for name, switch in network.switches.items()
            for pipe in switch.pipes
            for report in list(pipe.reports)[reports[name, pipe.index] :]
        ]
        stats = network.switches[packet.switch].control.stats(packet.tenant)
        control = network.switches[packet.switch].control

        def read(cell: Cell) -> int | str:
            try:
                words = control.read_memory(
                    packet.tenant,
                    cell.eu,
                    cell.lane,
                    cell.vaddr,
                    1,
                    pipe=cell.pipe,
                    pipeline=cell.pipeline,
                )
            except SwitchRefused as refused:
                return f"unreadable: {refused.message} [{refused.code}]"
            return words[0]

        return Observed(
            passes=[
                Pass(r.switch, r.pipe, r.port, r.result.verdict, r.result.reason) for r in mine
            ],
            outputs=[
                Output(t.switch, t.port, t.to, t.frame)
                for t in network.transmissions[sent:]
                if t.packet == ident and leaving(network, t.switch, t.port)
            ],
            reports=new_reports,
            counters={f.name: getattr(stats, f.name) for f in fields(stats)},
            read=read,
            trace="".join(
                render_trace(r.result.trace, self.scenario.trace_sources())
                for r in mine
                if r.result.trace is not None
            ),
        )


__all__ = ["MAX_PASSES", "Metadata", "Observed", "Output", "Pass", "SimRun", "leaving"]
