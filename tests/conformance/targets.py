"""Two targets behind one interface: the simulator and a bmv2 simple_switch.

Contract: :class:`SimTarget` and :class:`Bmv2Target` both give ``control`` (the control
protocol, :class:`~dpfc.switch.SwitchControl`), the operator settings the protocol
leaves to a deployment (``set_default_port``, ``set_route``, ``set_constant``,
``seed_random``), ``send(port, frame)`` → the frames that left the switch as (port, bytes)
— recirculations done inside, as a switch does them — and ``reset()``, which empties the
switch (tables, registers, multicast groups) for the next vector. A vector sets both up with
the same calls, so any difference in what comes out is a difference of the targets.

Outputs are returned sorted by (port, bytes): bmv2 sends multicast copies from one egress
thread per port, so their order across ports is not defined; the simulator's is.
"""

from __future__ import annotations

from pathlib import Path

from dpfc.backends.p4.bmv2 import Switch as Bmv2Switch
from dpfc.backends.p4.bmv2 import Toolchain
from dpfc.backends.p4.bmv2_control import Bmv2Control
from dpfc.backends.p4.controls import StagedControl, control_for
from dpfc.backends.p4.simple_switch_cli import Cli
from dpfc.backends.sim import SimControl, Switch, passes_until_done
from dpfc.target.profile import TargetProfile

PORTS = 16
SWITCH_ID = 0x5A
SEED = 0x1234_5678
Frames = list[tuple[int, bytes]]


class SimTarget:
    name = "sim"

    def __init__(self, profile: TargetProfile) -> None:
        self.profile = profile
        self.reset()

    def reset(self) -> None:
        self.switch = Switch("s", self.profile, ports_per_pipe=PORTS, switch_id=SWITCH_ID)
        self.control = SimControl(self.switch.control)
        self.switch.seed_random(SEED)

    def set_default_port(self, port: int | None) -> None:
        self.switch.control.set_default_port(port)

    def set_route(self, ip_dst: bytes, port: int) -> None:
        self.switch.control.set_route(ip_dst, port)

    def set_constant(self, tenant: int, index: int, value: int) -> None:
        self.switch.control.set_constant(tenant, index, value)

    def seed_random(self, state: int) -> None:
        self.switch.seed_random(state)

    def send(self, port: int, frame: bytes, *, expect: int = 1, timeout: float = 3.0) -> Frames:
        del expect, timeout  # the simulator knows when a frame is done
        return sorted(passes_until_done(self.switch.process, frame, port))


class Bmv2Target:
    name = "bmv2"

    def __init__(self, profile: TargetProfile, toolchain: Toolchain, program_json: Path) -> None:
        self.profile = profile
        self.program_json = program_json
        self.switch = Bmv2Switch(toolchain, program_json)
        self.cli = Cli(toolchain, self.switch.thrift_port)
        self._fresh_control()

    def _fresh_control(self) -> None:
        # the profile's program's control: Bmv2Control, or StagedControl (code format 2)
        self.control: Bmv2Control | StagedControl = control_for(
            self.cli, self.profile, self.program_json
        )
        self.control.configure(switch_id=SWITCH_ID, ports=PORTS)
        self.seed_random(SEED)

    def reset(self) -> None:
        self.cli.run("reset_state")
        self.switch.receive(0, timeout=0.0, grace=0.05)  # nothing may be left in flight
        self._fresh_control()

    def set_default_port(self, port: int | None) -> None:
        self.control.set_default_port(port)

    def set_route(self, ip_dst: bytes, port: int) -> None:
        self.control.set_route(ip_dst, port)

    def set_constant(self, tenant: int, index: int, value: int) -> None:
        self.control.set_constant(tenant, index, value)

    def seed_random(self, state: int) -> None:
        """The simulator's generator on the SwitchVM program; the stage-structured program
        draws from bmv2's (nothing to seed)."""
        if isinstance(self.control, Bmv2Control):
            self.control.seed_random(state)

    def send(self, port: int, frame: bytes, *, expect: int = 1, timeout: float = 3.0) -> Frames:
        """``expect``: how many frames should come (the simulator's count); waits for them
        (at most ``timeout`` s), then a little more for any beyond them."""
        self.switch.send(port, frame)
        grace = 0.05 if expect else 0.15
        return sorted(self.switch.receive(expect, timeout=timeout, grace=grace))

    def stop(self) -> None:
        self.cli.close()
        self.switch.stop()
