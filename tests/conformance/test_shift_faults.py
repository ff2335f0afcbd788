"""The generated P4 program of a profile whose ALU shifts by six amounts agrees with the
simulator on bmv2: shifts by listed amounts run, any other amount faults the packet
(dropped) before the EU's ALUs and memory run (docs/isa.md §6 item 4, simulator R14).

The program of a 2-EU x 2-lane profile with ``shift_amounts = [1, 2, 4, 8, 16, 24]`` is
compiled by p4c-bm2-ss once here, without warnings; each packet carries its code (POP the
registers, one EU, PUSH them) and goes through the simulator and bmv2.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from dpfc.backends.p4.bmv2 import ToolchainMissing, compile_program, find_toolchain
from dpfc.backends.p4.program import generate
from dpfc.encoding import SwitchVMHeader
from dpfc.isa.opcodes import AluOp
from dpfc.packet.build import PacketSpec, build_packet
from dpfc.switch import Grant
from dpfc.target import load_profile
from tests.conformance.targets import Bmv2Target, SimTarget
from tests.conftest import ROOT
from tests.shift_code import PK0, shift_code

SMALL = load_profile(str(ROOT / "tests" / "golden" / "p4" / "small.toml"))
FIT = replace(SMALL, name="small_fit", shift_amounts=(1, 2, 4, 8, 16, 24))
TENANT = 9
OUT_PORT = 3
L = FIT.lanes


@pytest.fixture(scope="module")
def bmv2(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Bmv2Target]:
    try:
        toolchain = find_toolchain()
    except ToolchainMissing as missing:
        pytest.skip(f"bmv2 not run: {missing}")
    directory = tmp_path_factory.mktemp("shift-p4")
    source, output = directory / "small_fit.p4", directory / "small_fit.json"
    source.write_text(generate(FIT), encoding="utf-8")
    compiled = compile_program(toolchain, source, output)
    assert not compiled.warnings
    target = Bmv2Target(FIT, toolchain, Path(output))
    try:
        yield target
    finally:
        target.stop()


CASES = {
    # name: (ALU ops, LOAD in lane 0, stack A0, A1, B0, B1)
    "listed": ({0: AluOp.LSH, 1: AluOp.RSH}, False, [0x8000_0001, 0xF000_000F, 4, 24]),
    "zero_and_wrapped": ({0: AluOp.LSH, 1: AluOp.RSH}, False, [0x8000_0001, 0xF, 32, 56]),
    "lsh_by_12": ({0: AluOp.LSH}, False, [0x8000_0001, 7, 12, 0]),
    "rsh_by_3": ({1: AluOp.RSH}, False, [1, 0xFFFF_FFFF, 0, 3]),
    "fault_before_memory": ({1: AluOp.LSH}, True, [0x10, 1, 0, 5]),
    "add_by_anything": ({0: AluOp.ADD, 1: AluOp.SUB}, False, [5, 9, 12, 3]),
}


@pytest.mark.parametrize("name", list(CASES))
def test_bmv2_shifts_and_faults_as_the_simulator_does(name: str, bmv2: Bmv2Target) -> None:
    ops, load, stack = CASES[name]
    header = SwitchVMHeader(
        app_id=0, dpf_ptr=PK0, gas=8, stack=tuple(stack), code=shift_code(ops, L, memory=load)
    )
    frame = build_packet(PacketSpec(TENANT, header, payload=b"inner"), FIT).frame
    outputs: list[list[tuple[int, bytes]]] = []
    sim = SimTarget(FIT)
    bmv2.reset()
    for target in (sim, bmv2):
        target.control.grant(TENANT, Grant(app_ids=(0,)), [0])
        target.set_default_port(OUT_PORT)
        outputs.append(target.send(0, frame, expect=len(outputs[0]) if outputs else 1))
    faults = sim.switch.control.stats(TENANT).faults
    expected_fault = name in ("lsh_by_12", "rsh_by_3", "fault_before_memory")
    assert faults == int(expected_fault)
    assert (outputs[0] == []) == expected_fault
    assert outputs[1] == outputs[0]
