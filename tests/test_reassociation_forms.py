"""Re-association never costs an EU and never changes a result (random chains).

Hypothesis draws DPFs whose results are chains of one associative operation (``+ & | ^
min max``) over parameters and constants, with repeated leaves and up to six parameters
alive at once: the programs where re-association lowers a tree, and where the lower tree
can need more registers (``p + q + q + q`` as ``(p + q) + (q + q)`` needs ``q`` in both an
A and a B register: with every register taken, a ninth). Each is compiled (the driver
schedules both forms and keeps the better, schedule/module.py) and compared with the same
DPF optimised without the pass and scheduled alone: no more EUs. The compiled code runs in
the simulator equal to the IR interpreter.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from hypothesis import given, settings
from hypothesis import strategies as st

from dpfc.codegen.emit import generate
from dpfc.diagnostics import DiagnosticError, SourceFile
from dpfc.driver import CompileOptions, compile_source, lower
from dpfc.ir.interp import Inputs
from dpfc.passes.manager import DEFAULT_PIPELINE, run_pipeline
from dpfc.schedule import Budget, ScheduleOptions, schedule_module
from tests.sim_harness import arrays_of, assert_same, reference, run_compiled

# Small limits (2 M units per question): a DPF left undecided is rejected, which is fine
# here; what is compared is every DPF both ways compile.
OPTIONS = ScheduleOptions(
    budget=Budget(feasibility=2_000_000, improve=2_000_000), secondary=False, needed_eus=False
)
OPERATORS = ["+", "&", "|", "^", "min", "max"]


@dataclass(frozen=True)
class Chains:
    source: str
    params: int


@st.composite
def chains(draw: st.DrawFn) -> Chains:
    params = draw(st.integers(min_value=2, max_value=6))
    names = [f"p{i}" for i in range(params)]
    # Mostly parameters: a bundle loads at most two constants, and DPFs rejected for that
    # (with a long proof) say nothing about re-association.
    leaf = st.one_of(*[st.sampled_from(names)] * 4, st.integers(0, 0xFFFF).map(str))
    results = []
    for _ in range(draw(st.integers(min_value=1, max_value=2))):
        op = draw(st.sampled_from(OPERATORS))
        leaves = draw(st.lists(leaf, min_size=3, max_size=6))
        expression = leaves[0]
        for item in leaves[1:]:
            expression = (
                f"{op}({expression}, {item})"
                if op in ("min", "max")
                else (f"({expression} {op} {item})")
            )
        results.append(expression)
    # Keep every parameter alive to the end, so registers are scarce.
    pushed = ", ".join([*results, *names][:8])
    signature = ", ".join(f"{n}: u32" for n in names)
    return Chains(f"module chains;\ndpf chains({signature}) {{\n    push({pushed});\n}}\n", params)


@settings(max_examples=200, deadline=None)
@given(program=chains(), seed=st.integers(0, 2**32))
def test_reassociation_never_costs_an_eu_nor_changes_a_result(program: Chains, seed: int) -> None:
    try:
        compiled = compile_source(
            SourceFile("chains.dpf", program.source), CompileOptions(schedule=OPTIONS)
        )
    except DiagnosticError:
        return  # rejected with a diagnostic (e.g. too many constants): nothing to compare
    (unit,) = compiled.units
    plain = lower(compiled.checked)
    run_pipeline(plain, [p for p in DEFAULT_PIPELINE if p != "reassociate"])
    try:
        ((_, alone),) = schedule_module(plain, compiled.profile, OPTIONS)
    except DiagnosticError:
        alone = None
    if alone is not None:
        assert unit.result.schedule.eus_used <= alone.schedule.eus_used, program.source
    schedule = unit.result.schedule
    code = generate(schedule).program
    arrays = arrays_of(unit.problem, schedule.bindings)
    rng = random.Random(seed)
    inputs = Inputs(
        stack=[rng.choice([0, 1, 0xFFFF_FFFF, rng.getrandbits(32)]) for _ in range(program.params)]
    )
    sim = run_compiled(code, arrays, inputs)
    assert sim is not None
    assert_same(sim, reference(compiled.module, "chains", inputs, sim), {}, {})
