"""The optimisation passes: golden in/out per pass, semantic preservation, ``dpfc opt``.

Golden files: ``tests/golden/passes/<pass>/NAME.ir`` is the input and ``NAME.out.ir`` the
IR after running that one pass (``pipeline/`` runs the default pipeline); ``DPFC_BLESS=1``
rewrites the outputs. The property tests build random valid functions
(:mod:`tests.pass_strategies`) and check that every pass alone, and the default pipeline,
keeps the behaviour on random inputs, the SSA invariants and the verifier.
"""

from __future__ import annotations

import importlib
import io
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpfc.cli.main import main
from dpfc.diagnostics import DiagnosticError, SourceFile
from dpfc.ir import fold_op, interp, parse_ir, verify_module
from dpfc.ir.core import WORD_MASK, Block, Exit, Function, Instr, Jump, Module, Op
from dpfc.ir.printer import format_module
from dpfc.passes import (
    DEFAULT_PIPELINE,
    PASSES,
    FunctionPass,
    UnknownPassError,
    describe_passes,
    parse_pipeline,
    run_pipeline,
)
from dpfc.passes.strength import decompose, plan
from tests.conftest import ROOT, assert_golden
from tests.ir_strategies import ir_inputs, ir_modules
from tests.pass_strategies import (
    Inputs,
    check_ssa,
    evaluate_function,
    random_inputs,
    random_module,
)

GOLDEN = ROOT / "tests" / "golden" / "passes"
CASES = sorted(p for p in GOLDEN.glob("*/*.ir") if not p.name.endswith(".out.ir"))
CONFIGS = [*PASSES, "pipeline"]


def parse_text(text: str, name: str = "<test>") -> Module:
    return parse_ir(SourceFile(name, text))


def verifier_errors(module: Module, *, machine: bool = False) -> list[str]:
    """The verifier's errors (``machine``: also reject MUL)."""
    diagnostics = verify_module(module, machine=machine)
    return [d.render() for d in diagnostics if d.severity.value == "error"]


def reference_outcome(module: Module, inputs: Inputs) -> tuple[object, ...]:
    """``dpfc.ir.interp``'s outcome of ``f`` (with its rand draws), cross-checked against
    the independent evaluator of tests/pass_strategies.py."""
    official = interp.run_function(
        module, "f", interp.Inputs(inputs.stack, inputs.memory, inputs.meta, inputs.rand)
    )
    mine = evaluate_function(module, "f", inputs)
    assert (
        list(official.stack),
        official.steer,
        official.steer_value,
        official.chain,
        official.drop_code,
        official.memory,
        official.rand_draws,
    ) == (
        mine.stack,
        mine.steer,
        mine.steer_value,
        mine.chain,
        mine.drop_code,
        interp.canonical_memory(mine.memory),
        mine.rand_draws,
    )
    return (official, official.rand_draws)


def passes_for(config: str) -> list[str]:
    return list(DEFAULT_PIPELINE) if config == "pipeline" else [config]


# ---------------------------------------------------------------------------- goldens


def test_every_pass_has_a_golden_case() -> None:
    assert {p.parent.name for p in CASES} == set(CONFIGS)


