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

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from filelock import FileLock

from dpfc.backends.p4.bmv2 import Switch as Bmv2Switch
from dpfc.backends.p4.bmv2 import Toolchain, ToolchainMissing, compile_program, find_toolchain
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


def compile_once(
    tmp_path_factory: pytest.TempPathFactory, name: str, text: Callable[[], str]
) -> tuple[Toolchain, Path, dict[str, Any]]:
    """The P4 program ``text()`` generates, compiled by p4c-bm2-ss once per run: the first parallel
    worker to get here compiles it under a lock in the run's shared temporary directory
    (``<name>/``), the others read its result: (toolchain, its JSON, the compile's record:
    seconds and warnings). Without bmv2 the test is skipped with the reason."""
    try:
        toolchain = find_toolchain()
    except ToolchainMissing as missing:
        pytest.skip(f"bmv2 not run: {missing}")
    shared = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        shared = shared.parent  # the run's directory, above the workers' own
    directory = shared / name
    directory.mkdir(exist_ok=True)
    source, output, done = (
        directory / "switchvm.p4",
        directory / "switchvm.json",
        directory / "compiled.json",
    )
    with FileLock(str(directory / "lock")):
        if not done.exists():
            source.write_text(text(), encoding="utf-8")
            compiled = compile_program(toolchain, source, output)
            record = {"seconds": compiled.seconds, "warnings": list(compiled.warnings)}
            done.write_text(json.dumps(record), encoding="utf-8")
    return toolchain, output, json.loads(done.read_text(encoding="utf-8"))
