"""The Z3 scheduler and its driver: optimal EU counts with proofs, options, diagnostics.

Every schedule here also passes the independent checker (the driver runs it), so these
tests are about what the scheduler *chooses*: the fewest EUs (the paper's hand schedules
are the reference: cache-get and the Paxos acceptor in 4 EUs), the proof of optimality, the
greedy baseline never beating Z3, every timing option of the profile, the diagnostics of
programs that cannot fit, and the honesty of the reports: nothing is said to be proven
that was not, and a DPF that fits is found even when fewer EUs cannot be ruled out.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from dpfc.diagnostics import DiagnosticError, SourceFile
from dpfc.driver import check_source, optimised_ir
from dpfc.schedule import (
    Budget,
    Problem,
    ScheduleOptions,
    build_problem,
    check_schedule,
    from_core,
    measure,
    schedule_module,
    schedule_problem,
)
from dpfc.target import BUILTIN_PROFILES
from dpfc.target.profile import BranchOperands, MemoryAddress, TargetProfile
from tests.conftest import ROOT

TOFINO1 = BUILTIN_PROFILES["tofino1"]
EXAMPLES = sorted((ROOT / "examples" / "dpf").glob("*.dpf"))

# The EU counts the scheduler proves optimal for the paper's applications on tofino1.
EXPECTED_EUS = {
    "counter": 1,
    "cache_get": 4,
    "cache_put": 1,
    "empty": 1,
    "cache_update": 3,
    "count_min": 4,
    "lb1": 1,
    "lb2": 3,
    "lb3_client": 4,
    "lb3_server": 2,
    "leader": 1,
    "acceptor": 3,
    "max_hop_latency": 4,
    "flow_guard": 4,  # flow_guard.dpf and flow_guard_chain.dpf (the tutorial's)
    "tally": 1,
    "flow_lb": 4,
}


def problems(path: Path | str | SourceFile, profile: TargetProfile = TOFINO1) -> list[Problem]:
    module = optimised_ir(check_source(path, profile))
    return [build_problem(module, f, profile) for f in module.functions]


def source_problems(text: str, profile: TargetProfile = TOFINO1) -> list[Problem]:
    return problems(SourceFile("test.dpf", text), profile)


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_examples_are_proven_optimal_on_tofino1(path: Path) -> None:
    module = optimised_ir(check_source(path, TOFINO1))
    for problem, result in schedule_module(module, TOFINO1):
        schedule = result.schedule
        assert check_schedule(schedule) == []
        assert result.proven_optimal, problem.name
        assert result.undecided == ()
        assert schedule.eus_used == EXPECTED_EUS[problem.name], problem.name
        if result.greedy_eus is not None:
            assert result.greedy_eus >= schedule.eus_used, "greedy beat the optimal schedule"


def test_paper_apps_fit_four_eus() -> None:
    (get, *_rest) = problems(ROOT / "examples/dpf/kvs.dpf")
    assert get.name == "cache_get"
    assert schedule_problem(get).schedule.eus_used <= 4
    acceptor = problems(ROOT / "examples/dpf/paxos.dpf")[1]
    assert acceptor.name == "acceptor"
    assert schedule_problem(acceptor).schedule.eus_used <= 4


@pytest.mark.parametrize(
    "variant",
    [
        {"branch_operands": BranchOperands.SELECTED},
        {"branch_operands": BranchOperands.LOADED},
        {"memory_address": MemoryAddress.SELECTED},
        {"immediates_per_bundle": 1},
    ],
    ids=["branch-selected", "branch-loaded", "address-selected", "one-immediate"],
)
def test_timing_options_give_valid_schedules(variant: dict[str, object]) -> None:
    profile = replace(TOFINO1, name="variant", **variant)  # type: ignore[arg-type]
    for name in ("kvs", "lb3"):
        module = optimised_ir(check_source(ROOT / f"examples/dpf/{name}.dpf", profile))
        for _problem, result in schedule_module(module, profile):
            assert check_schedule(result.schedule) == []
            assert result.proven_optimal


def test_loaded_branch_operands_save_an_eu_for_lb3() -> None:
    """LB3's client compares two loaded values: with `loaded` the compare joins the loads."""
    entry = problems(ROOT / "examples/dpf/lb3.dpf")[0]
    loaded_profile = replace(TOFINO1, name="loaded", branch_operands=BranchOperands.LOADED)
    loaded = problems(ROOT / "examples/dpf/lb3.dpf", loaded_profile)[0]
    assert schedule_problem(loaded).schedule.eus_used < schedule_problem(entry).schedule.eus_used


