"""End to end: every example DPF compiles, and runs in the simulator as the IR says.

Each DPF of ``examples/dpf`` is compiled for tofino1 (check, lower, optimise, Z3 schedule,
code generation), installed or put in a real packet, and run by the simulator
(:mod:`tests.sim_harness`); the output stack, steering, chain target, code header and the
final memory must equal the IR interpreter's on the same inputs — the applications' own
cases (KVS hits and misses, stale and fresh Paxos rounds, ...) and random inputs. The
paper's 4-EU fit of KVS cache-get and the Paxos acceptor is asserted; tofino2 and a 2-lane
profile either compile (and then run equal) or reject with a diagnostic.

The harness itself is validated first on the hand-written assembly of ``examples/asm``
against the IR of the same applications.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from dpfc.asm import assemble_text
from dpfc.codegen.emit import generate
from dpfc.diagnostics import DiagnosticError
from dpfc.driver import (
    CompiledModule,
    CompiledUnit,
    CompileOptions,
    check_source,
    compile_source,
    optimised_ir,
)
from dpfc.ir.core import Module
from dpfc.ir.interp import Inputs
from dpfc.isa.bundle import PC
from dpfc.machine.program import MachineProgram
from dpfc.schedule.problem import Exit
from dpfc.target import BUILTIN_PROFILES
from dpfc.target.profile import TargetProfile
from tests.conftest import ROOT
from tests.sim_harness import (
    ArraySpec,
    arrays_of,
    assert_same,
    rand_order,
    reference,
    run_compiled,
)

EXAMPLES = sorted((ROOT / "examples" / "dpf").glob("*.dpf"))
CORPUS = sorted((ROOT / "examples" / "corpus").glob("*.dpf"))
TOFINO1 = BUILTIN_PROFILES["tofino1"]
TWO_LANE = replace(TOFINO1, name="two_lane", lanes=2, hash_functions=("crc32", "crc32c"))
VALID = 0x8000_0000
RANDOM_CASES = 6


@functools.cache
def compiled(path: Path, profile: TargetProfile) -> CompiledModule:
    return compile_source(path, CompileOptions(target=profile))


def chain_targets(module: CompiledModule) -> dict[str, PC]:
    """A distinct in-switch prolog PC per chain target (what the linker would resolve)."""
    names = sorted(
        {
            leaf.end.chain
            for unit in module.units
            for leaf in unit.problem.nodes
            if isinstance(leaf.end, Exit) and leaf.end.chain
        }
    )
    return {name: PC(False, 100 + i) for i, name in enumerate(names)}


def app_inputs(name: str) -> list[Inputs]:
    """The applications' own cases."""
    kvs_memory: dict[str, Mapping[int, int]] = {
        "index": {5: VALID | 7, 6: 9, 8: VALID | 0},
        "values0": {7: 70, 0: 1},
        "values1": {7: 71},
        "values2": {7: 72},
        "hits": {7: 3},
    }
    rows = {f"countmin.row{r}": {i: (i * 7 + r) % 5 for i in range(0, 1024, 3)} for r in range(3)}
    cases: dict[str, list[Inputs]] = {
        # A hit, a miss (valid bit clear), an absent key, a hit on tuple 0, a key beyond
        # the map (unmapped: reads 0, a miss).
        "cache_get": [Inputs(stack=[k], memory=kvs_memory) for k in (5, 6, 9, 8, 45_000)],
        "cache_put": [Inputs(stack=[k], memory=kvs_memory) for k in (5, 6, 45_000)],
        "cache_update": [
            Inputs(stack=[5, 7, 70, 71, 72], memory=kvs_memory),
            Inputs(stack=[9, VALID | 44_999, 1, 2, 3]),
            Inputs(stack=[1, 45_000, 1, 2, 3]),  # tuple index beyond the arrays
        ],
        "count_min": [Inputs(stack=[k], memory=rows) for k in (0, 1, 0xDEADBEEF)],
        "counter": [Inputs(stack=[k], memory={"counters": {5: 41}}) for k in (5, 6, 4096)],
        "lb2": [Inputs(memory={"packets": {0: n}}) for n in (0, 1023, 1024, 7 << 10, 0xFFFF_FFFF)],
        "lb3_client": [
            Inputs(memory={"loads_a": {3: 9}, "loads_b": {5: 2}}, rand=[3, 5]),
            Inputs(memory={"loads_a": {3: 1}, "loads_b": {5: 2}}, rand=[3, 5]),
            Inputs(memory={"loads_a": {3: 2}, "loads_b": {3: 2}}, rand=[0xFFF3, 0x13]),
        ],
        "lb3_server": [Inputs(stack=[s, 17]) for s in (0, 7, 8)],
        "leader": [Inputs(stack=[99], memory={"sequence": {0: 41}})],
        "acceptor": [
            Inputs(stack=[4, 9, 1234], memory={"rounds": {4: 10}}),  # stale: dropped
            Inputs(stack=[4, 11, 1234], memory={"rounds": {4: 10}}),  # fresh: accepted
            Inputs(stack=[4, 10, 1234], memory={"rounds": {4: 10}}),  # the same round
            Inputs(stack=[70_000, 1, 2]),  # an instance beyond the arrays
        ],
        "max_hop_latency": [
            Inputs(stack=[100, 1], meta={"queue_depth": 0, "ingress_port": 2}),
            Inputs(stack=[10_000, 1], meta={"queue_depth": 5000, "ingress_port": 2}),
            Inputs(
                stack=[500, 1],
                memory={"worst_by_port": {4: 900}},
                meta={"queue_depth": 20, "ingress_port": 4, "timestamp": 77},
            ),
        ],
    }
    return cases.get(name, [])