@pytest.mark.parametrize("case", CASES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_pass_golden(case: Path) -> None:
    module = parse_text(case.read_text(encoding="utf-8"), str(case))
    run_pipeline(module, passes_for(case.parent.name), verify=True)
    for function in module.functions:
        assert check_ssa(function) == []
    assert_golden(case.with_suffix(".out.ir"), format_module(module))


@pytest.mark.parametrize("case", CASES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_golden_inputs_behave_like_outputs(case: Path) -> None:
    """The golden output computes what its input computes (on random inputs)."""
    before = parse_text(case.read_text(encoding="utf-8"))
    after = parse_text(case.read_text(encoding="utf-8"))
    run_pipeline(after, passes_for(case.parent.name))
    rng = random.Random(case.name)
    for _ in range(200):
        inputs = _golden_inputs(before, rng)
        for function in before.functions:
            expected = evaluate_function(before, function.name, inputs)
            assert evaluate_function(after, function.name, inputs) == expected


def _golden_inputs(module: Module, rng: random.Random) -> Inputs:
    inputs = random_inputs(rng)
    for name, array in module.arrays.items():
        inputs.memory[name] = [rng.getrandbits(32) for _ in range(array.size)]
    return inputs


# ---------------------------------------------------------------------------- semantics


@settings(max_examples=500)
@given(seed=st.integers(0, 2**32 - 1), input_seed=st.integers(0, 2**32 - 1))
def test_passes_preserve_behaviour(seed: int, input_seed: int) -> None:
    """interp(before) == interp(after) for every pass alone and for the default pipeline."""
    reference = random_module(seed)
    assert check_ssa(reference.function("f")) == []
    rng = random.Random(input_seed)
    inputs = [random_inputs(rng) for _ in range(3)]
    expected = [evaluate_function(reference, "f", i) for i in inputs]
    expected_reference = [reference_outcome(reference, i) for i in inputs]
    for config in CONFIGS:
        module = random_module(seed)  # the same function again: passes rewrite in place
        run_pipeline(module, passes_for(config))
        function = module.function("f")
        assert check_ssa(function) == [], config
        assert verifier_errors(module, machine=config == "pipeline") == [], config
        # the result is printable IR that reads back the same
        text = format_module(module)
        assert format_module(parse_text(text)) == text, config
        actual = [evaluate_function(module, "f", i) for i in inputs]
        assert actual == expected, f"{config} changed the behaviour:\n{format_module(module)}"
        assert [reference_outcome(module, i) for i in inputs] == expected_reference, config
        if config in ("strength", "pipeline"):
            assert all(i.op is not Op.MUL for i in function.instrs()), config


@settings(max_examples=500)
@given(data=st.data())
def test_passes_preserve_behaviour_on_ir_strategies(data: st.DataObject) -> None:
    """The same property on the IR helper's generator (regions, guards, RMT-aware memory,
    MULs of two unknowns), judged by the reference interpreter alone."""
    text = format_module(data.draw(ir_modules()))
    reference = parse_text(text)
    inputs = [data.draw(ir_inputs(reference)) for _ in range(2)]

    def observe(module: Module) -> list[tuple[object, int]]:
        outcomes = [interp.run_function(module, "f", i) for i in inputs]
        return [(o, o.rand_draws) for o in outcomes]

    expected = observe(reference)
    for config in CONFIGS:
        module = parse_text(text)  # a fresh copy: passes rewrite in place
        run_pipeline(module, passes_for(config))
        assert verifier_errors(module) == [], config
        assert observe(module) == expected, f"{config} changed:\n{text}\n{format_module(module)}"
        if config in ("strength", "pipeline"):
            constant_muls = [
                i
                for i in module.function("f").instrs()
                if i.op is Op.MUL and any(a.op is Op.CONST for a in i.args)
            ]
            assert constant_muls == [], config


@settings(max_examples=200)
@given(seed=st.integers(0, 2**32 - 1))
def test_pipeline_reaches_a_fixpoint_on_cleanups(seed: int) -> None:
    """After the pipeline, no cleanup pass finds anything left to do."""
    module = random_module(seed)
    run_pipeline(module)
    for name in ("constfold", "copyprop", "cse", "dce", "sink", "simplifycfg"):
        assert not PASSES[name].run(module), name


@settings(max_examples=300)
@given(c=st.integers(0, WORD_MASK), x=st.integers(0, WORD_MASK))
def test_strength_reduction_is_exact(c: int, x: int) -> None:
    terms = decompose(c)
    assert sum(sign << shift for shift, sign in terms) % 2**32 == c
    param = Instr(Op.PARAM, [], imm=0)
    const = Instr(Op.CONST, [], imm=c)
    product = Instr(Op.MUL, [param, const])
    block = Block("entry", [param, const, product], Exit([product]))
    module = Module("m", None, {}, [Function("f", 1, [block])])
    PASSES["strength"].run(module)
    assert all(i.op is not Op.MUL for i in block.instrs)
    inputs = Inputs([x], {}, {}, [0])
    assert evaluate_function(module, "f", inputs).stack[0] == (x * c) & WORD_MASK


def test_strength_uses_few_ops() -> None:
    """x*10 = (x<<3)+(x<<1), x*7 = (x<<3)-x, x*0xFFFFFFFF = -x."""
    assert decompose(10) == [(3, 1), (1, 1)]
    assert decompose(7) == [(3, 1), (0, -1)]
    assert decompose(WORD_MASK) == [(0, -1)]
    assert decompose(1 << 31) == [(31, 1)]
    assert plan(0x5555_5555)[0] == 8  # by factors 5, 17, 257, 65537 instead of 16 terms


def test_folding_uses_the_isa_semantics() -> None:
    assert fold_op(Op.SHL, [1, 33]) == 2  # shift amounts use the low five bits
    assert fold_op(Op.SLT, [0xFFFF_FFFF, 0]) == 1
    assert fold_op(Op.ULT, [0xFFFF_FFFF, 0]) == 0
    assert fold_op(Op.SGE, [0x8000_0000, 0x7FFF_FFFF]) == 0
    assert fold_op(Op.TEST, [6, 1]) == 0
    assert fold_op(Op.NEG, [1]) == WORD_MASK
    assert fold_op(Op.MUL, [0x1_0000, 0x1_0000]) == 0
    assert fold_op(Op.HASH, [1]) is None


# ---------------------------------------------------------------------------- manager


def _cyclic_module() -> Module:
    param = Instr(Op.PARAM, [], imm=0)
    blocks = [Block("entry", [param], Jump("loop")), Block("loop", [], Jump("loop"))]
    return Module("m", None, {}, [Function("f", 1, blocks)])


def test_unroll_rejects_a_cycle() -> None:
    with pytest.raises(DiagnosticError) as info:
        run_pipeline(_cyclic_module(), ["unroll"])
    assert "DPF5390" in str(info.value)
    assert "loop -> loop" in str(info.value)


def test_unroll_leaves_acyclic_functions_alone() -> None:
    module = random_module(7)
    before = format_module(module)
    assert run_pipeline(module, ["unroll"])[0].changed is False
    assert format_module(module) == before


def test_pipeline_sinks() -> None:
    printed, timed = io.StringIO(), io.StringIO()
    runs = run_pipeline(
        random_module(3), ["strength", "dce"], print_after_all=printed, time_passes=timed
    )
    assert [r.name for r in runs] == ["strength", "dce"]
    assert printed.getvalue().count("; *** IR after ") == 2
    assert "; *** IR after dce ***\nmodule gen" in printed.getvalue()
    assert timed.getvalue().startswith("; pass timings\n")
    assert "total" in timed.getvalue()


def test_parse_pipeline() -> None:
    assert parse_pipeline("constfold, dce") == ["constfold", "dce"]
    with pytest.raises(UnknownPassError, match="unknown pass `nope`"):
        parse_pipeline("constfold,nope")
    with pytest.raises(UnknownPassError):
        parse_pipeline(" , ")
    with pytest.raises(UnknownPassError):
        run_pipeline(random_module(1), ["nope"])


def test_every_pass_module_documents_its_contract() -> None:
    for name in PASSES:
        module = importlib.import_module(f"dpfc.passes.{name}")
        doc = module.__doc__ or ""
        assert "Example" in doc and "Requires" in doc and "Ensures" in doc, name


# ---------------------------------------------------------------------------- dpfc opt


def test_opt_list_passes(cli: Any) -> None:
    result = cli.invoke(main, ["opt", "--list-passes"])
    assert result.exit_code == 0
    assert result.stdout == describe_passes()
    assert_golden(GOLDEN / "list-passes.txt", result.stdout)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["opt"], "missing FILE.ir"),
        (["opt", "no-such-file.ir"], "cannot read no-such-file.ir"),
        (["opt", str(GOLDEN / "dce" / "basic.ir"), "-p", "dce,bogus"], "unknown pass `bogus`"),
        (["opt", str(GOLDEN / "dce" / "basic.ir"), "-p", ""], "the pass list is empty"),
    ],
)
def test_opt_user_errors(cli: Any, args: list[str], message: str) -> None:
    result = cli.invoke(main, args)
    assert result.exit_code == 1, result.output
    assert message in result.stderr
    assert "Traceback" not in result.stderr and "internal compiler error" not in result.stderr


