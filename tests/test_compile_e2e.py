"""End to end: every example DPF compiles, and runs in the simulator as the IR says.

Each DPF of ``examples/dpf`` is compiled for tofino1 (check, lower, optimise, Z3 schedule,
code generation), installed or put in a real packet, and run by the simulator
(:mod:`tests.sim_harness`); the output stack, steering, chain target, code header and the
final memory must equal the IR interpreter's on the same inputs — random inputs and the
applications' own cases (KVS hits and misses, stale and fresh Paxos rounds). The paper's
4-EU fit of KVS cache-get and the Paxos acceptor is asserted; tofino2 and a 2-lane profile
either compile (and then run equal) or reject with a DPF60xx diagnostic.
"""

from __future__ import annotations

import random
from dataclasses import replace
from pathlib import Path

import pytest

from dpfc.codegen.emit import generate
from dpfc.diagnostics import DiagnosticError
from dpfc.ir.interp import Inputs, run_function
from dpfc.isa.bundle import PC
from dpfc.pipeline import CompiledModule, compile_file
from dpfc.target import BUILTIN_PROFILES
from dpfc.target.profile import TargetProfile
from tests.conftest import ROOT
from tests.sim_harness import ArraySpec, assert_same, run_compiled

EXAMPLES = sorted((ROOT / "examples" / "dpf").glob("*.dpf"))
TOFINO1 = BUILTIN_PROFILES["tofino1"]
TWO_LANE = replace(TOFINO1, name="two_lane", lanes=2, hash_functions=("crc32", "crc32c"))
VALID = 0x8000_0000


def chain_targets(compiled: CompiledModule) -> dict[str, PC]:
    names = {
        leaf.end.chain
        for unit in compiled.units
        for leaf in unit.problem.nodes
        if leaf.is_leaf and getattr(leaf.end, "chain", None)
    }
    return {name: PC(False, 100 + i) for i, name in enumerate(sorted(n for n in names if n))}


def random_inputs(rng: random.Random, params: int, arrays: list[ArraySpec]) -> Inputs:
    def word() -> int:
        return rng.choice([rng.randrange(16), rng.randrange(64), rng.getrandbits(32)])

    memory = {a.name: {rng.randrange(min(a.size, 64)): word() for _ in range(4)} for a in arrays}
    return Inputs(
        stack=[word() for _ in range(params + 2)], memory=memory, rand=[rng.getrandbits(32)]
    )


def app_inputs(name: str) -> list[Inputs]:
    """The applications' own cases."""
    if name == "cache_get":
        memory = {
            "index": {5: VALID | 7, 6: 9},
            "values0": {7: 70},
            "values1": {7: 71},
            "values2": {7: 72},
            "hits": {7: 3},
        }
        return [Inputs(stack=[5], memory=memory), Inputs(stack=[6], memory=memory)]
    if name == "acceptor":
        memory = {"rounds": {4: 10}}
        return [
            Inputs(stack=[4, 9, 1234], memory=memory),  # stale: dropped
            Inputs(stack=[4, 11, 1234], memory=memory),  # fresh: accepted
        ]
    if name == "cache_update":
        return [Inputs(stack=[5, 7, 70, 71, 72])]
    return []


def run_module(path: Path, profile: TargetProfile, cases: int) -> list[str]:
    """Compile and compare every DPF of ``path``; returns the names compared."""
    compiled = compile_file(path, profile)
    targets = chain_targets(compiled)
    compared = []
    for unit in compiled.units:
        # Regenerate with the chain targets resolved (what the linker will do).
        program = generate(unit.result.schedule, chain_targets=targets).program
        bindings = unit.result.schedule.bindings
        arrays = [
            ArraySpec(name, unit.problem.arrays[name].size, *bindings[name])
            for name in sorted(bindings)
        ]
        rng = random.Random(unit.name)
        inputs = [random_inputs(rng, unit.problem.params, arrays) for _ in range(cases)]
        for given in [*app_inputs(unit.name), *inputs]:
            sim, interp_inputs = run_compiled(program, arrays, given, chain_targets=targets)
            if sim is None:
                continue
            expected = run_function(compiled.module, unit.name, interp_inputs)
            assert_same(sim, expected, program, arrays, targets)
        compared.append(unit.name)
    return compared


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_examples_run_in_the_simulator_as_the_ir_says(path: Path) -> None:
    assert run_module(path, TOFINO1, cases=6)


def test_cache_get_and_the_paxos_acceptor_fit_four_eus() -> None:
    kvs = compile_file(ROOT / "examples/dpf/kvs.dpf", TOFINO1)
    paxos = compile_file(ROOT / "examples/dpf/paxos.dpf", TOFINO1)
    assert kvs.unit("cache_get").result.schedule.eus_used <= 4
    assert paxos.unit("acceptor").result.schedule.eus_used <= 4
    assert kvs.unit("cache_get").result.proven_optimal


@pytest.mark.parametrize(
    "profile", [BUILTIN_PROFILES["tofino2"], TWO_LANE], ids=["tofino2", "two_lane"]
)
@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_other_profiles_compile_or_name_the_constraint(path: Path, profile: TargetProfile) -> None:
    try:
        run_module(path, profile, cases=2)
    except DiagnosticError as exc:
        # A diagnostic that names the constraint: sema (DPF52xx, e.g. a @pin lane) or the
        # scheduler (DPF60xx).
        assert all(d.code[:4] in ("DPF5", "DPF6") for d in exc.diagnostics), exc.diagnostics