def random_inputs(rng: random.Random, params: int, arrays: Sequence[ArraySpec]) -> Inputs:
    """Small words (likely indexes), valid tuples and arbitrary words."""
    keys = [rng.randrange(16) for _ in range(3)]

    def word() -> int:
        return rng.choice(
            [rng.choice(keys), rng.randrange(64), VALID | rng.choice(keys), rng.getrandbits(32)]
        )

    memory = {a.name: {rng.choice(keys) % a.size: word() for _ in range(3)} for a in arrays}
    return Inputs(
        stack=[word() for _ in range(params + rng.randrange(3))],
        memory=memory,
        meta={"queue_depth": word(), "ingress_port": rng.randrange(16), "timestamp": word()},
        rand=[rng.getrandbits(32), rng.randrange(16), rng.getrandbits(32)],
    )


def compare(
    module: Module,
    name: str,
    program: MachineProgram,
    arrays: Sequence[ArraySpec],
    cases: Sequence[Inputs],
    targets: Mapping[str, PC],
    order: Sequence[int] | None,
) -> int:
    """Run every case in the simulator and the interpreter; returns the cases compared."""
    sizes = {a.name: a.size for a in arrays}
    for case in cases:
        sim = run_compiled(program, arrays, case, rand_order=order)
        assert sim is not None, f"{name}: the code and stack {case.stack} do not fit a packet"
        expected = reference(module, name, case, sim)
        try:
            assert_same(sim, expected, sizes, targets)
        except AssertionError as exc:
            raise AssertionError(f"{name} on {case}:\n{exc}") from None
    return len(cases)


def run_unit(compiled_module: CompiledModule, unit: CompiledUnit, cases: int) -> int:
    targets = chain_targets(compiled_module)
    schedule = unit.result.schedule
    # Regenerate with the chain targets resolved (what the linker will do).
    program = generate(schedule, chain_targets=targets).program
    arrays = arrays_of(unit.problem, schedule.bindings)
    rng = random.Random(unit.name)
    inputs = [
        *app_inputs(unit.name),
        *(random_inputs(rng, unit.problem.params, arrays) for _ in range(cases)),
    ]
    return compare(
        compiled_module.module, unit.name, program, arrays, inputs, targets, rand_order(schedule)
    )


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_examples_run_in_the_simulator_as_the_ir_says(path: Path) -> None:
    module = compiled(path, TOFINO1)
    assert module.units
    for unit in module.units:
        assert unit.result.undecided == (), unit.result.status
        assert run_unit(module, unit, RANDOM_CASES) >= RANDOM_CASES


@pytest.mark.parametrize("path", CORPUS, ids=[p.stem for p in CORPUS])
def test_the_corpus_runs_in_the_simulator_as_the_ir_says(path: Path) -> None:
    """The user-style DPFs of examples/corpus (docs/performance.md) on random inputs."""
    module = compiled(path, TOFINO1)
    for unit in module.units:
        assert run_unit(module, unit, 3) >= 3


def test_a_constant_address_costs_one_eu_not_two() -> None:
    """``tally[1] += x``: the constant reaches the address register through the ALU
    (``ADD 0, 1`` in EU0), so the access runs in EU1 (a LOAD_IMM and a MOV would make it
    EU2); the schedule is proven minimal and runs as the IR says (the corpus test)."""
    unit = compiled(ROOT / "examples/corpus/constant_address.dpf", TOFINO1).units[0]
    assert unit.result.schedule.eus_used == 2 and unit.result.proven_optimal
    (access,) = [o for o in unit.problem.ops if o.mem is not None]
    (made,) = unit.problem.same_word
    assert unit.problem.same_word[made] == access.operands[0]
    assert any(lo.op == made for step in unit.result.schedule.steps for lo in step.alu)


def test_cache_get_and_the_paxos_acceptor_fit_four_eus() -> None:
    kvs = compiled(ROOT / "examples/dpf/kvs.dpf", TOFINO1)
    paxos = compiled(ROOT / "examples/dpf/paxos.dpf", TOFINO1)
    for unit in (kvs.unit("cache_get"), paxos.unit("acceptor")):
        assert unit.result.schedule.eus_used <= 4
        assert unit.result.proven_optimal


