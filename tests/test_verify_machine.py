"""The symbolic run of placed code (dpfc.verify.machine) against the simulator.

A compiled DPF runs once in the simulator on some inputs (:func:`tests.sim_harness.run_compiled`)
and symbolically; with the run's inputs substituted (the stack, every metadata field the run
saw, the RAND words in draw order, the arrays' initial words) exactly one path's condition
holds, and that path gives what the simulator gave (:func:`check_symbolic`): a fault where it
dropped the packet for one, else the stack the packet left with, the words of the lane
memories after it, and a drop, forward or multicast where the DPF steered so. The DPFs:
random well-typed programs (:mod:`tests.dpf_programs`, compiled as the compile differential
compiles them) and every DPF of examples/dpf and examples/corpus on the applications' own
cases and random ones (tests/test_compile_e2e.py's inputs).
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from pathlib import Path as FilePath

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpfc.codegen.emit import generate as generate_code
from dpfc.diagnostics import DiagnosticError, SourceFile
from dpfc.driver import CompileOptions, compile_source
from dpfc.ir.interp import Inputs, canonical_memory
from dpfc.isa.bundle import PC
from dpfc.machine import MachineProgram
from dpfc.schedule import Budget, Exit, ScheduleOptions
from dpfc.verify import Words
from dpfc.verify.bitvec import Valuation
from dpfc.verify.machine import Path, symbolic_paths
from tests.dpf_programs import GeneratedProgram, inputs_for, programs
from tests.sim_harness import (
    STEER_VALUES,
    ArraySpec,
    SimOutcome,
    arrays_of,
    rand_order,
    run_compiled,
)
from tests.test_compile_e2e import (
    CORPUS,
    EXAMPLES,
    TOFINO1,
    app_inputs,
    chain_targets,
    compiled,
    random_inputs,
)

OPTIONS = ScheduleOptions(budget=Budget(feasibility=5_000_000), secondary=False, needed_eus=False)
RUN = {"programs": 0, "paths": 0}


def check_symbolic(
    code: MachineProgram, arrays: Sequence[ArraySpec], inputs: Inputs, order: Sequence[int]
) -> int | None:
    """Run ``code`` on ``inputs`` in the simulator and symbolically, and compare (module
    docstring); the number of paths, or None when no packet can carry these inputs."""
    sim = run_compiled(code, arrays, inputs, rand_order=order)
    if sim is None:
        return None
    w = Words()
    paths = symbolic_paths(w, code, len(inputs.stack))
    given_words = {f"stack{j}": word & 0xFFFF_FFFF for j, word in enumerate(inputs.stack)}
    for name, value in sim.meta.items():
        field = code.profile.metadata_by_name(name)
        if field is not None:
            given_words[f"md{field.index}"] = value & 0xFFFF_FFFF
    words = sim.rand_words
    for j, k in enumerate(order):
        given_words[f"rand{j}"] = words[k % len(words)] if words else 0
    memories = {f"mem{a.eu}_{a.lane}": _initial(inputs, a) for a in arrays}
    at = w.valuation(given_words, memories)
    taken = [p for p in paths if at.of(p.condition)]
    assert len(taken) == 1, [p.stages for p in taken]
    assert_same(w, at, taken[0], sim, arrays, memories)
    return len(paths)


def _initial(inputs: Inputs, array: ArraySpec) -> dict[int, int]:
    """The array's words before the run (a list of words or index -> word), within its size."""
    given = inputs.memory.get(array.name, {})
    pairs = given.items() if isinstance(given, Mapping) else enumerate(given)
    return {i: v & 0xFFFF_FFFF for i, v in pairs if 0 <= i < array.size}


def assert_same(
    w: Words,
    at: Valuation,
    path: Path,
    sim: SimOutcome,
    arrays: Sequence[ArraySpec],
    memories: dict[str, dict[int, int]],
) -> None:
    if path.fault is not None:
        assert sim.verdict == "drop", (path.fault, sim.reason)
        return
    # the words after the DPF: where memory held one, and where the path accessed it
    final: dict[str, dict[int, int]] = {}
    for a in arrays:
        before = memories[f"mem{a.eu}_{a.lane}"]
        array = path.memories.get((a.eu, a.lane))
        if array is None:
            final[a.name] = before
            continue
        touched = set(before)
        for access in path.accesses:
            if (access.eu, access.lane) == (a.eu, a.lane):
                touched.add(at.of(access.address))
        final[a.name] = {
            i: at.of(w.select(array, w.const(i))) for i in sorted(touched) if i < a.size
        }
    assert canonical_memory(final) == sim.memory
    decision = path.decision
    assert decision is not None
    if sim.stack is not None:
        stack = tuple(at.of(t) for t in decision.stack)
        assert stack == sim.stack
    value = at.of(decision.value)
    if decision.steering == "drop":
        assert sim.verdict == "drop", sim.reason
    elif decision.steering in ("forward", "multicast") and sim.stack is not None:
        assert value < STEER_VALUES and sim.port == value, (value, sim.port, sim.reason)


@settings(max_examples=40, deadline=None)
@given(program=programs(), seed=st.integers(min_value=0, max_value=2**32))
def _agree(program: GeneratedProgram, seed: int) -> None:
    try:
        module = compile_source(
            SourceFile("generated.dpf", program.source), CompileOptions(schedule=OPTIONS)
        )
    except DiagnosticError:
        return  # the compile differential checks how a program is refused
    rng = random.Random(seed)
    for unit in module.units:
        chains = {n.end.chain for n in unit.problem.nodes if isinstance(n.end, Exit)}
        targets = {c: PC(False, 200) for c in chains if isinstance(c, str)}
        schedule = unit.result.schedule
        code = generate_code(schedule, chain_targets=targets).program
        arrays = arrays_of(unit.problem, schedule.bindings)
        raw = inputs_for(program, rng)
        inputs = Inputs(stack=raw.stack, memory=raw.memory, rand=raw.rand)
        paths = check_symbolic(code, arrays, inputs, rand_order(schedule))
        if paths is not None:
            RUN["programs"] += 1
            RUN["paths"] += paths


def test_random_programs_run_symbolically_as_in_the_simulator() -> None:
    """Every example of the property, then: at least 30 compiled DPFs were compared."""
    _agree()
    print(f"symbolic run vs simulator: {RUN}")
    assert RUN["programs"] >= 30


@pytest.mark.parametrize("path", EXAMPLES + CORPUS, ids=[p.stem for p in EXAMPLES + CORPUS])
def test_the_examples_run_symbolically_as_in_the_simulator(path: FilePath) -> None:
    module = compiled(path, TOFINO1)
    targets = chain_targets(module)
    for unit in module.units:
        schedule = unit.result.schedule
        code = generate_code(schedule, chain_targets=targets).program
        arrays = arrays_of(unit.problem, schedule.bindings)
        rng = random.Random(unit.name)
        cases = [
            *app_inputs(unit.name),
            *(random_inputs(rng, unit.problem.params, arrays) for _ in range(4)),
        ]
        for case in cases:
            try:
                check_symbolic(code, arrays, case, rand_order(schedule))
            except AssertionError as exc:
                raise AssertionError(f"{unit.name} on {case}:\n{exc}") from None