def test_opt_golden_stdout(cli: Any) -> None:
    source = GOLDEN / "pipeline" / "mixed.ir"
    result = cli.invoke(main, ["opt", str(source)])
    assert result.exit_code == 0, result.stderr
    assert result.stdout == (GOLDEN / "pipeline" / "mixed.out.ir").read_text(encoding="utf-8")


def test_opt_selected_passes_and_output_file(cli: Any, tmp_path: Path) -> None:
    source = GOLDEN / "strength" / "constants.ir"
    out = tmp_path / "out.ir"
    result = cli.invoke(main, ["opt", str(source), "-p", "strength", "-o", str(out)])
    assert result.exit_code == 0, result.stderr
    assert result.stdout == ""
    assert out.read_text(encoding="utf-8") == (GOLDEN / "strength" / "constants.out.ir").read_text(
        encoding="utf-8"
    )


def test_opt_print_after_all_and_time_passes(cli: Any) -> None:
    source = GOLDEN / "pipeline" / "mixed.ir"
    args = ["opt", str(source), "-p", "strength,constfold", "--print-after-all", "--time-passes"]
    result = cli.invoke(main, [*args, "--verify-each"])
    assert result.exit_code == 0, result.stderr
    assert "; *** IR after strength ***" in result.stderr
    assert "; *** IR after constfold ***" in result.stderr
    assert "; pass timings" in result.stderr
    assert result.stdout.startswith("module t\n")


