"""Differential property: compiled code in the simulator == the IR interpreter.

For random well-typed programs (:mod:`tests.dpf_programs`, 1,000 in the default "ci"
hypothesis profile): check -> lower -> optimise -> Z3 schedule -> code generation ->
encode -> simulator (:mod:`tests.sim_harness`, real packets), compared with the IR
interpreter on the same inputs; the kept schedule is never worse than the greedy one in
any measure, and re-association never raises a DPF's earliest-EU bound nor costs an EU
(the DPF optimised without the pass is scheduled alone and compared). A program the compiler rejects must be rejected with a
diagnostic (DiagnosticError), never another exception; every schedule the compiler accepts
has passed the independent checker (the driver runs it: ``ScheduleOptions.check``), so the
checker agrees with Z3 on all of them.

To keep the suite within its time budget the secondary objectives are off and each Z3
question has a (deterministic) resource limit of 5 M units; a greedy schedule that meets
the earliest-EU bound needs no Z3 question at all (it is minimal in EUs by that bound): Z3
schedules the programs where the greedy scheduler falls short, and the counts are printed.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import replace

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from dpfc.backends.jit import missing as jit_missing
from dpfc.codegen.emit import generate as generate_code
from dpfc.diagnostics import DiagnosticError, SourceFile
from dpfc.driver import CompiledModule, CompileOptions, compile_source, lower
from dpfc.ir.interp import Inputs
from dpfc.ir.printer import format_function
from dpfc.isa.bundle import PC
from dpfc.passes.manager import DEFAULT_PIPELINE, run_pipeline
from dpfc.schedule import (
    Budget,
    Exit,
    ScheduleOptions,
    ScheduleResult,
    build_problem,
    compute_bounds,
    schedule_module,
)
from tests.dpf_programs import GeneratedProgram, generate, inputs_for, programs
from tests.sim_harness import arrays_of, assert_same, rand_order, reference, run_compiled

OPTIONS = ScheduleOptions(budget=Budget(feasibility=5_000_000), secondary=False, needed_eus=False)
INPUT_SETS = 2
STATS = {
    "accepted": 0,
    "rejected": 0,
    "z3": 0,
    "greedy": 0,
    "reassociated": 0,
    "programs run": 0,
    "also run by the JIT": 0,
}


def compile_and_compare(program: GeneratedProgram, seed: int) -> bool:
    try:
        compiled = compile_source(
            SourceFile("generated.dpf", program.source), CompileOptions(schedule=OPTIONS)
        )
    except DiagnosticError as exc:
        assert exc.diagnostics and all(d.code.startswith("DPF") for d in exc.diagnostics)
        STATS["rejected"] += 1
        return False
    STATS["accepted"] += 1
    for unit in compiled.units:
        STATS[unit.result.schedule.scheduler] += 1
        assert_no_worse_than_greedy(unit.result)
    assert_reassociation_adds_no_eus(program, compiled)
    rng = random.Random(seed)
    for unit in compiled.units:
        chains = {n.end.chain for n in unit.problem.nodes if isinstance(n.end, Exit)}
        targets = {c: PC(False, 200) for c in chains if isinstance(c, str)}
        schedule = unit.result.schedule
        program_code = generate_code(schedule, chain_targets=targets).program
        arrays = arrays_of(unit.problem, schedule.bindings)
        sizes = {a.name: a.size for a in arrays}
        jit_run = False  # each compiled DPF's first packet is also run by the JIT
        for _ in range(INPUT_SETS):
            raw = inputs_for(program, rng)
            given_inputs = Inputs(stack=raw.stack, memory=raw.memory, rand=raw.rand)
            jit = not jit_run and jit_missing() is None
            sim = run_compiled(
                program_code, arrays, given_inputs, rand_order=rand_order(schedule), jit=jit
            )
            if sim is None:
                continue
            if jit:  # run_compiled compared the JIT's pass with the interpreter's
                STATS["also run by the JIT"] += 1
                jit_run = True
            expected = reference(compiled.module, unit.name, given_inputs, sim)
            assert_same(sim, expected, sizes, targets)
            STATS["programs run"] += 1
    return True


def assert_no_worse_than_greedy(result: ScheduleResult) -> None:
    """The kept schedule is no worse than greedy's in any measure (EUs, bundles, selectors,
    instructions, code bytes), or uses fewer EUs."""
    mine, greedy = result.measures, result.greedy_measures
    assert mine is not None
    if greedy is not None:
        assert mine.eus < greedy.eus or mine.no_worse_than(greedy), (mine, greedy)


def assert_reassociation_adds_no_eus(program: GeneratedProgram, compiled: CompiledModule) -> None:
    """Re-association never raises the earliest-EU bound of a DPF (the bound the EU search
    starts from), and never costs an EU: where it changed a DPF, the compiled DPF (the
    better of both forms, schedule/module.py) uses no more EUs than the DPF optimised
    without the pass and scheduled alone."""
    checked = compiled.checked
    profile = compiled.profile
    plain = lower(checked)
    run_pipeline(plain, tuple(p for p in DEFAULT_PIPELINE if p != "reassociate"))
    for function in plain.functions:
        unit = compiled.unit(function.name)
        reassociated = next(f for f in compiled.module.functions if f.name == function.name)
        if format_function(function) == format_function(reassociated):
            continue
        with_pass = compute_bounds(build_problem(compiled.module, reassociated, profile)).min_eus
        without = compute_bounds(build_problem(plain, function, profile)).min_eus
        assert with_pass <= without, (with_pass, without)
        STATS["reassociated"] += 1
        try:
            alone = schedule_module(replace(plain, functions=[function]), profile, OPTIONS)
        except DiagnosticError:
            continue
        ((_, result),) = alone
        assert unit.result.schedule.eus_used <= result.schedule.eus_used, function.name


@pytest.fixture(scope="module", autouse=True)
def _print_counts(request: pytest.FixtureRequest) -> Iterator[None]:
    yield
    # Through pytest's reporter (past its capture): the counts are part of what this
    # property reports.
    plugins = request.config.pluginmanager
    reporter, capture = plugins.get_plugin("terminalreporter"), plugins.get_plugin("capturemanager")
    if reporter is not None and capture is not None:
        with capture.global_and_fixture_disabled():
            reporter.write_line(f"\ndifferential compile property: {STATS}")


@settings(deadline=None)
@given(program=programs(), seed=st.integers(min_value=0, max_value=2**32))
# Two arrays on exclusive paths once shared a lane, and so its addresses (DPF7004).
@example(program=generate(2_605_231_146), seed=0)
def test_compiled_code_in_the_simulator_matches_the_interpreter(
    program: GeneratedProgram, seed: int
) -> None:
    compile_and_compare(program, seed)
