"""Shifts written with the amounts a profile's ALU has (dpfc/passes/shifts.py).

* :func:`compose`: the shortest chain of amounts (larger first), None when none sums up.
* A property: for random words ``x``, constants ``c`` and sets of amounts, the rewritten
  ``x << c`` / ``x >> c`` equals ``x << (c & 31)`` / ``x >> (c & 31)`` mod 2^32 under the IR
  interpreter, and shifts only by amounts of the set; when no chain exists the shift is
  reported and left alone.
* The IR of ``x << 12`` for a Tofino-fit profile (golden), and the compiled program: on the
  simulator and its JIT, the same outputs on that profile as on tofino1.
* The compiler never leaves a shift the ALU lacks: the scheduler's computed constants too.

The diagnostics (DPF6009, DPF6010) are in the must-fail corpus tests/schedule_errors/.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpfc.diagnostics import DiagnosticError, SourceFile
from dpfc.driver import (
    CompileOptions,
    Phase,
    check_source,
    compile_program,
    compile_source,
    optimised_ir,
)
from dpfc.ir import Block, Exit, Function, Instr, Module, Op, format_module
from dpfc.ir.interp import Inputs, run_function
from dpfc.isa import AluOp
from dpfc.passes import split_shifts
from dpfc.passes.shifts import compose
from dpfc.schedule import ScheduleOptions, build_problem, check_schedule
from dpfc.target import BUILTIN_PROFILES, TargetProfile
from tests.conftest import ROOT, assert_golden
from tests.sim_harness import arrays_of, run_compiled

TOFINO1 = BUILTIN_PROFILES["tofino1"]
FIT_AMOUNTS = (1, 2, 4, 8, 16, 24)
FIT = replace(TOFINO1, name="tofino_fit", shift_amounts=FIT_AMOUNTS)
WORD = 0xFFFF_FFFF
GOLDEN = ROOT / "tests" / "golden" / "shifts"


# -- compose -----------------------------------------------------------------------------------
def greedy(bits: int, amounts: tuple[int, ...]) -> tuple[int, ...] | None:
    out: list[int] = []
    for amount in sorted(amounts, reverse=True):
        while bits >= amount:
            out.append(amount)
            bits -= amount
    return tuple(out) if bits == 0 else None


def test_compose_twelve_is_eight_then_four() -> None:
    assert compose(12, FIT_AMOUNTS) == (8, 4)
    assert compose(31, FIT_AMOUNTS) == (24, 4, 2, 1)
    assert compose(24, FIT_AMOUNTS) == (24,)


def test_largest_first_is_the_shortest_for_the_tofino_fit_amounts() -> None:
    for bits in range(1, 32):
        chain = compose(bits, FIT_AMOUNTS)
        assert chain is not None and sum(chain) == bits
        assert chain == greedy(bits, FIT_AMOUNTS)
        assert len(chain) <= 4


def test_compose_finds_what_largest_first_misses() -> None:
    assert greedy(6, (3, 5)) is None
    assert compose(6, (3, 5)) == (3, 3)
    assert compose(10, (2, 4, 6, 8)) == (8, 2)  # as short as (6, 4): larger first
    assert compose(3, (2, 4)) is None
    assert compose(7, ()) is None


# -- the rewrite, as a property ----------------------------------------------------------------
def shift_module(op: Op, amount: int) -> Module:
    """``dpf @f(1) { push(x op amount) }`` in IR."""
    x = Instr(Op.PARAM, imm=0)
    constant = Instr(Op.CONST, imm=amount)
    shift = Instr(op, [x, constant])
    block = Block("entry", [x, constant, shift], Exit(push=[shift]))
    return Module("m", functions=[Function("f", 1, [block])])


AMOUNT_SETS = st.lists(st.integers(1, 31), unique=True, max_size=8).map(lambda a: tuple(sorted(a)))


@given(
    x=st.integers(0, WORD),
    c=st.one_of(st.integers(0, 31), st.integers(0, WORD)),
    left=st.booleans(),
    amounts=st.one_of(st.just(FIT_AMOUNTS), AMOUNT_SETS),
)
def test_rewritten_shifts_shift_by_the_amount(
    x: int, c: int, left: bool, amounts: tuple[int, ...]
) -> None:
    profile = replace(TOFINO1, name="fit", shift_amounts=amounts)
    module = shift_module(Op.SHL if left else Op.SHR, c)
    errors = split_shifts(module, profile)
    bits = c & 31
    if bits and bits not in amounts and compose(bits, amounts) is None:
        assert [e.code for e in errors] == ["DPF6009"]
        return
    assert errors == []
    shifts = [i for i in module.functions[0].instrs() if i.op in (Op.SHL, Op.SHR)]
    assert all(s.args[1].op is Op.CONST and profile.shifts_by(s.args[1].imm or 0) for s in shifts)
    (result,) = run_function(module, "f", Inputs(stack=[x])).stack
    assert result == ((x << bits) & WORD if left else x >> bits)


def test_a_profile_with_every_amount_changes_nothing() -> None:
    module = shift_module(Op.SHL, 12)
    before = format_module(module)
    assert split_shifts(module, TOFINO1) == []
    assert format_module(module) == before


def test_a_run_time_amount_is_reported() -> None:
    x = Instr(Op.PARAM, imm=0)
    n = Instr(Op.PARAM, imm=1)
    shift = Instr(Op.SHR, [x, n])
    block = Block("e", [x, n, shift], Exit(push=[shift]))
    module = Module("m", functions=[Function("f", 2, [block])])
    (error,) = split_shifts(module, FIT)
    assert error.code == "DPF6010"
    assert "`tofino_fit` shifts only by 1, 2, 4, 8, 16, 24" in error.message


# -- compiled programs -------------------------------------------------------------------------
SOURCE = """\
dpf f(x: u32, y: u32) {
    let z = (x << 12) ^ (y >> 29);
    push(z, x * 96, y >> 24, (x << 44) + 1);
}
"""


def test_the_ir_of_a_tofino_fit_profile() -> None:
    done = compile_program(
        SourceFile("shifts.dpf", SOURCE), CompileOptions(target=FIT, stop_after=Phase.OPTIMISE)
    )
    assert_golden(GOLDEN / "tofino_fit.out.ir", format_module(done.ir()))


@pytest.mark.parametrize("jit", [False, True], ids=["sim", "jit"])
def test_the_fit_profile_computes_what_tofino1_computes(jit: bool) -> None:
    stacks = [[0x8000_0001, 0xFFFF_FFFF], [0x1234_5678, 0x9ABC_DEF0], [1, 0x2000_0000], [0, 0]]
    results: dict[str, list[tuple[int, ...] | None]] = {}
    for profile in (TOFINO1, FIT):
        module = compile_source(
            SourceFile("shifts.dpf", SOURCE),
            CompileOptions(target=profile, schedule=ScheduleOptions(cache=False)),
        )
        (unit,) = module.units
        program = unit.compiled.program
        arrays = arrays_of(unit.problem, unit.result.schedule.bindings)
        outcomes = [run_compiled(program, arrays, Inputs(stack=s), jit=jit) for s in stacks]
        assert all(o is not None and o.verdict == "pass" for o in outcomes), outcomes
        results[profile.name] = [o.stack for o in outcomes if o is not None]
        # the fit profile's code shifts (both ways) and never faulted above
        if profile is FIT:
            alu = {op for b in program.bundles for op in getattr(b.bundle, "alu", ())}
            assert AluOp.LSH in alu and AluOp.RSH in alu
    x, y = 0x1234_5678, 0x9ABC_DEF0
    expected = (((x << 12) & WORD) ^ (y >> 29), (x * 96) & WORD, y >> 24, ((x << 12) + 1) & WORD)
    second = results["tofino1"][1]
    assert second is not None and second[:4] == expected
    assert results["tofino_fit"] == results["tofino1"]


def test_a_shift_the_alu_lacks_is_reported_at_its_source() -> None:
    profile = replace(TOFINO1, name="odd", shift_amounts=(2, 4))
    with pytest.raises(DiagnosticError) as info:
        compile_source(
            SourceFile("odd.dpf", "dpf f(x: u32) {\n    push(x << 6, x << 3);\n}\n"),
            CompileOptions(target=profile),
        )
    (error,) = info.value.diagnostics
    assert error.code == "DPF6009"
    assert error.span is not None and error.span.text() == "x << 3"


def computed_shifts(profile: TargetProfile) -> list[tuple[AluOp, int]]:
    """The (op, amount) of every shift the scheduler may run to compute a constant."""
    text = "dpf f(x: u32) {\n    push(x + 3, x ^ 5, x - 96, x | 0x300);\n}\n"
    checked = check_source(SourceFile("consts.dpf", text), profile)
    module = optimised_ir(checked)
    problem = build_problem(module, module.functions[0], profile)
    out: list[tuple[AluOp, int]] = []
    for op_id in problem.same_word:
        operation = problem.ops[op_id]
        if operation.alu in (AluOp.LSH, AluOp.RSH):
            amount = problem.ops[operation.operands[1]].value
            out.append((operation.alu, amount))
    return out


def test_constants_the_scheduler_computes_shift_by_amounts_the_alu_has() -> None:
    # 96 = 3 << 5 and 0x300 = 3 << 8: tofino1 may compute them
    assert (AluOp.LSH, 5) in computed_shifts(TOFINO1)
    fit = computed_shifts(FIT)
    assert (AluOp.LSH, 5) not in fit
    assert all(FIT.shifts_by(amount) for _, amount in fit), fit


def test_the_schedule_checker_refuses_a_shift_the_alu_lacks() -> None:
    """A tofino1 schedule of ``x << 12`` checked as if for the fit profile: DPF6103."""
    text = "dpf f(x: u32) {\n    push(x << 12);\n}\n"
    module = compile_source(
        SourceFile("twelve.dpf", text),
        CompileOptions(target=TOFINO1, schedule=ScheduleOptions(cache=False)),
    )
    schedule = module.units[0].result.schedule
    assert check_schedule(schedule) == []
    moved = replace(schedule, problem=replace(schedule.problem, profile=FIT))
    violations = check_schedule(moved)
    assert [v.code for v in violations] == ["DPF6103"], violations
    assert "shifts by `12` (#1), not an amount the ALU of tofino_fit has" in violations[0].message