def test_opt_bad_ir_is_a_user_error(cli: Any, tmp_path: Path) -> None:
    bad = tmp_path / "bad.ir"
    bad.write_text("module t\n\ndpf @f(1) {\nentry:\n  %0 = frobnicate 3\n}\n", encoding="utf-8")
    result = cli.invoke(main, ["opt", str(bad)])
    assert result.exit_code == 1, result.output
    assert "error[DPF" in result.stderr
    assert "internal compiler error" not in result.stderr


def test_opt_cyclic_ir_is_a_user_error(cli: Any, tmp_path: Path) -> None:
    cyclic = tmp_path / "loop.ir"
    cyclic.write_text(format_module(_cyclic_module()), encoding="utf-8")
    result = cli.invoke(main, ["opt", str(cyclic), "-p", "unroll"])
    assert result.exit_code == 1, result.output
    assert "error[DPF5" in result.stderr


def test_opt_invalid_ir_is_a_user_error(cli: Any, tmp_path: Path) -> None:
    invalid = tmp_path / "invalid.ir"
    invalid.write_text(
        "module t\n\ndpf @f(1) {\nentry:\n  %0 = param 0\n  br %0, a, a\na:\n  exit\n}\n",
        encoding="utf-8",
    )
    result = cli.invoke(main, ["opt", str(invalid)])
    assert result.exit_code == 1, result.output
    assert "error[DPF53" in result.stderr
    assert "internal compiler error" not in result.stderr


def test_opt_pass_that_breaks_the_ir_is_an_internal_error(
    cli: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    def break_ir(function: Function) -> bool:
        function.blocks[0].term = Jump("nowhere")
        return True

    monkeypatch.setitem(PASSES, "dce", FunctionPass("dce", "broken", break_ir))
    source = GOLDEN / "dce" / "basic.ir"
    result = cli.invoke(main, ["opt", str(source), "-p", "dce", "--verify-each"])
    assert result.exit_code == 2, result.output
    assert "internal compiler error" in result.stderr
    assert "invalid after pass `dce`" in result.stderr


def test_opt_reports_the_verifiers_warnings(cli: Any, tmp_path: Path) -> None:
    source = tmp_path / "unreachable.ir"
    source.write_text(
        "module t\n\ndpf @f(1) {\nentry:\n  %0 = param 0\n  exit\nx:\n  exit\n}\n",
        encoding="utf-8",
    )
    result = cli.invoke(main, ["opt", str(source)])
    assert result.exit_code == 0, result.stderr
    assert "warning[DPF5323]: block `x` is unreachable from the entry" in result.stderr
    assert "x:" not in result.stdout  # simplifycfg removed it
