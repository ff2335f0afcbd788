"""A simulated switch: its pipes, its ports and one pass of a frame through them.

Contract: a :class:`Switch` has ``pipes`` pipes of ``ports_per_pipe`` ports each (port p
belongs to pipe ``p // ports_per_pipe``); each pipe has its own tables and memory
(:class:`~dpfc.backends.sim.state.PipeState`), as on Tofino, and runs SwitchVM in its
ingress and its egress, all configured through one :class:`~.control.ControlPlane`.
:meth:`Switch.process` runs one pass of a frame arriving on a port: the ingress of that
port's pipe, then, for every frame it sends out (each multicast copy, a frame returned to
its sender), the egress DPF the frame names in the egress of the pipe that owns the output
port (docs/simulator.md R23; a recirculated frame goes back to the ingress without it).
Each pipe's ingress and egress draw RAND words from generators seeded from the run seed
and the names, so that runs are reproducible. Where the frames go next is
:mod:`.network`'s. :class:`TopologyError` is raised by an invalid topology request, here
and in :mod:`.network`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from dpfc.switch import RandomSource, Xorshift32
from dpfc.target import TargetProfile

from .control import ControlPlane
from .execute import Context, PassResult, run_egress, run_pass
from .state import PipeState


class TopologyError(ValueError):
    """A topology request is invalid (unknown node, port in use, ...)."""


class Switch:
    """One switch of pipes and ports (see the module docstring)."""

    def __init__(
        self,
        name: str,
        profile: TargetProfile,
        *,
        pipes: int = 1,
        ports_per_pipe: int = 16,
        switch_id: int = 0,
        seed: int = 0,
    ) -> None:
        if pipes < 1 or ports_per_pipe < 1:
            raise TopologyError("a switch needs at least one pipe and one port per pipe")
        self.name = name
        self.profile = profile
        self.switch_id = switch_id
        self.ports_per_pipe = ports_per_pipe
        self.pipes = [PipeState.empty(profile, index) for index in range(pipes)]
        self.ports = pipes * ports_per_pipe
        self.control = ControlPlane(self.pipes, self.ports)
        self._contexts: dict[tuple[int, int, int, int, int, int], Context] = {}
        # One generator per pipe, seeded from the run seed and the names: reproducible runs.
        self.rngs: list[RandomSource] = [
            Xorshift32.from_text(f"{seed}:{name}:{index}") for index in range(pipes)
        ]
        # The egress pipeline draws from its own state (a P4 register belongs to one
        # control), seeded apart so that its words differ from the ingress's.
        self.egress_rngs: list[RandomSource] = [
            Xorshift32.from_text(f"{seed}:{name}:{index}:egress") for index in range(pipes)
        ]

    def seed_random(self, state: int, *, pipes: Sequence[int] | None = None) -> None:
        """Set the RAND generator state of ``pipes`` (all by default), ingress and egress
        alike; 0 stores :data:`~dpfc.switch.ZERO_SEED_STATE`, as a P4 switch's control plane does."""
        for index in range(len(self.rngs)) if pipes is None else pipes:
            self.rngs[index] = Xorshift32(state)
            self.egress_rngs[index] = Xorshift32(state)

    def pipe_of(self, port: int) -> int:
        return port // self.ports_per_pipe

    def process(
        self, frame: bytes, port: int, *, now_ns: int = 0, queue_depth: int = 0, trace: bool = False
    ) -> PassResult:
        """One pass of ``frame`` arriving on ``port``: the ingress of that port's pipe, then
        the egress of each output (see the module docstring). The result's outputs are the
        frames the egress let leave, as the egress left them; ``result.egress`` lists the
        egress DPF runs."""
        if not 0 <= port < self.ports:
            raise TopologyError(f"switch {self.name} has no port {port}")
        pipe = self.pipe_of(port)
        ctx = self._context(port, pipe, now_ns & 0xFFFF_FFFF, queue_depth)
        result = run_pass(self.pipes[pipe], frame, ctx, self.rngs[pipe], trace=trace)
        if result.outputs and result.egress_ptr is not None:
            self._egress(result, ctx, trace)
        return result

    def _context(self, port: int, pipe: int, timestamp_ns: int, queue_depth: int) -> Context:
        """The (immutable) context of a packet: made once per port, time and depth, since a
        frozen dataclass costs microseconds to build and a switch sees the same often."""
        # every field is in the key: a test may change the switch's id between packets
        key = (port, pipe, timestamp_ns, queue_depth, self.switch_id, self.ports)
        ctx = self._contexts.get(key)
        if ctx is None:
            if len(self._contexts) >= 4096:
                self._contexts.clear()
            ctx = self._contexts[key] = Context(
                ingress_port=port,
                switch_id=self.switch_id,
                pipe_id=pipe,
                timestamp_ns=timestamp_ns,
                queue_depth=queue_depth,
                ports=self.ports,
            )
        return ctx

    def _egress(self, result: PassResult, ctx: Context, trace: bool) -> None:
        """Run every output through the egress of its port's pipe, in output order."""
        leaving: list[tuple[int, bytes]] = []
        for out_port, out_frame in result.outputs:
            pipe = self.pipe_of(out_port)
            egress_ctx = replace(ctx, pipe_id=pipe, egress_port=out_port)
            run = run_egress(
                self.pipes[pipe], out_frame, egress_ctx, self.egress_rngs[pipe], trace=trace
            )
            if run is None:  # no egress DPF named: the frame leaves as the ingress made it
                leaving.append((out_port, out_frame))
                continue
            result.egress.append(run)
            if result.trace is not None and run.trace is not None:
                result.trace.egress.append(run.trace)
            if run.frame is not None:
                leaving.append((out_port, run.frame))
        result.outputs = leaving
