"""The lowering (dpfc.lower): golden IR of small programs, IR validity, and agreement with
the AST evaluator.

Each program of :data:`PROGRAMS` is checked, lowered and printed; the text must equal
tests/golden/lower/NAME.ir (``DPFC_BLESS=1`` to update; read the diff) and the module must
pass the IR verifier. A small differential run (the full one is tests/test_differential.py)
compares the lowered IR, run by the IR interpreter, with the AST evaluator.
"""

from __future__ import annotations

import copy
import random
from pathlib import Path

import pytest
from click.testing import CliRunner

from dpfc.cli.main import main
from dpfc.diagnostics import DiagnosticError, Severity, SourceFile
from dpfc.driver import check_source
from dpfc.ir import verify_module
from dpfc.ir.core import Op
from dpfc.ir.interp import Inputs, run_function
from dpfc.ir.printer import format_module
from dpfc.lower import lower_program
from dpfc.oracle import evaluate
from tests.conftest import ROOT, assert_golden
from tests.dpf_programs import generate, inputs_for

GOLDEN = ROOT / "tests" / "golden" / "lower"

PROGRAMS: dict[str, str] = {
    "counter": """
@pin(eu = 0, lane = 0)
segment array counters: u32[4096];

@target(tofino1) @placement(switch)
dpf counter(id: u32) {
    let before = fetch_add(counters[id], 1);
    push(id, before);
}
""",
    "phi_at_join": """
dpf f(x: u32) {
    let y = x;
    if x > 10 {
        y = 10;
    } else if x < 3 {
        y = 3;
    }
    push(y);
}
""",
    "epilog_shapes": """
// The paths after the first `if` push different numbers of words, so the code after it
// is lowered once per shape; the steering value is a phi where shapes agree.
dpf f(x: u32) {
    if x == 0 {
        push(x);
    }
    if x > 5 {
        forward(x);
    } else {
        forward(5);
    }
}
""",
    "unrolled_loop": """
const N = 3;

dpf f(x: u32) {
    let h = x;
    for i in 0..N {
        h = (h << i) ^ hash<i>(h);
    }
    push(h * 5);
}
""",
    "signed": """
dpf f(a: i32, b: i32) {
    let lo = min(a, b);
    let hi = max(a, -1);
    if a < b {
        push(lo as u32);
    } else {
        push(hi as u32);
    }
}
""",
    "bools": """
dpf f(flag: bool, x: u32) {
    let big = x >= 100;
    let both = flag && !big;
    let same = flag == big;
    push(both as u32, (x as bool) as u32, select(same || both, x, 7));
}
""",
    "memory": """
segment array a: u32[16];
direct map m: u32 -> u32 [4];
segment array s: i32[4];

dpf f(k: u32) {
    a[k & 15] += meta.packet_length;
    m[k] |= 1;
    let old = fetch_max(s[0], -3);
    push(old as u32, rand(), peek());
}
""",
    "early_return": """
segment array a: u32[4];

dpf f(x: u32) {
    if x == 0 {
        drop();
        return;
    }
    a[0] = x;
    push(x);
}
""",
    "imports": """
import stdlib.countmin;
import stdlib.hash as h;

app demo = 0x1234;

// a chain names a DPF of the chaining DPF's pipeline (DPF5223)
@egress
dpf f(key: u32) {
    let c = fetch_add(countmin.row1[hash<h.LANE1>(key) & countmin.MASK], 1);
    push(c);
    chain g;
}

@egress @placement(switch)
dpf g() {
    drop_code();
}
""",
}


def lower_text(name: str, text: str) -> str:
    module = lower_program(check_source(SourceFile(f"{name}.dpf", text)))
    errors = [d for d in verify_module(module) if d.severity is Severity.ERROR]
    assert not errors, "\n".join(d.render() for d in errors)
    return format_module(module)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_golden_ir(name: str) -> None:
    assert_golden(GOLDEN / f"{name}.ir", lower_text(name, PROGRAMS[name]))


def test_every_instruction_has_a_span() -> None:
    module = lower_program(check_source(SourceFile("m.dpf", PROGRAMS["memory"])))
    for function in module.functions:
        assert function.attrs == {"placement": "packet", "target": "tofino1", "pipeline": "ingress"}
        for instr in function.instrs():
            assert instr.span is not None, instr
    hints = {i.hint for i in module.functions[0].instrs()}
    assert {"k", "old", "meta.packet_length"} <= hints


def test_signed_min_uses_the_bias_trick() -> None:
    module = lower_program(check_source(SourceFile("s.dpf", PROGRAMS["signed"])))
    ops = [i.op for i in module.functions[0].instrs()]
    assert Op.SLT in ops and Op.ULT not in ops
    assert ops.count(Op.XOR) == 6  # two operands and the result, for min and for max


@pytest.mark.parametrize("path", sorted((ROOT / "examples" / "dpf").glob("*.dpf")), ids=str)
def test_examples_lower_to_valid_ir(path: Path) -> None:
    module = lower_program(check_source(path))
    errors = [d for d in verify_module(module) if d.severity is Severity.ERROR]
    assert not errors


def test_lowering_matches_the_ast_evaluator() -> None:
    rng = random.Random(404)
    compared = 0
    for seed in range(300):
        program = generate(seed)
        try:
            checked = check_source(SourceFile("gen.dpf", program.source))
        except DiagnosticError:
            continue  # the generator's rare ill-typed programs are not the lowering's business
        module = lower_program(checked)
        for _ in range(3):
            raw = inputs_for(program, rng)

            def inputs(raw: object = raw) -> Inputs:
                return Inputs(
                    stack=list(raw.stack),  # type: ignore[attr-defined]
                    memory=copy.deepcopy(raw.memory),  # type: ignore[attr-defined]
                    meta=dict(raw.meta),  # type: ignore[attr-defined]
                    rand=list(raw.rand),  # type: ignore[attr-defined]
                )

            expected = evaluate(checked, program.dpf, inputs())
            actual = run_function(module, program.dpf, inputs())
            assert actual == expected, f"seed {seed}\n{program.source}\n{format_module(module)}"
            compared += 1
    assert compared >= 600


def test_compile_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    runner = CliRunner()
    ir = runner.invoke(main, ["compile", "examples/dpf/counter.dpf", "--emit", "ir"])
    assert ir.exit_code == 0, ir.output
    assert ir.output == format_module(lower_program(check_source("examples/dpf/counter.dpf")))
    ast_text = runner.invoke(main, ["compile", "examples/dpf/lb1.dpf", "--emit", "ast"])
    assert ast_text.exit_code == 0 and ast_text.output.startswith("module lb1;\n")
    out = tmp_path / "kvs.ir"
    opt = runner.invoke(
        main, ["compile", "examples/dpf/kvs.dpf", "--emit", "opt-ir", "-o", str(out)]
    )
    assert opt.exit_code == 0 and opt.stdout == ""  # stderr: "wrote kvs.ir (N bytes)"
    text = out.read_text()
    assert "dpf @cache_get(1)" in text and "mul" not in text
    bad = runner.invoke(
        main, ["compile", "tests/errors/113_multiply_two_variables.dpf", "--emit", "opt-ir"]
    )
    assert bad.exit_code == 1 and "DPF5113" in bad.output
    timed = runner.invoke(
        main,
        [
            "compile",
            "examples/dpf/lb1.dpf",
            "--emit",
            "opt-ir",
            "--time-passes",
            "--print-after-all",
        ],
    )
    assert timed.exit_code == 0 and "pass timings" in timed.output
