"""Scheduling does not depend on where the source writes a pure ``let``.

``tests/layout/police_let_before.dpf`` writes ``slack`` before the branch that uses it,
``police_let_inside.dpf`` inside that branch; the ``police_packet_*`` pair is the same DPF
placed in the packet. Before the ``sink`` pass (dpfc/passes/sink.py), the first of each
pair was rejected (DPF6026 "needs at least 5 EUs"; in the packet also DPF6023, 5 paths)
while the second compiled in 4 EUs. Now each pair compiles to the same IR, 4 EUs and the
same code bytes.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from dpfc.driver import CompiledModule, CompileOptions, check_source, compile_source, optimised_ir
from dpfc.ir import format_module
from dpfc.schedule import ScheduleOptions
from tests.conftest import ROOT

LAYOUT = ROOT / "tests" / "layout"
PAIRS = [
    (LAYOUT / "police_let_before.dpf", LAYOUT / "police_let_inside.dpf"),
    (LAYOUT / "police_packet_let_before.dpf", LAYOUT / "police_packet_let_inside.dpf"),
]


def _compiled(path: Path) -> CompiledModule:
    return compile_source(path, CompileOptions(schedule=ScheduleOptions(cache=False)))


def _code(module: CompiledModule) -> tuple[bytes, tuple[tuple[tuple[int, int], bytes], ...]]:
    """The code a module's DPF runs: in-packet options and in-switch words."""
    (unit,) = module.units
    encoded = unit.compiled.encoded
    return encoded.options, tuple(sorted(encoded.words.items()))


@pytest.mark.parametrize("pair", PAIRS, ids=lambda pair: pair[0].stem)
def test_a_let_before_the_branch_compiles_like_the_let_inside_it(pair: tuple[Path, Path]) -> None:
    before, inside = pair
    ir_before = format_module(optimised_ir(check_source(before)))
    ir_inside = format_module(optimised_ir(check_source(inside)))
    assert ir_before == ir_inside
    first, second = _compiled(before), _compiled(inside)
    for module in (first, second):
        (unit,) = module.units
        assert unit.result.schedule.eus_used == 4
        assert unit.result.proven_optimal
    assert _code(first) == _code(second)
    assert _code(first) != (b"", ())
