"""A switch outside the simulator as a test target: bmv2, or a simulated switch standing in.

Contract: a :class:`Device` is one switch dpfc reaches through the control protocol
(:class:`~dpfc.switch.SwitchControl`) and a packet port: ``reset`` empties it and returns
its control, ``send`` returns the frames that left for one frame sent. :class:`DeviceRun`
puts a built case on it the way ``dpfc deploy`` does — the image of the case's switch
applied by :class:`~dpfc.deploy.Deployment` — then copies the configuration the scenario
builder made on the simulated switch (permission entries, forwarding, multicast,
constants, routes, default port, the lanes the case's tenants map by EU and lane, the words
of the image's arrays and of those lanes, and the RAND state), so
one description of a case serves every target. Each packet also runs on the simulated
twin, whose frame count tells the device how many frames to wait for.

A device observes the frames that left, memory words and the execution counters
(:data:`~dpfc.switch.EXECUTION_COUNTERS`); verdicts, reasons, reports and the other
counters are the simulator's alone, and expectations of them are unchecked there, with
that reason. A case the device cannot hold (several pipes or switches, cables, code
limited to some tenants, lanes the protocol cannot map: a null segment, words not from
virtual address 0; packets that set ``timestamp`` or ``queue_depth``) is skipped with the
reason.

:class:`SimDevice` (``--switch sim://``) is a bare simulated switch behind the same
protocol: the device path's dry run, as ``dpfc deploy sim://`` is. :class:`Bmv2Device`
(``--switch bmv2://HOST:PORT``) is a running simple_switch reached through the control
``dpfc deploy`` uses (:func:`~dpfc.backends.p4.control_for`: the profile decides the
program), its packets on the nanomsg socket it was started with (``--packet-in``). The
stage-structured program (profiles of code format 2) keeps no counters, has no constants
registers (a constant is recorded, the fit profiles have none) and draws RAND from bmv2's
generator, not the simulator's: expectations of counters are unchecked there.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from dpfc.backends.p4 import Bmv2Control, Cli, PacketSocket, StagedControl, Toolchain, control_for
from dpfc.backends.scenario import Scenario, Table
from dpfc.backends.sim import SimControl, Switch, passes_until_done
from dpfc.deploy import Deployment
from dpfc.switch import EXECUTION_COUNTERS, Grant, SwitchControl, SwitchRefused
from dpfc.target import TargetProfile

from .build import Injected
from .memory import Cell
from .observe import Observed, Output, SimRun

SEND_TIMEOUT_MS = 5000  # a packet the switch does not take by then: the case is an error
Frames = list[tuple[int, bytes]]


class Device(Protocol):
    name: str
    profile: TargetProfile

    def reset(self, *, switch_id: int, ports: int) -> SwitchControl: ...
    def set_default_port(self, port: int | None) -> None: ...
    def set_route(self, ip_dst: bytes, port: int) -> None: ...
    def set_constant(self, tenant: int, index: int, value: int) -> None: ...
    def seed_random(self, state: int) -> None: ...
    def counters(self, tenant: int) -> dict[str, int]: ...
    def send(self, port: int, frame: bytes, *, expect: int) -> Frames: ...
    def close(self) -> None: ...


class SimDevice:
    """A simulated switch behind the control protocol (``sim://``)."""

    name = "sim://"

    def __init__(self, profile: TargetProfile) -> None:
        self.profile = profile
        self.switch = Switch("device", profile)

    def reset(self, *, switch_id: int, ports: int) -> SwitchControl:
        self.switch = Switch("device", self.profile, ports_per_pipe=ports, switch_id=switch_id)
        return SimControl(self.switch.control)

    def set_default_port(self, port: int | None) -> None:
        self.switch.control.set_default_port(port)

    def set_route(self, ip_dst: bytes, port: int) -> None:
        self.switch.control.set_route(ip_dst, port)

    def set_constant(self, tenant: int, index: int, value: int) -> None:
        self.switch.control.set_constant(tenant, index, value)

    def seed_random(self, state: int) -> None:
        self.switch.seed_random(state)

    def counters(self, tenant: int) -> dict[str, int]:
        stats = self.switch.control.stats(tenant)
        return {name: getattr(stats, name) for name in EXECUTION_COUNTERS}

    def send(self, port: int, frame: bytes, *, expect: int) -> Frames:
        del expect  # the simulator knows when a frame is done
        return passes_until_done(self.switch.process, frame, port)

    def close(self) -> None:
        pass


class Bmv2Device:
    """A running simple_switch (``bmv2://HOST:PORT``, packets on ``packet_in``)."""

    def __init__(
        self, toolchain: Toolchain, host: str, port: int, packet_in: str, profile: TargetProfile
    ) -> None:
        self.name = f"bmv2://{host}:{port}"
        self.profile = profile
        self.cli = Cli(toolchain, port, host=host)
        self.program = self.cli.program_json()
        self.packets = PacketSocket(packet_in, send_timeout_ms=SEND_TIMEOUT_MS)
        self.current: Bmv2Control | StagedControl | None = None  # reset makes it

    @property
    def control(self) -> Bmv2Control | StagedControl:
        assert self.current is not None, "a device is reset before it is used"
        return self.current

    def reset(self, *, switch_id: int, ports: int) -> SwitchControl:
        self.cli.run("reset_state")
        self.packets.receive(0, timeout=0.0, grace=0.05)  # nothing may be left in flight
        self.current = control = control_for(self.cli, self.profile, self.program)
        control.configure(switch_id=switch_id, ports=ports)
        return control

    def set_default_port(self, port: int | None) -> None:
        self.control.set_default_port(port)

    def set_route(self, ip_dst: bytes, port: int) -> None:
        self.control.set_route(ip_dst, port)

    def set_constant(self, tenant: int, index: int, value: int) -> None:
        if isinstance(self.control, Bmv2Control):
            self.control.set_constant(tenant, index, value)
        else:  # no constants registers: recorded (validated) only
            self.control.ledger.memory.set_constant(tenant, index, value)

    def seed_random(self, state: int) -> None:
        if isinstance(self.control, Bmv2Control):
            self.control.seed_random(state)

    def counters(self, tenant: int) -> dict[str, int]:
        if isinstance(self.control, Bmv2Control):
            return self.control.counters(tenant)
        return {}  # the stage-structured program keeps none

    def send(self, port: int, frame: bytes, *, expect: int) -> Frames:
        self.packets.send(port, frame)
        return self.packets.receive(expect, timeout=3.0, grace=0.05 if expect else 0.15)

    def close(self) -> None:
        self.packets.close()
        self.cli.close()


@dataclass(frozen=True)
class LaneMapping:
    """Memory a case's ``tenants`` map by EU and lane, as the control protocol maps it:
    virtual words [0, size) of the lane, ``direct`` or ``segment``."""

    tenant: int
    eu: int
    lane: int
    pipeline: str
    mapping: str
    size: int


def lane_mappings(tenants: Sequence[Table]) -> list[LaneMapping] | str:
    """The lanes the ``memory`` of ``tenants`` tables map (tables the scenario builder has
    read already), or why the protocol cannot map them: it maps a lane's words from
    virtual address 0, a segment at 0 or direct entries 0..n-1, and no null segment."""
    directs: dict[tuple[int, int, int, str], set[int]] = {}
    out: list[LaneMapping] = []
    for table in tenants:
        tenant = table.integer("id")
        for item in table.tables("memory"):
            kind, vaddr = item.string("kind"), item.integer("vaddr", 0)
            key = (
                tenant,
                item.integer("eu"),
                item.integer("lane"),
                item.string("pipeline", "ingress"),
            )
            if kind == "null_segment":
                return f"{item.path}: a device maps no null segment (the simulator's)"
            if kind == "segment" and vaddr != 0:
                return f"{item.path}: a device maps a lane's segments from virtual address 0"
            if kind == "segment":
                out.append(LaneMapping(*key, "segment", item.integer("size", high=1 << 32)))
            else:
                directs.setdefault(key, set()).add(vaddr)
    for key, addresses in sorted(directs.items()):
        if addresses != set(range(len(addresses))):
            tenant, eu, lane, _ = key
            listed = ", ".join(str(a) for a in sorted(addresses)[:4])
            return (
                f"tenant {tenant}'s direct entries in EU{eu} lane {lane} are at {listed}: a "
                "device maps a lane's direct entries from virtual address 0 on"
            )
        out.append(LaneMapping(*key, "direct", len(addresses)))
    return out


def device_failure(exc: Exception) -> bool:
    """Whether ``exc`` is a device's failure rather than dpfc's: simple_switch_CLI refusing
    a command or losing its Thrift connection, the packet socket failing."""
    return isinstance(exc, RuntimeError | OSError) or type(exc).__module__.startswith("thrift")


def unsupported(
    scenario: Scenario, switch: str, *, lanes: list[LaneMapping] | str, metadata: bool
) -> str | None:
    """Why a device cannot hold this case (None: it can)."""
    network = scenario.network
    node = network.switches[switch]
    if len(network.switches) > 1:
        return "the case has several switches; a device is one"
    if len(node.pipes) > 1:
        return f"switch {switch} has {len(node.pipes)} pipes; a device runs one"
    if any(peer[1] is not None for peer in network.wires.values()):
        return "the case has cables between ports; a device has none"
    if any(e.owners is not None for slots in node.pipes[0].code.values() for e in slots.values()):
        return "code limited to some tenants (owners) is a simulator feature"
    if isinstance(lanes, str):
        return lanes
    if metadata:
        return "timestamp and queue_depth are given to the simulator; a device measures its own"
    return None


class DeviceRun:
    """A built case on a device, run packet by packet (module docstring)."""

    def __init__(
        self,
        device: Device,
        scenario: Scenario,
        switch: str,
        seed: int,
        lanes: Sequence[LaneMapping] = (),
    ) -> None:
        self.device = device
        self.scenario = scenario
        self.twin = SimRun(scenario, jit=False, trace=False)
        node = scenario.network.switches[switch]
        self.control = device.reset(switch_id=node.switch_id, ports=node.ports)
        device.seed_random(seed)
        image = scenario.images.get(switch)
        if image is not None:
            Deployment(self.control).apply(image[0])
        tables, pipes = node.pipes[0], [0]
        for tenant, entry in sorted(tables.permissions.items()):
            tokens = (entry.app_id, *sorted(entry.app_ids - {entry.app_id}))
            default = None if entry.default_dpf is None else entry.default_dpf.index
            grant = Grant(
                tokens, entry.metadata, entry.privileged, entry.recirculate, default,
                entry.unauthorized.value,
            )  # fmt: skip
            self.control.grant(tenant, grant, pipes)
        for tenant, table in sorted(tables.forwarding.items()):
            for index, destination in sorted(table.items()):
                self.control.set_forwarding(tenant, index, destination, pipes)
        for tenant, groups in sorted(tables.multicast.items()):
            for group, destinations in sorted(groups.items()):
                self.control.set_multicast(tenant, group, destinations, pipes)
        for tenant, values in sorted(tables.constants.items()):
            for index, value in enumerate(values):
                if value:
                    device.set_constant(tenant, index, value)
        for address, port in sorted(tables.routes.items()):
            device.set_route(address, port)
        device.set_default_port(tables.default_port)
        for lane in lanes:
            self.control.map_memory(
                lane.tenant, lane.eu, lane.lane, lane.mapping, lane.size, pipes,
                pipeline=lane.pipeline,
            )  # fmt: skip
        placed = [
            LaneMapping(r.tenant, r.eu, r.lane, r.pipeline, r.mapping, r.size)
            for r in (image[0].memory if image is not None else ())
        ]
        for lane in [*placed, *lanes]:  # the words the case starts with
            words = node.control.read_memory(
                lane.tenant, lane.eu, lane.lane, 0, lane.size, pipe=0, pipeline=lane.pipeline
            )
            for index, word in enumerate(words):
                if word:
                    self.control.write_memory(
                        lane.tenant, lane.eu, lane.lane, index, [word], pipes,
                        pipeline=lane.pipeline,
                    )  # fmt: skip

    def send(self, packet: Injected) -> Observed:
        expected = len(self.twin.send(packet).outputs)
        frames = self.device.send(packet.port, packet.frame, expect=expected)
        network = self.scenario.network
        outputs = []
        for port, frame in sorted(frames):
            peer = network.wires.get((packet.switch, port))
            outputs.append(Output(packet.switch, port, peer[0] if peer else "", frame))
        control = self.control

        def read(cell: Cell) -> int | str:
            try:
                words = control.read_memory(
                    packet.tenant, cell.eu, cell.lane, cell.vaddr, 1, cell.pipe,
                    pipeline=cell.pipeline,
                )  # fmt: skip
            except SwitchRefused as refused:
                return f"unreadable: {refused.message} [{refused.code}]"
            return words[0]

        return Observed(
            passes=None,
            outputs=outputs,
            reports=None,
            counters=self.device.counters(packet.tenant),
            read=read,
            unobservable=f"{self.device.name} does not tell it (the simulator does)",
        )


__all__ = [
    "Bmv2Device",
    "Device",
    "DeviceRun",
    "LaneMapping",
    "SimDevice",
    "device_failure",
    "lane_mappings",
    "unsupported",
]