def test_the_greedy_option_is_reported() -> None:
    counter = problems(ROOT / "examples/dpf/counter.dpf")[0]
    greedy = schedule_problem(counter, ScheduleOptions(scheduler="greedy"))
    assert greedy.schedule.scheduler == "greedy" and not greedy.proven_optimal
    assert check_schedule(greedy.schedule) == []


CHAIN = """
module deep;
segment array a: u32[16];
segment array b: u32[16];
segment array c: u32[16];
segment array d: u32[16];
segment array e: u32[16];
dpf f(x: u32) { push(e[d[c[b[a[x]]]]]); }
"""


def test_a_chain_longer_than_the_eus_is_diagnosed_with_the_chain() -> None:
    (problem,) = source_problems(CHAIN)
    with pytest.raises(DiagnosticError) as info:
        schedule_problem(problem)
    (diag,) = info.value.diagnostics
    assert diag.code == "DPF6026"
    # A loaded value lands in B; the next address must be in A at EU entry: 2 EUs per load.
    assert "needs at least 9 EUs but tofino1 has 4" in diag.message
    # The five dependent loads, each with its source line, latest first (the chain ends in
    # the EU the message claims), then the note that the bound is about the DPF as written.
    chain, as_written = diag.notes[:-1], diag.notes[-1]
    assert len(chain) == 5
    assert all(n.span is not None and n.span.line == 8 for n in chain)
    assert [n.message.split(" in EU")[1][:1] for n in chain] == ["8", "6", "4", "2", "0"]
    assert "as written" in as_written.message and "as written" in diag.message
    assert diag.hint is not None and "chain" in diag.hint
    # With the address read after selection, a MOV and the load share an EU.
    selected = replace(
        BUILTIN_PROFILES["tofino2"], name="t2sel", memory_address=MemoryAddress.SELECTED
    )
    assert schedule_problem(source_problems(CHAIN, selected)[0]).schedule.eus_used == 5


PINNED = """
module pinned;
@pin(eu = 3, lane = 0)
segment array first: u32[16];
@pin(eu = 1, lane = 2)
segment array second: u32[16];
dpf f(x: u32) { push(second[first[x]]); }
"""


def test_a_pin_that_comes_too_early_is_named() -> None:
    (problem,) = source_problems(PINNED)
    with pytest.raises(DiagnosticError) as info:
        schedule_problem(problem)
    (diag,) = info.value.diagnostics
    assert diag.code == "DPF6027"
    assert "array `second` is pinned to EU1 lane 2" in diag.message
    assert "EU5 at the earliest" in diag.message
    assert diag.notes[0].span is not None and diag.notes[0].span.line == 5


SAME_LANE = """
module lanes;
@pin(eu = 2, lane = 1)
segment array values0: u32[16];
@pin(eu = 2, lane = 1)
segment array hits: u32[16];
dpf f(x: u32) { let v = values0[x]; hits[x] += 1; push(v); }
"""


def test_two_arrays_on_one_lane_of_one_path_are_named() -> None:
    (problem,) = source_problems(SAME_LANE)
    with pytest.raises(DiagnosticError) as info:
        schedule_problem(problem)
    (diag,) = info.value.diagnostics
    assert diag.code == "DPF6021"
    assert "array `hits` and array `values0` both need EU2 lane 1" in diag.message


