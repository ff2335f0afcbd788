"""Translation validation (dpfc.verify.validate): compiled code equals its unoptimised IR.

* Every DPF of examples/dpf and examples/corpus is proved equal to its IR as lowered from
  source (before any pass), for all inputs.
* Random well-typed programs (tests.dpf_programs, compiled as the compile differential
  compiles them): every accepted DPF is proved, or unknown with a reason.
* Mutation: deliberately broken code generations, made here and not in the product, are
  each refuted: an ALU op changed, a memory op dropped or changed, a wrong immediate, a
  wrong branch kind, the branch's targets swapped, the operands of a branch swapped, a
  MOV from the wrong register, a push dropped or reordered, a wrong steering action.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import TypeVar

import pytest
from hypothesis import given, settings

from dpfc.codegen.emit import generate as generate_code
from dpfc.diagnostics import DiagnosticError, SourceFile
from dpfc.driver import CompiledModule, CompileOptions, compile_source, lower
from dpfc.isa import (
    AluOp,
    Bundle,
    Control,
    CtrlOp,
    EpilogBundle,
    Imm,
    MemOp,
    SelectorKind,
    Steering,
)
from dpfc.machine import PlacedBundle
from dpfc.schedule import Budget, ScheduleOptions
from dpfc.verify.validate import Validation, validate
from tests.dpf_programs import GeneratedProgram, programs
from tests.sim_harness import rand_order
from tests.test_compile_e2e import CORPUS, EXAMPLES, TOFINO1, chain_targets, compiled

T = TypeVar("T")
OPTIONS = ScheduleOptions(budget=Budget(feasibility=5_000_000), secondary=False, needed_eus=False)
RUN = {"proved": 0, "unknown": 0, "refuted": 0}


def _validations(module: CompiledModule) -> Iterator[tuple[str, Validation]]:
    plain = lower(module.checked)
    targets = chain_targets(module)
    for unit in module.units:
        schedule = unit.result.schedule
        code = generate_code(schedule, chain_targets=targets).program
        order = rand_order(schedule)
        yield unit.name, validate(plain, unit.name, code, schedule.bindings, order, targets)


@pytest.mark.parametrize("path", EXAMPLES + CORPUS, ids=[p.stem for p in EXAMPLES + CORPUS])
def test_the_examples_are_proved_equal_to_their_ir(path: Path) -> None:
    for name, validation in _validations(compiled(path, TOFINO1)):
        assert validation.proved, (name, validation)


@settings(max_examples=40, deadline=None)
@given(program=programs())
def _random(program: GeneratedProgram) -> None:
    try:
        module = compile_source(
            SourceFile("generated.dpf", program.source), CompileOptions(schedule=OPTIONS)
        )
    except DiagnosticError:
        return
    for name, validation in _validations(module):
        assert validation.verdict in ("proved", "unknown"), (name, validation, program.source)
        if validation.verdict == "unknown":
            assert validation.reason
        RUN[validation.verdict] += 1


def test_random_programs_are_proved_equal_to_their_ir() -> None:
    _random()
    print(f"translation validation of random programs: {RUN}")
    assert RUN["proved"] >= 30
    assert RUN["unknown"] * 100 < RUN["proved"] + RUN["unknown"]


def _put(items: tuple[T, ...], index: int, value: T) -> tuple[T, ...]:
    """``items`` with ``value`` at ``index``."""
    return (*items[:index], value, *items[index + 1 :])


# -- mutations: each a broken code generation of one bundle ---------------------------------
def _mutants(bundle: Bundle | EpilogBundle) -> Iterator[tuple[str, Bundle | EpilogBundle]]:
    if isinstance(bundle, EpilogBundle):
        if len(bundle.push) > 1 and bundle.push[0] != bundle.push[1]:
            yield (
                "push order",
                replace(bundle, push=(bundle.push[1], bundle.push[0], *bundle.push[2:])),
            )
        if bundle.push:
            yield "push dropped", replace(bundle, push=bundle.push[1:])
        other = "drop" if bundle.steering.action != "drop" else "pass"
        yield "steering action", replace(bundle, steering=Steering(other))
        return
    for lane, op in enumerate(bundle.alu):
        if op is not AluOp.NOP:
            alu_op = AluOp.SUB if op is not AluOp.SUB else AluOp.ADD
            yield "ALU op", replace(bundle, alu=_put(bundle.alu, lane, alu_op))
    for lane, mop in enumerate(bundle.mem):
        if mop is not MemOp.NOP:
            yield "memory op dropped", replace(bundle, mem=_put(bundle.mem, lane, MemOp.NOP))
            mem_op = MemOp.FAOR if mop is not MemOp.FAOR else MemOp.FAADD
            yield "memory op", replace(bundle, mem=_put(bundle.mem, lane, mem_op))
    for k, sel in enumerate(bundle.selectors):
        if sel.kind is SelectorKind.LOAD_IMM:
            wrong = replace(sel, value=(sel.value + 1) & 0xFFFF_FFFF)
            yield "immediate", replace(bundle, selectors=_put(bundle.selectors, k, wrong))
        if sel.kind is SelectorKind.MOV and sel.source is not None and sel.source != sel.dest:
            wrong = replace(sel, source=sel.dest)
            yield "MOV source", replace(bundle, selectors=_put(bundle.selectors, k, wrong))
    control = bundle.control
    if (
        control.op.conditional
        and control.not_taken is not None
        and control.not_taken != control.taken
    ):
        swapped = Control(control.op, control.not_taken, control.x, control.y, control.taken)
        yield "branch targets", replace(bundle, control=swapped)
        kinds = {CtrlOp.BEQ: CtrlOp.BSET, CtrlOp.BSET: CtrlOp.BEQ, CtrlOp.BLT: CtrlOp.BGT}
        kinds |= {CtrlOp.BGT: CtrlOp.BLT, CtrlOp.BSLT: CtrlOp.BLT, CtrlOp.BSGT: CtrlOp.BGT}
        yield "branch kind", replace(bundle, control=replace(control, op=kinds[control.op]))
        if control.x != control.y and control.op in (
            CtrlOp.BLT,
            CtrlOp.BGT,
            CtrlOp.BSLT,
            CtrlOp.BSGT,
        ):
            yield (
                "branch operands",
                replace(bundle, control=replace(control, x=control.y, y=control.x)),
            )
        if isinstance(control.y, Imm):
            y = Imm((control.y.value + 1) & 0xFFFF_FFFF)
            yield "branch immediate", replace(bundle, control=replace(control, y=y))


def test_broken_code_generations_are_refuted() -> None:
    """At least 200 mutants of the paper's applications (examples/dpf), every one that
    changes what a packet sees refuted with an input; every kind of mutation occurs."""
    kinds: dict[str, int] = {}
    refuted = unobservable = 0
    for path in EXAMPLES:
        module = compiled(path, TOFINO1)
        plain = lower(module.checked)
        targets = chain_targets(module)
        for unit in module.units:
            schedule = unit.result.schedule
            code = generate_code(schedule, chain_targets=targets).program
            order = rand_order(schedule)
            for index, placed in enumerate(code.bundles):
                for kind, mutant in _mutants(placed.bundle):
                    bundles = list(code.bundles)
                    bundles[index] = PlacedBundle(placed.stage, placed.pc, mutant, placed.label)
                    broken = replace(code, bundles=tuple(bundles))
                    result = validate(plain, unit.name, broken, schedule.bindings, order, targets)
                    if result.verdict == "proved":
                        # a mutation that changes nothing observable (an immediate no path
                        # reads, a selector whose register is overwritten) is no miscompile
                        unobservable += 1
                        continue
                    assert result.verdict == "refuted", (unit.name, kind, placed.label, result)
                    assert result.counterexample or result.pairs
                    refuted += 1
                    kinds[kind] = kinds.get(kind, 0) + 1
    print(f"mutants refuted: {refuted} {kinds}; unobservable: {unobservable}")
    assert refuted >= 200
    assert len(kinds) >= 8


def test_compile_validate_reports_each_dpf(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from dpfc.cli.main import main

    out = tmp_path / "kvs.dpfo"
    done = CliRunner().invoke(
        main,
        [
            "compile",
            str(EXAMPLES[0].parent / "kvs.dpf"),
            "--validate",
            "--no-report",
            "-o",
            str(out),
        ],
    )
    assert done.exit_code == 0, done.stderr
    for name in ("cache_get", "cache_put", "empty"):
        assert f"kvs.{name}: translation validation: proved equal to its IR" in done.stdout
