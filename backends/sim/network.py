"""Switches, hosts and the links between them; the event loop that moves packets.

Contract: a :class:`Network` holds switches (:class:`~.switch.Switch`: each runs one pass
of a frame), hosts (:class:`Host`) and the cables between ports. Outputs leave through
ports wired to a host, to another switch, or to another port of the same switch (the
cable that lets a DPF chain run "in two pipes of the same switch"); every pass is kept as
a :class:`PassRecord` and every frame leaving a port as a :class:`Transmission`. A
switch's passes run with its own ``Switch.process`` unless :meth:`Network.set_processor`
names another :class:`Processor` (the JIT's).

The :class:`Network` processes one pass at a time from a single FIFO queue, so packets are
handled in arrival order per pipe and each pass is atomic with respect to every other
(RMT's per-packet atomicity). A recirculated packet goes to the back of the queue: a
looping tenant cannot starve others, and its gas (and the network's hop limit) ends it.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from dpfc.target import TargetProfile

from .execute import PassResult
from .switch import Switch, TopologyError


class Processor(Protocol):
    """Runs one pass of a switch, as :meth:`Switch.process` does."""

    def __call__(
        self, frame: bytes, port: int, *, now_ns: int = 0, queue_depth: int = 0, trace: bool = False
    ) -> PassResult: ...


class BatchProcessor(Protocol):
    """Runs the passes of frames arriving on one port, each with its metadata, up to the
    first whose frame comes back to the pipe (JitSwitch.run_frames)."""

    def __call__(
        self,
        frames: list[bytes],
        port: int,
        now_ns: Sequence[int],
        queue_depths: Sequence[int],
        *,
        loop_ports: Collection[int] = (),
        loop_recirculate: bool = False,
    ) -> list[PassResult]: ...


BATCH_MAX = 4096  # frames one batch takes from the head of the queue
HOP_LIMIT = 64  # passes one packet (and its copies) may take through the network
PASS_NS = 100  # simulated time of one pipe pass


def passes_until_done(
    process: Callable[[bytes, int], PassResult], frame: bytes, port: int
) -> list[tuple[int, bytes]]:
    """The (port, frame) outputs of ``frame`` arriving on ``port`` at one switch, pass after
    pass while a pass recirculates it, at most :data:`HOP_LIMIT` passes (the network's
    bound). ``process`` is one pass: a switch's or its JIT's ``process``."""
    out: list[tuple[int, bytes]] = []
    pending = [frame]
    for _ in range(HOP_LIMIT):
        if not pending:
            break
        result = process(pending.pop(), port)
        out += result.outputs
        if result.recirculated is not None:
            pending.append(result.recirculated)
    return out


@dataclass
class Host:
    name: str
    mac: bytes
    ip: bytes
    switch: str
    port: int
    received: list[bytes] = field(default_factory=list)


@dataclass(frozen=True)
class PassRecord:
    """One pipe pass: where it ran and what came of it."""

    sequence: int
    packet: int  # the id of the injected packet this frame descends from
    switch: str
    pipe: int
    port: int
    result: PassResult


@dataclass(frozen=True)
class Transmission:
    """A frame leaving a switch port; ``to`` names the host or ``switch:port`` it reaches."""

    packet: int
    switch: str
    port: int
    to: str
    frame: bytes


class Network:
    """Hosts, switches and links; :meth:`send` queues a frame, :meth:`run` delivers."""

    def __init__(self, profile: TargetProfile, *, seed: int = 0) -> None:
        self.profile = profile
        self.seed = seed
        self.switches: dict[str, Switch] = {}
        self.hosts: dict[str, Host] = {}
        self.wires: dict[tuple[str, int], tuple[str, int | None]] = {}  # (switch, port) -> peer
        self.queue: deque[tuple[str, int, bytes, int, int]] = deque()
        self.pending: dict[tuple[str, int], int] = {}  # (switch, pipe) -> queued frames
        self.now_ns = 0
        self.passes = 0
        self.packets = 0
        self.records: list[PassRecord] = []
        self.transmissions: list[Transmission] = []
        self.hop_limited: list[int] = []
        # what runs a switch's passes: Switch.process unless set_processor says otherwise
        self.processors: dict[str, Processor] = {}
        self.batches: dict[str, BatchProcessor] = {}

    # -- topology ------------------------------------------------------------------------------
    def add_switch(
        self, name: str, *, pipes: int = 1, ports_per_pipe: int = 16, switch_id: int | None = None
    ) -> Switch:
        self._new_name(name)
        switch = Switch(
            name,
            self.profile,
            pipes=pipes,
            ports_per_pipe=ports_per_pipe,
            switch_id=len(self.switches) + 1 if switch_id is None else switch_id,
            seed=self.seed,
        )
        self.switches[name] = switch
        return switch

    def add_host(self, name: str, *, mac: bytes, ip: bytes, switch: str, port: int) -> Host:
        self._new_name(name)
        self._free_port(switch, port)
        if len(mac) != 6 or len(ip) != 4:
            raise TopologyError(f"host {name}: a MAC is 6 bytes and an IPv4 address 4")
        host = Host(name, mac, ip, switch, port)
        self.hosts[name] = host
        self.wires[(switch, port)] = (name, None)
        return host

    def connect(self, a: str, port_a: int, b: str, port_b: int) -> None:
        """A cable between two switch ports (of two switches, or of one switch's pipes)."""
        if (a, port_a) == (b, port_b):
            raise TopologyError(f"cannot connect {a}:{port_a} to itself")
        self._free_port(a, port_a)
        self._free_port(b, port_b)
        self.wires[(a, port_a)] = (b, port_b)
        self.wires[(b, port_b)] = (a, port_a)

    def _new_name(self, name: str) -> None:
        if name in self.switches or name in self.hosts:
            raise TopologyError(f"the name {name!r} is already used")

    def _free_port(self, switch: str, port: int) -> None:
        node = self.switches.get(switch)
        if node is None:
            raise TopologyError(f"no switch named {switch!r}")
        if not 0 <= port < node.ports:
            raise TopologyError(f"switch {switch} has no port {port} (0..{node.ports - 1})")
        if (switch, port) in self.wires:
            raise TopologyError(f"port {switch}:{port} is already connected")

    def set_processor(
        self, switch: str, processor: Processor | None, batch: BatchProcessor | None = None
    ) -> None:
        """Run ``switch``'s passes with ``processor`` (a function like Switch.process, e.g.
        dpfc.backends.jit.JitSwitch.process) and, outside traced runs, runs of queued
        frames with ``batch`` (JitSwitch.run_frames); with Switch.process again (None)."""
        if switch not in self.switches:
            raise TopologyError(f"no switch named {switch!r}")
        self.batches.pop(switch, None)
        if processor is None:
            self.processors.pop(switch, None)
            return
        self.processors[switch] = processor
        if batch is not None:
            self.batches[switch] = batch

    # -- traffic -------------------------------------------------------------------------------
    def send(self, host: str, frame: bytes) -> int:
        """Queue ``frame`` as sent by ``host``; returns the packet id."""
        sender = self.hosts.get(host)
        if sender is None:
            raise TopologyError(f"no host named {host!r}")
        return self.inject(sender.switch, sender.port, frame)

    def inject(self, switch: str, port: int, frame: bytes) -> int:
        """Queue ``frame`` as arriving on ``switch:port``; returns the packet id."""
        node = self.switches.get(switch)
        if node is None or not 0 <= port < node.ports:
            raise TopologyError(f"no port {switch}:{port}")
        self.packets += 1
        self._enqueue(switch, port, bytes(frame), self.packets, 0)
        return self.packets

    def _enqueue(self, switch: str, port: int, frame: bytes, packet: int, hops: int) -> None:
        self.queue.append((switch, port, frame, packet, hops))
        key = (switch, self.switches[switch].pipe_of(port))
        self.pending[key] = self.pending.get(key, 0) + 1

    def step(self, *, trace: bool = False, keep: bool = True) -> PassRecord | None:
        """Process the frame at the head of the queue (None when the queue is empty)."""
        if not self.queue:
            return None
        entry = self.queue.popleft()
        name, port, frame, _, _ = entry
        switch = self.switches[name]
        pipe = switch.pipe_of(port)
        self.pending[(name, pipe)] -= 1
        self.now_ns += PASS_NS
        self.passes += 1
        process = self.processors.get(name, switch.process)
        result = process(
            frame, port, now_ns=self.now_ns, queue_depth=self.pending[(name, pipe)], trace=trace
        )
        return self._finish(entry, pipe, result, keep)

    def _step_batch(self, batch: BatchProcessor, limit: int, keep: bool) -> int:
        """Process the frames at the head of the queue that arrive on one port of one switch
        with ``batch``, each with the timestamp and queue depth its own step would give it;
        the batch ends after a frame that comes back to the same pipe (its queue depth then
        counts it). Returns the passes run."""
        name, port = self.queue[0][0], self.queue[0][1]
        switch = self.switches[name]
        pipe = switch.pipe_of(port)
        entries: list[tuple[str, int, bytes, int, int]] = []
        for entry in self.queue:
            if entry[0] != name or entry[1] != port or len(entries) >= limit:
                break
            entries.append(entry)
        pending = self.pending[(name, pipe)]
        times = [self.now_ns + (k + 1) * PASS_NS for k in range(len(entries))]
        depths = [pending - (k + 1) for k in range(len(entries))]
        loop_ports: set[int] = set()
        for out_port in range(switch.ports):
            peer = self.wires.get((name, out_port))
            back = peer is not None and peer[0] == name and peer[1] is not None
            if back and peer is not None and switch.pipe_of(peer[1] or 0) == pipe:
                loop_ports.add(out_port)
        results = batch(
            [e[2] for e in entries],
            port,
            times,
            depths,
            loop_ports=loop_ports,
            loop_recirculate=True,
        )
        for entry, result in zip(entries, results, strict=False):
            self.queue.popleft()
            self.pending[(name, pipe)] -= 1
            self.now_ns += PASS_NS
            self.passes += 1
            self._finish(entry, pipe, result, keep)
        return len(results)

    def _finish(
        self, entry: tuple[str, int, bytes, int, int], pipe: int, result: PassResult, keep: bool
    ) -> PassRecord:
        """Record a pass and move what it sent: to hosts, across wires, back into a queue."""
        name, port, _, packet, hops = entry
        switch = self.switches[name]
        if result.trace is not None:
            result.trace.node = name
            result.trace.sequence = self.passes
            result.trace.packet = packet
            for run in result.trace.egress:  # the same switch's egress
                run.node = name
        record = PassRecord(self.passes, packet, name, pipe, port, result)
        if keep:
            self.records.append(record)
        if hops + 1 >= HOP_LIMIT and (result.outputs or result.recirculated is not None):
            self.hop_limited.append(packet)
            tenant = -1 if result.tenant is None else result.tenant
            switch.pipes[pipe].report(
                tenant, "hops", f"packet {packet} reached the hop limit ({HOP_LIMIT} passes)"
            )
            return record
        if result.recirculated is not None:
            self._enqueue(name, port, result.recirculated, packet, hops + 1)
        for out_port, out_frame in result.outputs:
            peer = self.wires.get((name, out_port))
            if peer is None:
                self.transmissions.append(Transmission(packet, name, out_port, "", out_frame))
                continue
            peer_name, peer_port = peer
            if peer_port is None:
                self.hosts[peer_name].received.append(out_frame)
                self.transmissions.append(
                    Transmission(packet, name, out_port, peer_name, out_frame)
                )
            else:
                self.transmissions.append(
                    Transmission(packet, name, out_port, f"{peer_name}:{peer_port}", out_frame)
                )
                self._enqueue(peer_name, peer_port, out_frame, packet, hops + 1)
        return record

    def run(self, *, max_passes: int | None = None, trace: bool = False, keep: bool = True) -> int:
        """Process queued frames until the queue is empty (or ``max_passes``); returns the
        number of passes run."""
        count = 0
        while self.queue and (max_passes is None or count < max_passes):
            batch = None if trace else self.batches.get(self.queue[0][0])
            if batch is not None:
                limit = BATCH_MAX if max_passes is None else min(BATCH_MAX, max_passes - count)
                count += self._step_batch(batch, limit, keep)
                continue
            self.step(trace=trace, keep=keep)
            count += 1
        return count