def test_an_unsat_core_becomes_notes_at_the_source_lines() -> None:
    """The core's groups (a pin, an epilog) become notes pointing at their declarations."""
    (problem,) = source_problems(SAME_LANE)
    exit_leaf = problem.leaves()[0]
    diag = from_core(problem, ["pin:hits", f"exit:{exit_leaf}", "immediates"], needed_eus=6)
    assert diag.code == "DPF6020"
    messages = [n.message for n in diag.notes]
    assert messages[0] == "array `hits` is pinned to EU2 lane 1"
    assert diag.notes[0].span is not None and diag.notes[0].span.line == 5
    # The diagnostic points at the first group's source: the access to the pinned array.
    assert diag.span is not None and diag.span.text() == "hits[x] += 1;"
    assert any(
        "the only path ends with `push(v)`, which needs 1 value in registers" in m for m in messages
    )
    assert any("at most 2 distinct immediates" in m for m in messages)
    assert messages[-2] == "as written, it would need 6 EUs (found on a profile with more EUs)"
    assert "as written" in messages[-1]


def test_module_arrays_keep_one_binding_across_dpfs() -> None:
    text = """
module shared;
segment array counts: u32[64];
dpf bump(x: u32) { counts[x] += 1; }
dpf read(x: u32) { let y = x + 1; push(counts[y]); }
"""
    module = optimised_ir(check_source(SourceFile("shared.dpf", text), TOFINO1))
    (bump_problem, bump), (_, read) = schedule_module(module, TOFINO1)
    assert bump.schedule.bindings["counts"] == read.schedule.bindings["counts"]
    # `read` needs `counts` in EU1 at the earliest, so it is scheduled (and binds) first.
    assert bump_problem.arrays["counts"].pinned_by == "read"
    assert read.schedule.bindings["counts"][0] == 1


# Seven independent results of two inputs: the greedy scheduler needs 4 EUs, Z3 finds 3.
MANY_RESULTS = """
module many;
dpf many(a: u32, b: u32) {
    push(a + b, a - b, a & b, a | b, a ^ b, min(a, b), max(a, b));
}
"""


# Weighted balancing: the greedy scheduler finds no schedule on tofino1; Z3, asked about
# the profile's full EU count first, finds one in 4 EUs.
WEIGHTED = """
module weighted;
dpf weighted(key: u32) {
    let h = hash<1>(key);
    if h & 3 == 3 {
        forward(4 + ((h >> 2) & 1));
    } else {
        forward((h >> 2) & 3);
    }
}
"""


def test_a_dpf_that_fits_is_found_although_greedy_fails() -> None:
    (problem,) = source_problems(WEIGHTED)
    result = schedule_problem(problem)
    assert result.greedy_eus is None
    assert result.schedule.eus_used == 4 and result.proven_optimal
    assert check_schedule(result.schedule) == []


def test_fewer_eus_than_greedy_are_found() -> None:
    (problem,) = source_problems(MANY_RESULTS)
    result = schedule_problem(problem)
    assert result.greedy_eus == 4 and result.schedule.eus_used == 3


def test_undecided_is_never_reported_as_a_proof() -> None:
    """With a resource limit too small to decide anything, a DPF the greedy scheduler cannot
    place is DPF6024 (undecided), never DPF6020 ("rules out every placement")."""
    (problem,) = source_problems(WEIGHTED)
    tiny = ScheduleOptions(budget=Budget(feasibility=1_000, secondary=1_000, needed_eus=1_000))
    with pytest.raises(DiagnosticError) as info:
        schedule_problem(problem, tiny)
    (diag,) = info.value.diagnostics
    assert diag.code == "DPF6024"
    assert "neither place" in diag.message and "prove" in diag.message
    assert any("not a proof" in n.message for n in diag.notes)


