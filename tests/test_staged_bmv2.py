"""The stage-structured program on bmv2, installed through its control plane, against the
simulator: the example test files that compile for tofino1_fit (in-switch DPFs, and the
in-packet code of counter's in-packet case and of lb1, ``@placement(packet)``).

The v1model program ``dpfc p4 --target tofino1_fit`` writes (code format 2, the format the
staged parser reads) is compiled by p4c-bm2-ss once per session (the ``staged_build``
fixture, tests/staged_build.py); one simple_switch runs it. Each case of
``examples/tests/{counter,lb1,tally}.toml`` runs on the simulator and on bmv2 through
:class:`~dpfc.backends.testing.DeviceRun` (the case's image deployed through
:class:`~dpfc.backends.p4.staged.control.StagedControl`, its configuration copied): the
frames that leave (ports and bytes) and the memory words the case expects must be the
same (the program keeps no counters: expectations of them are unchecked there). Cases it
does not run yet are listed in NOT_RUN with the reason. ``tests/staged_shift/`` does the
same for the shift fault (simulator R14): a listed amount runs, any other drops the packet
before the EU's memory units run, and no later EU runs. Without
p4c and bmv2 the tests are skipped with the reason.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from dpfc.backends.p4 import Cli, PacketSocket, Switch
from dpfc.backends.p4.staged.control import StagedControl
from dpfc.backends.p4.staged.writer import StagedCliWriter
from dpfc.backends.testing import CaseResult, Target, load_test_file, run_case
from dpfc.backends.testing.device import SimDevice
from dpfc.switch import SwitchControl
from dpfc.target import TargetProfile
from tests.conftest import ROOT
from tests.staged_build import TARGET, StagedBuild

pytestmark = pytest.mark.slow
EXAMPLES = ROOT / "examples"
FILES = ("counter", "tally", "lb1")  # lb1.dpf is @placement(packet)
# (file, case) -> why the program does not run the case as the simulator does
NOT_RUN: dict[tuple[str, str], str] = {}


@dataclass
class Staged:
    profile: TargetProfile
    program_json: Path
    switch: Switch


@pytest.fixture(scope="session")
def staged(staged_build: StagedBuild) -> Iterator[Staged]:
    switch = Switch(staged_build.toolchain, staged_build.program_json, packets=False)
    try:
        yield Staged(staged_build.profile, staged_build.program_json, switch)
    finally:
        switch.stop()


class StagedDevice:
    """simple_switch running the stage-structured program (a testing Device)."""

    name = "bmv2-staged"

    def __init__(self, staged: Staged) -> None:
        self.profile = staged.profile
        self.cli = Cli(staged.switch.toolchain, staged.switch.thrift_port)
        self.program = staged.program_json.read_text()
        self.packets = PacketSocket(staged.switch.address, send_timeout_ms=5000)
        self.control = self._control()

    def _control(self) -> StagedControl:
        writer = StagedCliWriter(self.cli)
        writer.set_hash_functions(self.profile, self.program)
        control = StagedControl(writer, self.profile)
        control.start()
        return control

    def reset(self, *, switch_id: int, ports: int) -> SwitchControl:
        del switch_id, ports  # the program has neither
        self.cli.run("reset_state")
        self.packets.receive(0, timeout=0.0, grace=0.05)
        self.control = self._control()
        return self.control

    def set_default_port(self, port: int | None) -> None:
        self.control.set_default_port(port)

    def set_route(self, ip_dst: bytes, port: int) -> None:
        self.control.set_route(ip_dst, port)

    def set_constant(self, tenant: int, index: int, value: int) -> None:
        self.control.ledger.memory.set_constant(tenant, index, value)

    def seed_random(self, state: int) -> None:
        del state  # RAND is bmv2's generator here, not the simulator's

    def counters(self, tenant: int) -> dict[str, int]:
        del tenant
        return {}  # the program keeps no counters

    def send(self, port: int, frame: bytes, *, expect: int) -> list[tuple[int, bytes]]:
        self.packets.send(port, frame)
        return self.packets.receive(expect, timeout=3.0, grace=0.05 if expect else 0.15)

    def close(self) -> None:
        self.packets.close()
        self.cli.close()


@pytest.fixture(scope="session")
def device(staged: Staged) -> Iterator[StagedDevice]:
    found = StagedDevice(staged)
    try:
        yield found
    finally:
        found.close()


def _test_file(staged: Staged, name: str, directory: Path) -> Path:
    data = tomllib.loads((EXAMPLES / "tests" / f"{name}.toml").read_text(encoding="utf-8"))
    data["target"] = TARGET
    data["code"] = str(EXAMPLES / "dpf" / f"{name}.dpf")
    path = directory / f"{name}.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def _describe(result: CaseResult) -> str:
    if result.status == "error":
        return f"error: {result.error}"
    lines = [f"{result.status} {result.skipped}"]
    for packet in result.packets:
        lines += [f"  {m}" for m in packet.mismatches]
    return "\n".join(lines)


@pytest.mark.parametrize("name", FILES)
def test_the_example_runs_on_bmv2_as_on_the_simulator(
    staged: Staged, device: StagedDevice, name: str, tmp_path: Path
) -> None:
    test = load_test_file(_test_file(staged, name, tmp_path))
    simulated = SimDevice(staged.profile)
    ran = 0
    for case in test.cases:
        on_sim = run_case(test, case, Target(device=simulated))
        on_bmv2 = run_case(test, case, Target(device=device))
        if (name, case.name) in NOT_RUN:
            continue
        assert (on_bmv2.status, _describe(on_bmv2)) == (on_sim.status, _describe(on_sim)), case.name
        ran += on_sim.status == "pass"
    assert ran


def test_a_shift_fault_on_bmv2_as_on_the_simulator(
    staged: Staged, device: StagedDevice, tmp_path: Path
) -> None:
    directory = ROOT / "tests" / "staged_shift"
    data = tomllib.loads((directory / "shift_faults.toml").read_text(encoding="utf-8"))
    data["target"] = staged.profile.name  # the built-in tofino1_fit the program was built for
    data["code"] = str(directory / "shift_faults.dpfasm")
    path = tmp_path / "shift_faults.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    test = load_test_file(path)
    simulated = SimDevice(staged.profile)
    for case in test.cases:
        on_sim = run_case(test, case, Target(device=simulated))
        assert on_sim.status == "pass", _describe(on_sim)
        on_bmv2 = run_case(test, case, Target(device=device))
        assert (on_bmv2.status, _describe(on_bmv2)) == (on_sim.status, _describe(on_sim)), case.name
