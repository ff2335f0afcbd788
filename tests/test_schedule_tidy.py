"""tidy: dead and redundant moves leave a schedule, and the checker still accepts it."""

from __future__ import annotations

from dataclasses import replace

from dpfc.driver import check_source, optimised_ir
from dpfc.isa.bundle import Register
from dpfc.isa.opcodes import SelectorKind
from dpfc.schedule import (
    Schedule,
    SelectorAssign,
    build_problem,
    check_schedule,
    greedy_schedule,
    tidy,
)
from dpfc.target import BUILTIN_PROFILES
from tests.conftest import ROOT

TOFINO1 = BUILTIN_PROFILES["tofino1"]


def _greedy(name: str) -> Schedule:
    module = optimised_ir(check_source(ROOT / f"examples/dpf/{name}.dpf", TOFINO1))
    schedule = greedy_schedule(build_problem(module, module.functions[0], TOFINO1))
    assert schedule is not None and check_schedule(schedule) == []
    return schedule


def test_a_dead_move_is_removed_and_the_rest_kept() -> None:
    schedule = _greedy("kvs")
    first = schedule.steps[0]
    dead = SelectorAssign(Register.b(3), SelectorKind.MOV, source=Register.a(3))
    padded = replace(
        schedule,
        steps=(
            replace(first, selectors=tuple(sorted((*first.selectors, dead), key=lambda s: s.dest))),
            *schedule.steps[1:],
        ),
    )
    assert check_schedule(padded) == []  # dead, but harmless
    tidied = tidy(padded)
    assert check_schedule(tidied) == []
    assert dead not in tidied.steps[0].selectors
    assert tidied.selector_count() <= schedule.selector_count()


def test_tidy_keeps_every_needed_instruction_of_the_examples() -> None:
    for name in ("kvs", "count_min", "lb2", "lb3", "paxos"):
        schedule = _greedy(name)
        tidied = tidy(schedule)
        assert check_schedule(tidied) == []
        for before, after in zip(schedule.steps, tidied.steps, strict=True):
            assert set(after.selectors) <= set(before.selectors)
            assert set(after.alu) <= set(before.alu)
            assert after.mem == before.mem and after.branch == before.branch
