"""Conditions as words computed by the ALU (dpfc/schedule/problem/boolwords.py), run in the simulator.

Every compare kind (unsigned, signed, equality, bit test), the boolean operators and word
selects are compiled with ``booleans="alu"`` (no branches) and run in the simulator on edge
and random inputs; the outputs must equal the IR interpreter's. The driver's choice
between the two ways is checked on a DPF the branch way cannot place.
"""

from __future__ import annotations

import random

import pytest

from dpfc.codegen.emit import generate
from dpfc.diagnostics import SourceFile
from dpfc.driver import CompileOptions, compile_source
from dpfc.ir.interp import Inputs
from dpfc.schedule import Branch, ScheduleOptions
from dpfc.target import BUILTIN_PROFILES
from tests.sim_harness import arrays_of, assert_same, reference, run_compiled

EDGES = [0, 1, 2, 0x7FFF_FFFF, 0x8000_0000, 0x8000_0001, 0xFFFF_FFFE, 0xFFFF_FFFF]
# tofino2 (8 EUs): a signed <= as a word takes 5 ALU levels (sign flips, MAX, SUB, MIN, XOR).
AS_WORDS = CompileOptions(
    target=BUILTIN_PROFILES["tofino2"], schedule=ScheduleOptions(booleans="alu", secondary=False)
)

CASES = {
    "unsigned": "push((a < b) as u32, (a <= b) as u32, (a > b) as u32, (a >= b) as u32);",
    "signed": "let x = a as i32; let y = b as i32;\n"
    "    push((x < y) as u32, (x <= y) as u32, (x > y) as u32, (x >= y) as u32);",
    "equality": "push((a == b) as u32, (a != b) as u32, ((a & b) != 0) as u32);",
    "logic": "push((a < b && b != 0) as u32, (a == 0 || b == 0) as u32, ((a < b) != (b < a)) as u32);",
    "select": "push(select(a < b, a + 1, b + 2), select(a == b || a > 7, b, a ^ b));",
}


def _inputs(rng: random.Random) -> list[Inputs]:
    pairs = [(a, b) for a in EDGES for b in EDGES]
    pairs += [(rng.getrandbits(32), rng.getrandbits(32)) for _ in range(16)]
    pairs += [(x, x) for x in EDGES]
    return [Inputs(stack=[a, b]) for a, b in pairs]


@pytest.mark.parametrize("case", sorted(CASES))
def test_conditions_as_alu_words_run_as_the_ir_says(case: str) -> None:
    source = f"module w;\ndpf w(a: u32, b: u32) {{\n    {CASES[case]}\n}}\n"
    compiled = compile_source(SourceFile("w.dpf", source), AS_WORDS)
    (unit,) = compiled.units
    assert unit.problem.booleans == "alu" and unit.problem.value_conditions > 0
    assert not any(isinstance(n.end, Branch) for n in unit.problem.nodes)
    schedule = unit.result.schedule
    program = generate(schedule).program
    arrays = arrays_of(unit.problem, schedule.bindings)
    for inputs in _inputs(random.Random(case)):
        sim = run_compiled(program, arrays, inputs)
        assert sim is not None
        expected = reference(compiled.module, "w", inputs, sim)
        try:
            assert_same(sim, expected, {}, {})
        except AssertionError as exc:
            raise AssertionError(f"{case} on {inputs.stack}:\n{exc}") from None


FOUR = """module four;
dpf four(a: u32, b: u32, c: u32) {
    push((a < b) as u32, (b < c) as u32, (a == c) as u32, (a >= c) as u32);
}
"""


def test_the_driver_keeps_the_way_that_fits() -> None:
    """Four comparisons as words are 12 paths as branches (in-packet code carries 4
    epilogs: DPF6023); as ALU words they fit, and the driver keeps that way."""
    with pytest.raises(Exception) as info:
        compile_source(
            SourceFile("four.dpf", FOUR),
            CompileOptions(schedule=ScheduleOptions(booleans="branch")),
        )
    assert "DPF6023" in str(getattr(info.value, "diagnostics", info.value))
    (unit,) = compile_source(SourceFile("four.dpf", FOUR), CompileOptions()).units
    assert unit.problem.booleans == "alu" and unit.result.schedule.eus_used == 4