def test_a_feasible_count_with_an_undecided_smaller_one_says_so() -> None:
    """At a small limit Z3 can neither find nor rule out 2 or 3 EUs: the greedy 4-EU
    schedule is kept and the report says "not proven minimal: 2/3 undecided" instead of
    optimal."""
    (problem,) = source_problems(MANY_RESULTS)
    options = ScheduleOptions(budget=Budget(feasibility=200_000, secondary=1_000))
    result = schedule_problem(problem, options)
    assert result.schedule.eus_used == 4 and not result.proven_optimal
    assert result.undecided == (2, 3)
    assert result.status.startswith("EUs not proven minimal: 2/3 undecided at the resource")


def test_the_result_is_never_worse_than_greedy() -> None:
    for path in EXAMPLES:
        for problem in problems(path):
            result = schedule_problem(problem)
            assert result.measures is not None
            if result.greedy_measures is None:  # greedy found nothing (max_hop_latency)
                continue
            if result.measures.eus == result.greedy_measures.eus:
                assert result.measures.no_worse_than(result.greedy_measures), problem.name
            else:
                assert result.measures.eus < result.greedy_measures.eus
            assert result.measures == measure(result.schedule)


def test_the_wall_clock_guard_stops_with_dpf6028() -> None:
    (problem,) = source_problems(MANY_RESULTS)
    with pytest.raises(DiagnosticError) as info:
        schedule_problem(problem, ScheduleOptions(guard_s=1e-6))
    (diag,) = info.value.diagnostics
    assert diag.code == "DPF6028" and "wall-clock guard" in diag.message
    # It says what was decided when it stopped: here greedy's 4 EUs, 1..3 still open.
    stopped = [n.message for n in diag.notes if n.message.startswith("when it stopped")]
    assert stopped == [
        "when it stopped: a schedule in 4 EUs was found (greedy)",
        "when it stopped: not decided: 1, 2, 3 EUs",
    ], stopped


TESTED_TWICE = """
module twice;
segment array hits: u32[16];
dpf twice(a: u32, b: u32) {
    if a < b { hits[a & 15] += 1; }
    push(select(a >= b, 1, 2), select(b > a, 3, 4));
}
"""


def test_a_condition_tested_again_on_a_path_reuses_its_branch() -> None:
    """`a < b`, its negation `a >= b` and `b > a` (the same compare, lowered with swapped
    operands) are decided by one branch on every path: 2 paths, not 8."""
    (problem,) = source_problems(TESTED_TWICE)
    branches = [n for n in problem.nodes if not n.is_leaf]
    assert len(branches) == 1 and len(problem.leaves()) == 2
    result = schedule_problem(problem)
    assert check_schedule(result.schedule) == []


def test_three_orderings_of_two_values_are_three_paths() -> None:
    """(a < b), (a == b) and (a > b) as words: after `a < b`, `a == b` is decided on the
    true side, and after `a == b`, `a > b` is decided: 3 paths, not 8 (which in-packet code
    could not even carry: 4 epilogs)."""
    (problem,) = source_problems(
        "module order;\ndpf order(a: u32, b: u32) {\n"
        "    push((a < b) as u32, (a == b) as u32, (a > b) as u32);\n}\n"
    )
    assert len(problem.leaves()) == 3
    result = schedule_problem(problem)
    assert result.schedule.eus_used <= 3 and check_schedule(result.schedule) == []


def test_too_many_branches_point_at_the_ifs_that_branch() -> None:
    """DPF6003's notes name the `if` statements that branch, not where each condition was
    computed (`let c = a < b;` lines)."""
    text = (
        "module deep;\ndpf deep(a: u32, b: u32) {\n"
        "    let c = a < b;\n    let d = a == 7;\n    let e = b == 9;\n"
        "    let f = a == b + 1;\n    let g = b == 3;\n    let h = a == 5;\n"
        "    if c {\n        if d { if e { if f { if g { if h { drop(); } } } } }\n    }\n}\n"
    )
    with pytest.raises(DiagnosticError) as info:
        source_problems(text)
    (diag,) = info.value.diagnostics
    assert diag.code == "DPF6003"
    lines = {n.span.line for n in diag.notes if n.span is not None}
    assert lines and lines <= {9, 10}