def test_the_two_random_words_of_lb3_reach_the_right_instructions() -> None:
    """lb3_client draws i, then j: with distinct words the choice shows which is which."""
    module = compiled(ROOT / "examples/dpf/lb3.dpf", TOFINO1)
    unit = module.unit("lb3_client")
    program = unit.compiled.program
    arrays = arrays_of(unit.problem, unit.result.schedule.bindings)
    case = Inputs(memory={"loads_a": {3: 9}, "loads_b": {5: 2}}, rand=[3, 5])
    sim = run_compiled(program, arrays, case, rand_order=rand_order(unit.result.schedule))
    assert sim is not None
    # loads_a[i=3] = 9 > loads_b[j=5] = 2: forward to j.
    assert (sim.verdict, sim.port) == ("forward", 5)
    assert reference(module.module, "lb3_client", case, sim).steer_value == 5


@pytest.mark.parametrize(
    "profile", [BUILTIN_PROFILES["tofino2"], TWO_LANE], ids=["tofino2", "two_lane"]
)
@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_other_profiles_compile_or_name_the_constraint(path: Path, profile: TargetProfile) -> None:
    try:
        module = compiled(path, profile)
    except DiagnosticError as exc:
        # A diagnostic that names the constraint: sema (DPF52xx, e.g. a @pin outside the
        # profile's lanes; DPF5117, a hash lane the profile lacks) or the scheduler (DPF60xx).
        codes = [d.code for d in exc.diagnostics]
        assert codes and all(c.startswith(("DPF52", "DPF60", "DPF5117")) for c in codes), codes
        return
    for unit in module.units:
        assert run_unit(module, unit, 2) >= 2


# -- the harness on hand-written assembly ------------------------------------------------


@dataclass(frozen=True)
class HandWritten:
    asm: str  # examples/asm/<asm>.dpfasm
    dpf: str  # examples/dpf/<dpf>.dpf
    name: str  # the DPF in that module
    # Where the asm's NEXT_PC goes: its literal @switch:N for each chain target.
    chains: tuple[tuple[str, PC], ...] = ()
    # Arrays the source does not pin: where the asm puts them.
    placed: tuple[tuple[str, int, int], ...] = ()


HAND_WRITTEN = (
    HandWritten("cache_get", "kvs", "cache_get", (("count_min.count_min", PC(False, 1)),)),
    HandWritten("cache_put", "kvs", "cache_put", (("empty", PC(False, 0)),)),
    HandWritten("cache_update", "kvs_update", "cache_update"),
    HandWritten("count_min", "count_min", "count_min"),
    HandWritten("counter", "counter", "counter"),
    HandWritten("lb1", "lb1", "lb1"),
    HandWritten("lb2", "lb2", "lb2"),
    HandWritten("lb3_client", "lb3", "lb3_client"),
    HandWritten("lb3_server", "lb3", "lb3_server"),
    HandWritten("paxos_acceptor", "paxos", "acceptor"),
    HandWritten(
        "paxos_leader", "paxos", "leader", (("acceptor", PC(False, 1)),), (("sequence", 0, 0),)
    ),
)


@pytest.mark.parametrize("hand", HAND_WRITTEN, ids=[h.asm for h in HAND_WRITTEN])
def test_the_harness_runs_hand_written_assembly_as_the_ir_says(hand: HandWritten) -> None:
    """The paper's hand placements agree with the IR of the language versions; so the
    harness's setup (memory, steering, metadata, pointers) is right before it judges
    compiled code. The hand code draws RAND without naming instructions: one word for all
    draws (lb3_client with i = j)."""
    asm_path = ROOT / "examples" / "asm" / f"{hand.asm}.dpfasm"
    program = assemble_text(asm_path.read_text(), str(asm_path), TOFINO1)
    module = optimised_ir(check_source(ROOT / "examples" / "dpf" / f"{hand.dpf}.dpf", TOFINO1))
    placed = {name: (eu, lane) for name, eu, lane in hand.placed}
    function = module.function(hand.name)
    used = sorted({i.symbol for i in function.instrs() if i.symbol in module.arrays})
    arrays = []
    for array in used:
        decl = module.arrays[array]
        eu, lane = decl.pin if decl.pin is not None else placed[array]
        arrays.append(ArraySpec(array, decl.size, eu, lane, decl.mapping))
    rng = random.Random(hand.asm)

    def one_draw(case: Inputs) -> Inputs:
        assert isinstance(case.rand, Sequence)  # app_inputs gives words, not iterators
        return replace(case, rand=case.rand[:1])

    cases = [
        *(one_draw(c) for c in app_inputs(hand.name)),
        *(random_inputs(rng, function.params, arrays) for _ in range(4)),
    ]
    assert compare(module, hand.name, program, arrays, cases, dict(hand.chains), None) >= 4
