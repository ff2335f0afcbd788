"""Differential test: the AST evaluator, the IR interpreter, and the optimised IR agree.

For every random well-typed program of :mod:`tests.dpf_programs` (2,000 in the default "ci"
hypothesis profile: twice the profile's example count) and :data:`INPUT_SETS` random input
sets each:

    ast_eval.evaluate(checked)  ==  interp.run_function(lower(checked))
                                ==  interp.run_function(run_pipeline(lower(checked)))

The evaluators share no code beyond the ISA's word semantics, so a disagreement is a bug in
the lowering, a pass, the interpreter or the oracle; hypothesis reports the failing seed
and the program's source. The optimised module is verified (``dpfc.ir.verify``) after the
pipeline. Every generated program must check: a rejected one is a generator (or checker)
bug and fails the test with the checker's diagnostics.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpfc.diagnostics import DiagnosticError, SourceFile
from dpfc.driver import check_source
from dpfc.ir import verify_module
from dpfc.ir.interp import Inputs, run_function
from dpfc.lower import lower_program
from dpfc.oracle import evaluate
from dpfc.passes.manager import run_pipeline
from dpfc.sema import CheckedProgram
from tests.dpf_programs import GeneratedProgram, generate, inputs_for, programs

INPUT_SETS = 4  # input sets per program: checking and compiling is the expensive part


def _check(source: str) -> CheckedProgram:
    try:
        return check_source(SourceFile("generated.dpf", source))
    except DiagnosticError as exc:
        rendered = "\n".join(d.render() for d in exc.diagnostics)
        pytest.fail(f"a generated program does not check:\n{source}\n{rendered}")


def compare_on_inputs(program: GeneratedProgram, seed: int, input_sets: int = INPUT_SETS) -> None:
    """Check ``program``, lower it twice, optimise one copy, and compare the three runs."""
    checked = _check(program.source)
    lowered = lower_program(checked)
    optimised = lower_program(checked)
    run_pipeline(optimised)
    problems = [d for d in verify_module(optimised) if d.severity.name == "ERROR"]
    assert not problems, "\n".join(d.render() for d in problems)
    rng = random.Random(seed)
    for _ in range(input_sets):
        raw = inputs_for(program, rng)
        inputs = Inputs(stack=raw.stack, memory=raw.memory, meta=raw.meta, rand=raw.rand)
        expected = evaluate(checked, program.dpf, inputs)
        before = run_function(lowered, program.dpf, inputs)
        after = run_function(optimised, program.dpf, inputs)
        assert before == expected, f"lowering differs from the AST evaluator on {raw}"
        assert after == expected, f"the optimised IR differs from the AST evaluator on {raw}"


@settings(max_examples=2 * settings().max_examples, deadline=None)
@given(program=programs(), seed=st.integers(min_value=0, max_value=2**32))
def test_ast_evaluator_matches_ir_before_and_after_passes(
    program: GeneratedProgram, seed: int
) -> None:
    compare_on_inputs(program, seed)


@pytest.mark.parametrize("seed", range(20))
def test_fixed_seeds(seed: int) -> None:
    """A few fixed programs, so a plain ``pytest -k differential`` is reproducible."""
    compare_on_inputs(generate(seed), seed, input_sets=8)


def test_generator_covers_the_language() -> None:
    """The generated programs use every construct the differential test is meant to cover."""
    text = "\n".join(generate(seed).source for seed in range(300))
    for construct in (
        "const ",
        "segment array",
        "direct map",
        "let ",
        ": i32",
        ": bool",
        "if ",
        "} else {",
        "} else if",
        "for ",
        "min(",
        "max(",
        "hash<",
        "select(",
        "rand()",
        "peek()",
        "meta.",
        "fetch_add(",
        "fetch_max(",
        "+= ",
        "] = ",
        "push(",
        "forward(",
        "drop()",
        "drop_code();",
        "chain other;",
        "return;",
        " as i32",
        " as u32",
        " * ",
        " >> ",
        " && ",
        " || ",
    ):
        assert construct in text, construct
