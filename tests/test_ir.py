"""The SSA IR tooling: text reader (round trips, must-fail list), verifier, interpreter."""

from __future__ import annotations

import contextlib
import zlib
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpfc.catalog import codes as code_names
from dpfc.diagnostics import Diagnostic, DiagnosticError, Severity, SourceFile
from dpfc.ir import (
    ARITY,
    WORD_MASK,
    ArrayDecl,
    Block,
    Br,
    Exit,
    Function,
    Inputs,
    Instr,
    InterpError,
    Jump,
    Module,
    Op,
    Outcome,
    Ty,
    canonical_memory,
    format_module,
    parse_ir,
    run_function,
    verify_module,
    verify_or_raise,
)
from dpfc.ir.reader.instructions import OPS_BY_NAME
from dpfc.isa.semantics import hash_word
from dpfc.target.profile import BUILTIN_PROFILES
from tests.conftest import ROOT, assert_golden
from tests.ir_strategies import BOUNDARY, ir_inputs, ir_modules

GOLDEN = ROOT / "tests" / "golden" / "ir"
TEXT_CASES = sorted(GOLDEN.glob("*.ir"))
B = (0, 1, 0x7FFF_FFFF, 0x8000_0000, 0xFFFF_FFFF)  # the boundary words


def parse(text: str, name: str = "<test>") -> Module:
    return parse_ir(SourceFile(name, text))


def errors(module: Module, **options: Any) -> list[Diagnostic]:
    return [d for d in verify_module(module, **options) if d.severity is Severity.ERROR]


def codes(module: Module, **options: Any) -> set[str]:
    return {d.code for d in verify_module(module, **options)}


# ---------------------------------------------------------------------------- hand-built IR


def kvs_module() -> Module:
    """The printer's docstring example, built directly."""
    key = Instr(Op.PARAM, [], imm=0, hint="key")
    loaded = Instr(Op.LOAD, [key], symbol="index")
    mask = Instr(Op.CONST, [], imm=0x8000_0000)
    hit = Instr(Op.TEST, [loaded, mask], Ty.BOOL)
    phi = Instr(Op.PHI, [key], Ty.WORD, incoming=["entry"])
    blocks = [
        Block("entry", [key, loaded, mask, hit], Br(hit, "hit", "miss")),
        Block("hit", [phi], Exit([key, phi], "return_to_sender", drop_code=True)),
        Block("miss", [], Exit([key], chain="count_min")),
    ]
    arrays = {
        "index": ArrayDecl("index", "direct", 45000),
        "values0": ArrayDecl("values0", "segment", 65536, pin=(2, 0)),
    }
    function = Function("cache_get", 1, blocks, {"placement": "packet"})
    return Module("kvs", 0x4B5601, arrays, [function])


def all_ops_module() -> Module:
    """Every op once (and bool forms of const/and/or/xor/select/phi), in a diamond."""
    p0 = Instr(Op.PARAM, [], imm=0, hint="x")
    p1 = Instr(Op.PARAM, [], imm=1)
    c = Instr(Op.CONST, [], imm=300)
    t = Instr(Op.CONST, [], Ty.BOOL, imm=1)
    entry = [p0, p1, c, t, Instr(Op.PEEK), Instr(Op.RAND), Instr(Op.META, symbol="timestamp")]
    words = [Instr(op, [p0, p1]) for op in (Op.ADD, Op.SUB, Op.AND, Op.OR, Op.XOR)]
    words += [Instr(op, [p0, c]) for op in (Op.SHL, Op.SHR, Op.MIN, Op.MAX, Op.MUL)]
    words += [Instr(Op.NEG, [p0]), Instr(Op.HASH, [p1], imm=3)]
    compares = [
        Instr(op, [p0, p1], Ty.BOOL)
        for op in (Op.EQ, Op.NE, Op.ULT, Op.ULE, Op.UGT, Op.UGE, Op.SLT, Op.SLE, Op.SGT, Op.SGE)
    ]
    test = Instr(Op.TEST, [p0, c], Ty.BOOL, hint="flag")
    bools = [Instr(op, [compares[0], test], Ty.BOOL) for op in (Op.AND, Op.OR, Op.XOR)]
    select = Instr(Op.SELECT, [bools[0], p0, p1])
    select_bool = Instr(Op.SELECT, [t, bools[1], bools[2]], Ty.BOOL)
    zext = Instr(Op.ZEXT, [select_bool])
    entry += [*words, *compares, test, *bools, select, select_bool, zext]
    load = Instr(Op.LOAD, [p0], symbol="a")
    store = Instr(Op.STORE, [p0, zext], None, symbol="b", hint="b[x]")
    left = [load, store]
    right = [Instr(op, [p1, c], symbol=f"f{i}") for i, op in enumerate(sorted_fetches())]
    phi = Instr(Op.PHI, [load, right[0]], Ty.WORD, incoming=["left", "right"])
    phi_bool = Instr(Op.PHI, [t, test], Ty.BOOL, incoming=["left", "right"])
    blocks = [
        Block("entry", entry, Br(select_bool, "left", "right")),
        Block("left", left, Jump("join")),
        Block("right", right, Jump("join")),
        Block("join", [phi, phi_bool, Instr(Op.ZEXT, [phi_bool])], Exit([phi, select], "drop")),
    ]
    blocks[-1].term = Exit([phi, select], "forward", words[0], "lib.next", True)
    arrays = {name: ArrayDecl(name, "segment", 8) for name in ("a", "b", "f0", "f1", "f2")}
    arrays |= {n: ArrayDecl(n, "direct", 16, signed=True) for n in ("f3", "f4")}
    function = Function("ops", 2, blocks, {"target": "tofino1", "placement": "switch"})
    return Module("ops", None, arrays, [function])


def sorted_fetches() -> list[Op]:
    return [Op.FETCH_ADD, Op.FETCH_AND, Op.FETCH_OR, Op.FETCH_MAX, Op.FETCH_MIN]


BUILT = {"kvs": kvs_module, "all_ops": all_ops_module}


@pytest.mark.parametrize("name", sorted(BUILT))
def test_printer_output_of_built_modules(name: str) -> None:
    module = BUILT[name]()
    assert errors(module) == []
    text = format_module(module)
    assert_golden(GOLDEN / f"{name}.ir", text)
    assert format_module(parse(text)) == text


@pytest.mark.parametrize("case", TEXT_CASES, ids=lambda p: p.stem)
def test_golden_text_round_trips(case: Path) -> None:
    text = case.read_text(encoding="utf-8")
    module = parse(text, str(case))
    assert format_module(module) == text
    assert errors(module) == []


def test_parse_records_spans_hints_and_types() -> None:
    text = format_module(kvs_module())
    module = parse(text, "kvs.ir")
    function = module.function("cache_get")
    key = function.blocks[0].instrs[0]
    assert key.hint == "key" and key.span is not None
    assert key.span.location() == "kvs.ir:7:3" and key.span.text() == "%0 = param 0"
    assert function.span is not None and function.span.text().startswith("dpf @cache_get(1)")
    assert module.arrays["values0"].pin == (2, 0)
    test = function.blocks[0].instrs[3]
    assert test.op is Op.TEST and test.ty is Ty.BOOL
    assert isinstance(function.blocks[0].term, Br) and function.blocks[0].term.cond is test
    assert function.blocks[1].instrs[0].args == [key]


def test_parse_accepts_comments_blank_lines_and_crlf() -> None:
    text = (
        "; leading comment\r\nmodule m ; the module\r\n\r\n"
        "dpf @f(1) {   ; header\r\nentry:\r\n  ; a remark\r\n"
        "  %0 = param 0\r\n  %1 = const i1 1  ;  flag \r\n  exit push(%0)\r\n}\r\n"
    )
    module = parse(text)
    instrs = module.function("f").blocks[0].instrs
    assert [i.op for i in instrs] == [Op.PARAM, Op.CONST]
    assert instrs[1].ty is Ty.BOOL and instrs[1].hint == "flag"
    assert errors(module) == []


def test_phi_may_refer_forward() -> None:
    text = """module m

dpf @f(0) {
entry:
  %0 = const i1 0
  br %0, a, b
b:
  %1 = phi w32 [%2, a], [%3, b0]
  exit push(%1)
a:
  %2 = const 5
  jmp b
b0:
  %3 = const 6
  jmp b
}
"""
    module = parse(text)
    phi = module.function("f").block("b").instrs[0]
    assert [a.imm for a in phi.args] == [5, 6]
    # b0 is unreachable (entry branches to a and b): phi names a non-predecessor
    assert codes(module) == {"DPF5323", "DPF5328"}


# ---------------------------------------------------------------------------- parser errors

HEAD = "module t\narray @a segment 4\n\ndpf @f(2) {\nentry:\n  %0 = param 0\n"


def body(*lines: str, close: str = "  exit\n}\n") -> str:
    return HEAD + "".join(f"  {line}\n" for line in lines) + close


MUST_FAIL: list[tuple[str, str, str, str]] = [
    # id, text, code, the text under the primary span
    ("empty", "", "DPF5300", ""),
    ("no-module-line", "dpf @f(0) {\n}\n", "DPF5300", "dpf"),
    ("module-name", "module 3\n", "DPF5300", "3"),
    ("bad-char", body("%1 = add %0, $0"), "DPF5300", "$"),
    ("malformed-int", body("%1 = const 0x1g"), "DPF5300", "0x1g"),
    ("const-without-value", body("%1 = const"), "DPF5300", ""),
    ("bad-mapping", "module t\narray @b hashed 4\n", "DPF5300", "hashed"),
    ("top-level-junk", "module t\nentry:\n", "DPF5300", "entry"),
    ("dpf-without-brace", "module t\ndpf @f(0)\n", "DPF5300", ""),
    ("exit-clause-order", body("exit drop_code push(%0)", close="}\n"), "DPF5300", "push"),
    ("text-after-brace", body(close="  exit\n} x\n"), "DPF5300", "x"),
    ("unknown-op", body("%1 = frob %0"), "DPF5301", "frob"),
    ("ret-is-not-an-op", body("ret %0"), "DPF5301", "ret"),
    ("add-one-operand", body("%1 = add %0"), "DPF5302", "%0"),
    ("neg-no-operand", body("%1 = neg"), "DPF5302", ""),
    ("load-no-index", body("%1 = load @a"), "DPF5302", ""),
    ("select-two", body("%1 = const i1 1", "%2 = select w32 %1, %0"), "DPF5302", "%1, %0"),
    ("param-with-operand", body("%1 = param 1, %0"), "DPF5302", "%0"),
    ("phi-no-pairs", body("%1 = phi w32"), "DPF5302", ""),
    ("undefined-value", body("exit push(%7)", close="}\n"), "DPF5303", "%7"),
    ("phi-undefined", body("%1 = phi w32 [%9, entry]"), "DPF5303", "%9"),
    ("forward-ref", body("%1 = add %2, %0", "%2 = const 1"), "DPF5304", "%2"),
    ("redefined", body("%1 = const 1", "%1 = const 2"), "DPF5305", "%1"),
    ("dup-label", body("jmp entry", "entry:", close="  exit\n}\n"), "DPF5306", "entry"),
    ("dup-array", "module t\narray @a segment 4\narray @a direct 4\n", "DPF5307", "@a"),
    ("dup-dpf", "module t\ndpf @f(0) {\n}\ndpf @f(1) {\n}\n", "DPF5307", "@f"),
    ("dup-attr", "module t\ndpf @f(0) k=1 k=2 {\n}\n", "DPF5307", "k"),
    ("unknown-type", body("%1 = phi w64 [%0, entry]"), "DPF5308", "w64"),
    ("const-too-big", body("%1 = const 0x100000000"), "DPF5309", "0x100000000"),
    ("bool-const-2", body("%1 = const i1 2"), "DPF5309", "2"),
    ("huge-decimal", body("%1 = const " + "9" * 5000), "DPF5309", "9" * 5000),
    ("huge-value-number", body("%1234567890 = const 1"), "DPF5309", "%1234567890"),
    ("store-defines", body("%1 = store @a, %0, %0"), "DPF5310", "%1"),
    ("add-without-result", body("add %0, %0"), "DPF5310", "add"),
    ("no-terminator", body("b:", close="  exit\n}\n"), "DPF5311", "b"),
    ("after-terminator", body("exit", "%1 = const 1"), "DPF5311", "%1"),
    ("before-label", "module t\ndpf @f(0) {\n  exit\n}\n", "DPF5311", "exit"),
    ("unclosed", "module t\ndpf @f(0) {\nentry:\n  exit\n", "DPF5311", ""),
]


@pytest.mark.parametrize(
    ("text", "code", "under"), [c[1:] for c in MUST_FAIL], ids=[c[0] for c in MUST_FAIL]
)
def test_parser_rejects(text: str, code: str, under: str) -> None:
    with pytest.raises(DiagnosticError) as info:
        parse(text, "bad.ir")
    [diagnostic] = info.value.diagnostics
    assert diagnostic.code == code, diagnostic.render()
    assert diagnostic.span is not None
    assert diagnostic.span.text() == under or (not under and diagnostic.span.text() in "\n")


def test_parser_error_messages() -> None:
    rendered = []
    for name, text, _, _ in MUST_FAIL:
        if name == "huge-decimal":
            continue
        try:
            parse(text, f"{name}.ir")
        except DiagnosticError as error:
            rendered.append(error.diagnostics[0].render())
    assert_golden(GOLDEN / "parser_errors.txt", "\n\n".join(rendered) + "\n")


def test_every_op_has_an_arity() -> None:
    assert set(ARITY) == set(Op) - {Op.PHI}
    assert set(OPS_BY_NAME.values()) == set(Op)


def test_every_code_is_documented_and_tested() -> None:
    table = (ROOT / "docs" / "language.md").read_text(encoding="utf-8")
    reference = (ROOT / "docs" / "ir.md").read_text(encoding="utf-8")
    tested = {c[2] for c in MUST_FAIL} | {c[2] for c in VERIFY_FAIL}
    tested |= {"DPF5306", "DPF5307", "DPF5323", "DPF5324", "DPF5325", "DPF5336", "DPF5337"}
    ir_codes = {code for name, code in vars(code_names).items() if name.startswith("IR_")}
    assert ir_codes == {code for code in vars(code_names).values() if str(code).startswith("DPF53")}
    for code in ir_codes:
        assert f"| {code} |" in table, code
        assert code in tested, code
        if code >= "DPF5320":  # the verifier's codes
            assert code in reference, code


# ---------------------------------------------------------------------------- verifier

VHEAD = "module t\narray @a segment 4\narray @b direct 4\n\ndpf @f(1) {\nentry:\n  %0 = param 0\n"


def vbody(text: str) -> str:
    return VHEAD + text + "}\n"


DIAMOND = """  %1 = const i1 1
  br %1, l, r
l:
{l}  jmp j
r:
{r}  jmp j
j:
{j}  exit
"""


def diamond(left: str = "", right: str = "", join: str = "") -> str:
    return vbody(DIAMOND.format(l=left, r=right, j=join))


VERIFY_FAIL: list[tuple[str, str, str]] = [
    ("empty-function", "module t\ndpf @f(0) {\n}\n", "DPF5320"),
    ("unknown-label", vbody("  jmp nowhere\n"), "DPF5321"),
    ("entry-target", vbody("  jmp x\nx:\n  jmp entry\n"), "DPF5322"),
    ("cycle", vbody("  jmp x\nx:\n  jmp y\ny:\n  jmp x\n"), "DPF5390"),
    ("not-dominated", diamond(left="  %2 = const 1\n", join="  %3 = add %2, %0\n"), "DPF5326"),
    (
        "phi-arg-not-dominating",
        diamond(left="  %2 = const 1\n", join="  %3 = phi w32 [%2, l], [%2, r]\n"),
        "DPF5326",
    ),
    ("phi-position", diamond(join="  %2 = const 1\n  %3 = phi w32 [%0, l], [%0, r]\n"), "DPF5327"),
    ("phi-missing-pred", diamond(join="  %2 = phi w32 [%0, l]\n"), "DPF5328"),
    ("phi-extra-pred", diamond(join="  %2 = phi w32 [%0, l], [%0, r], [%0, entry]\n"), "DPF5328"),
    ("phi-in-entry", vbody("  %1 = phi w32 [%0, entry]\n  exit\n"), "DPF5328"),
    ("phi-arg-type", diamond(join="  %2 = phi i1 [%0, l], [%1, r]\n"), "DPF5329"),
    ("add-bool", vbody("  %1 = const i1 1\n  %2 = add %0, %1\n  exit\n"), "DPF5329"),
    ("compare-bool", vbody("  %1 = const i1 1\n  %2 = eq %1, %1\n  exit\n"), "DPF5329"),
    ("and-mixed", vbody("  %1 = const i1 1\n  %2 = and %1, %0\n  exit\n"), "DPF5329"),
    ("select-word-cond", vbody("  %1 = select w32 %0, %0, %0\n  exit\n"), "DPF5329"),
    (
        "select-arm-type",
        vbody("  %1 = const i1 1\n  %2 = select i1 %1, %0, %1\n  exit\n"),
        "DPF5329",
    ),
    ("zext-word", vbody("  %1 = zext %0\n  exit\n"), "DPF5329"),
    ("hash-bool", vbody("  %1 = const i1 0\n  %2 = hash 0, %1\n  exit\n"), "DPF5329"),
    ("store-bool", vbody("  %1 = const i1 0\n  store @a, %0, %1\n  exit\n"), "DPF5329"),
    ("br-word", vbody("  br %0, x, x\nx:\n  exit\n"), "DPF5329"),
    ("push-bool", vbody("  %1 = const i1 0\n  exit push(%0, %1)\n"), "DPF5329"),
    ("steer-value-bool", vbody("  %1 = const i1 0\n  exit steer forward %1\n"), "DPF5329"),
    ("param-index", vbody("  %1 = param 1\n  exit\n"), "DPF5330"),
    ("hash-index", vbody("  %1 = hash 4, %0\n  exit\n"), "DPF5330"),
    ("unknown-array", vbody("  %1 = load @zz, %0\n  exit\n"), "DPF5331"),
    ("unknown-meta", vbody("  %1 = meta nope\n  exit\n"), "DPF5332"),
    ("unknown-steer", vbody("  exit steer teleport\n"), "DPF5333"),
    ("steer-needs-value", vbody("  exit steer forward\n"), "DPF5334"),
    ("steer-takes-no-value", vbody("  exit steer drop %0\n"), "DPF5334"),
    ("rmt-straight", vbody("  %1 = load @a, %0\n  store @a, %0, %1\n  exit\n"), "DPF5335"),
    (
        "rmt-across-blocks",
        diamond(right="  %2 = load @a, %0\n", join="  store @a, %0, %0\n"),
        "DPF5335",
    ),
    (
        "rmt-head-and-arm",
        vbody(
            "  %1 = fetch_add @b, %0, %0\n  %2 = const i1 1\n  br %2, l, r\n"
            "l:\n  %3 = fetch_or @b, %0, %0\n  jmp j\nr:\n  jmp j\nj:\n  exit\n"
        ),
        "DPF5335",
    ),
]


@pytest.mark.parametrize(
    ("text", "code"), [c[1:] for c in VERIFY_FAIL], ids=[c[0] for c in VERIFY_FAIL]
)
def test_verifier_rejects(text: str, code: str) -> None:
    module = parse(text, "v.ir")
    found = errors(module)
    assert code in {d.code for d in found}, [d.render() for d in found]
    with pytest.raises(DiagnosticError):
        verify_or_raise(module)


def test_verifier_messages() -> None:
    rendered = []
    for name, text, code in VERIFY_FAIL:
        found = [d for d in verify_module(parse(text, f"{name}.ir")) if d.code == code]
        rendered.append(found[0].render())
    assert_golden(GOLDEN / "verifier_errors.txt", "\n\n".join(rendered) + "\n")


def test_rmt_rule_is_path_sensitive() -> None:
    # each arm of the diamond accesses @a once: no path sees two accesses
    text = diamond(left="  %2 = load @a, %0\n", right="  store @a, %0, %0\n")
    assert errors(parse(text)) == []
    # ... but an access after the join meets both
    text = diamond(
        left="  %2 = load @a, %0\n", right="  store @a, %0, %0\n", join="  %3 = load @a, %0\n"
    )
    found = [d for d in errors(parse(text, "r.ir")) if d.code == "DPF5335"]
    assert len(found) == 1  # reported once, at the later access, naming an earlier one
    assert found[0].span is not None and found[0].span.text() == "%3 = load @a, %0"
    assert found[0].notes and found[0].notes[0].span is not None
    assert found[0].notes[0].span.text() in ("%2 = load @a, %0", "store @a, %0, %0")


def test_unreachable_block_is_a_warning() -> None:
    module = parse(vbody("  exit\ndead:\n  exit\n"))
    [diagnostic] = verify_module(module)
    assert diagnostic.code == "DPF5323" and diagnostic.severity is Severity.WARNING
    verify_or_raise(module)  # warnings do not raise


def test_machine_ir_has_no_mul() -> None:
    module = parse(vbody("  %1 = mul %0, %0\n  exit\n"))
    assert errors(module) == []
    assert codes(module, machine=True) == {"DPF5336"}


def test_profile_steering_and_metadata() -> None:
    module = parse(vbody("  %1 = meta queue_depth\n  exit steer set_port %1\n"))
    for profile in BUILTIN_PROFILES.values():
        assert errors(module, profile=profile) == [], profile.name


def _function(*blocks: Block, params: int = 1) -> Module:
    arrays = {"a": ArrayDecl("a", "segment", 4)}
    return Module("m", None, arrays, [Function("f", params, list(blocks))])


def test_verifier_in_memory_faults() -> None:
    p = Instr(Op.PARAM, [], imm=0)
    # duplicate labels, duplicate functions, bad arrays
    module = _function(Block("entry", [p], Jump("x")), Block("x"), Block("x"))
    assert "DPF5306" in codes(module)
    module = _function(Block("entry"))
    module.functions.append(Function("f", 0, [Block("entry")]))
    assert codes(module) == {"DPF5307"}
    module = _function(Block("entry"))
    module.arrays["z"] = ArrayDecl("z", "hashed", 0)
    assert codes(module) == {"DPF5337"}
    # one instruction listed twice
    assert codes(_function(Block("entry", [p, p]))) == {"DPF5324"}
    # an operand from another function
    stranger = Instr(Op.CONST, [], imm=1)
    assert codes(_function(Block("entry", [Instr(Op.NEG, [stranger])]))) == {"DPF5325"}
    # a use before its definition in the same block
    later = Instr(Op.CONST, [], imm=1)
    assert codes(_function(Block("entry", [Instr(Op.NEG, [later]), later]))) == {"DPF5326"}
    # operand counts, a phi's values vs its labels, a missing immediate, a stray array name
    assert codes(_function(Block("entry", [p, Instr(Op.ADD, [p])]))) == {"DPF5302"}
    phi = Instr(Op.PHI, [p, p], incoming=["entry"])
    assert "DPF5302" in codes(_function(Block("entry", [p], Jump("x")), Block("x", [phi])))
    assert codes(_function(Block("entry", [Instr(Op.CONST)]))) == {"DPF5330"}
    assert codes(_function(Block("entry", [p, Instr(Op.NEG, [p], symbol="a")]))) == {"DPF5330"}
    # a result type that does not match the op
    assert codes(_function(Block("entry", [p, Instr(Op.ADD, [p, p], Ty.BOOL)]))) == {"DPF5329"}


def test_verifier_never_raises_on_mutated_text() -> None:
    # structural faults stop the SSA checks instead of crashing them
    module = _function(Block("entry", [], Br(Instr(Op.CONST, [], Ty.BOOL, imm=1), "x", "y")))
    assert codes(module) == {"DPF5321"}


# ---------------------------------------------------------------------------- interpreter


def run_op(op: Op, *operands: int, ty: Ty = Ty.WORD, imm: int | None = None) -> int:
    """Run one op on parameter words; the result is pushed (bools through ZEXT)."""
    params = [Instr(Op.PARAM, [], imm=i) for i in range(len(operands))]
    instr = Instr(op, list(params), ty, imm=imm)
    out = Instr(Op.ZEXT, [instr]) if ty is Ty.BOOL else instr
    block = Block("entry", [*params, instr, *([out] if out is not instr else [])], Exit([out]))
    module = Module("m", None, {}, [Function("f", len(operands), [block])])
    assert errors(module) == []
    outcome = run_function(module, "f", Inputs(stack=operands))
    return outcome.stack[0]


ALU_CASES: dict[Op, list[tuple[int, int, int]]] = {
    Op.ADD: [
        (0, 0, 0),
        (1, 0xFFFF_FFFF, 0),
        (0x7FFF_FFFF, 1, 0x8000_0000),
        (0x8000_0000, 0x8000_0000, 0),
        (0xFFFF_FFFF, 0xFFFF_FFFF, 0xFFFF_FFFE),
        (0x7FFF_FFFF, 0x8000_0000, 0xFFFF_FFFF),
    ],
    Op.SUB: [
        (0, 1, 0xFFFF_FFFF),
        (0x8000_0000, 1, 0x7FFF_FFFF),
        (1, 0xFFFF_FFFF, 2),
        (0x7FFF_FFFF, 0xFFFF_FFFF, 0x8000_0000),
        (0xFFFF_FFFF, 0xFFFF_FFFF, 0),
    ],
    Op.AND: [
        (0xFFFF_FFFF, 0x8000_0000, 0x8000_0000),
        (0x7FFF_FFFF, 0x8000_0000, 0),
        (1, 0xFFFF_FFFF, 1),
        (0, 0xFFFF_FFFF, 0),
    ],
    Op.OR: [(0x7FFF_FFFF, 0x8000_0000, 0xFFFF_FFFF), (0, 1, 1), (0, 0, 0)],
    Op.XOR: [
        (0xFFFF_FFFF, 0x8000_0000, 0x7FFF_FFFF),
        (1, 1, 0),
        (0x7FFF_FFFF, 0xFFFF_FFFF, 0x8000_0000),
    ],
    Op.SHL: [
        (1, 31, 0x8000_0000),
        (1, 32, 1),  # the amount is b & 31
        (0xFFFF_FFFF, 1, 0xFFFF_FFFE),
        (0x8000_0000, 1, 0),
        (1, 0xFFFF_FFFF, 0x8000_0000),
        (0x7FFF_FFFF, 0x8000_0000, 0x7FFF_FFFF),
    ],
    Op.SHR: [
        (0x8000_0000, 31, 1),
        (0xFFFF_FFFF, 1, 0x7FFF_FFFF),  # logical: no sign fill
        (0x8000_0000, 32, 0x8000_0000),
        (0xFFFF_FFFF, 0xFFFF_FFFF, 1),
        (1, 1, 0),
    ],
    Op.MIN: [(0x7FFF_FFFF, 0x8000_0000, 0x7FFF_FFFF), (0, 0xFFFF_FFFF, 0), (1, 0xFFFF_FFFF, 1)],
    Op.MAX: [(0x7FFF_FFFF, 0x8000_0000, 0x8000_0000), (0, 0xFFFF_FFFF, 0xFFFF_FFFF), (1, 0, 1)],
    Op.MUL: [
        (0xFFFF_FFFF, 0xFFFF_FFFF, 1),
        (0x8000_0000, 2, 0),
        (0x7FFF_FFFF, 2, 0xFFFF_FFFE),
        (0x1_0000, 0x1_0000, 0),
        (1, 0x8000_0000, 0x8000_0000),
        (0, 0xFFFF_FFFF, 0),
    ],
}


@pytest.mark.parametrize("op", list(ALU_CASES), ids=lambda op: op.value)
def test_interp_alu(op: Op) -> None:
    for a, b, expected in ALU_CASES[op]:
        assert run_op(op, a, b) == expected, (op, hex(a), hex(b))


def test_interp_neg() -> None:
    expected = {0: 0, 1: 0xFFFF_FFFF, 0x7FFF_FFFF: 0x8000_0001, 0x8000_0000: 0x8000_0000}
    expected[0xFFFF_FFFF] = 1
    for a, result in expected.items():
        assert run_op(Op.NEG, a) == result


COMPARE_ORDER = (
    Op.EQ,
    Op.NE,
    Op.ULT,
    Op.ULE,
    Op.UGT,
    Op.UGE,
    Op.SLT,
    Op.SLE,
    Op.SGT,
    Op.SGE,
    Op.TEST,
)
# (a, b) -> eq ne ult ule ugt uge slt sle sgt sge test
COMPARE_CASES: dict[tuple[int, int], str] = {
    (0, 0): "10 0101 0101 0",
    (1, 0): "01 0011 0011 0",
    (0x7FFF_FFFF, 0x8000_0000): "01 1100 0011 0",
    (0xFFFF_FFFF, 0): "01 0011 1100 0",
    (0xFFFF_FFFF, 0xFFFF_FFFF): "10 0101 0101 1",
    (0x8000_0000, 0xFFFF_FFFF): "01 1100 1100 1",
    (1, 0x7FFF_FFFF): "01 1100 1100 1",
    (0x8000_0000, 0x8000_0000): "10 0101 0101 1",
    (0x8000_0000, 1): "01 0011 1100 0",
}


@pytest.mark.parametrize("pair", list(COMPARE_CASES), ids=lambda p: f"{p[0]:#x}-{p[1]:#x}")
def test_interp_compares(pair: tuple[int, int]) -> None:
    bits = COMPARE_CASES[pair].replace(" ", "")
    got = "".join(str(run_op(op, *pair, ty=Ty.BOOL)) for op in COMPARE_ORDER)
    assert got == bits


def _signed(x: int) -> int:
    return x - (1 << 32) if x >> 31 else x


def test_interp_matches_python_on_all_boundary_pairs() -> None:
    """An independent formula for every binary op on all 25 pairs of boundary words."""
    formulas = {
        Op.ADD: lambda a, b: (a + b) % 2**32,
        Op.SUB: lambda a, b: (a - b) % 2**32,
        Op.AND: lambda a, b: a & b,
        Op.OR: lambda a, b: a | b,
        Op.XOR: lambda a, b: a ^ b,
        Op.SHL: lambda a, b: (a * 2 ** (b % 32)) % 2**32,
        Op.SHR: lambda a, b: a // 2 ** (b % 32),
        Op.MIN: min,
        Op.MAX: max,
        Op.MUL: lambda a, b: (a * b) % 2**32,
        Op.EQ: lambda a, b: int(a == b),
        Op.NE: lambda a, b: int(a != b),
        Op.ULT: lambda a, b: int(a < b),
        Op.ULE: lambda a, b: int(a <= b),
        Op.UGT: lambda a, b: int(a > b),
        Op.UGE: lambda a, b: int(a >= b),
        Op.SLT: lambda a, b: int(_signed(a) < _signed(b)),
        Op.SLE: lambda a, b: int(_signed(a) <= _signed(b)),
        Op.SGT: lambda a, b: int(_signed(a) > _signed(b)),
        Op.SGE: lambda a, b: int(_signed(a) >= _signed(b)),
        Op.TEST: lambda a, b: int(a & b != 0),
    }
    for op, formula in formulas.items():
        ty = Ty.BOOL if op in COMPARE_ORDER else Ty.WORD
        for a in B:
            for b in B:
                assert run_op(op, a, b, ty=ty) == formula(a, b), (op, hex(a), hex(b))


def _single(instrs: list[Instr], term: Exit, params: int = 0, **arrays: int) -> Module:
    decls = {name: ArrayDecl(name, "segment", size) for name, size in arrays.items()}
    module = Module("m", None, decls, [Function("f", params, [Block("entry", instrs, term)])])
    assert errors(module) == [], [d.render() for d in errors(module)]
    return module


def test_interp_inputs_ops() -> None:
    p = [Instr(Op.PARAM, [], imm=i) for i in range(3)]
    peek, rand1, rand2 = Instr(Op.PEEK), Instr(Op.RAND), Instr(Op.RAND)
    meta, absent = Instr(Op.META, symbol="timestamp"), Instr(Op.META, symbol="pipe_id")
    c, t = Instr(Op.CONST, [], imm=0xFFFF_FFFF), Instr(Op.CONST, [], Ty.BOOL, imm=1)
    zext = Instr(Op.ZEXT, [t])
    values = [*p, peek, rand1, rand2, meta, absent, c, zext]
    module = _single([t, *values], Exit(values), params=3)
    inputs = Inputs(stack=(7, 0x8000_0000), meta={"timestamp": 0x1_2345_6789}, rand=[5, 9])
    outcome = run_function(module, "f", inputs)
    # param 2 and peek are absent (0); rand cycles; meta words are masked; absent meta is 0
    assert outcome.stack == (7, 0x8000_0000, 0, 0, 5, 9, 0x2345_6789, 0, WORD_MASK, 1)
    assert outcome.rand_draws == 2
    # peek reads stack[params] and keeps it; the rest of the stack follows the pushes
    outcome = run_function(module, "f", Inputs(stack=(1, 2, 3, 4, 5), rand=iter([])))
    assert outcome.stack[:4] == (1, 2, 3, 4) and outcome.stack[-2:] == (4, 5)
    assert outcome.stack[4:6] == (0, 0)  # an exhausted rand iterator gives 0


def test_interp_hash_lanes() -> None:
    x = Instr(Op.PARAM, [], imm=0)
    hashes = [Instr(Op.HASH, [x], imm=k) for k in range(4)]
    module = _single([x, *hashes], Exit(hashes), params=1)
    for word in B:
        outcome = run_function(module, "f", Inputs(stack=(word,)))
        # lane 0 of tofino1 is the standard CRC-32 (zlib's) of the big-endian word
        assert outcome.stack[0] == zlib.crc32(word.to_bytes(4, "big"))
        profile = BUILTIN_PROFILES["tofino1"]
        expected = tuple(hash_word(profile.hash_for_lane(k), word) for k in range(4))
        assert outcome.stack[:4] == expected
    assert run_function(module, "f", Inputs(stack=(0,))).stack[0] == 0x2144_DF1C


def test_interp_select_and_bool_ops() -> None:
    t, f = Instr(Op.CONST, [], Ty.BOOL, imm=1), Instr(Op.CONST, [], Ty.BOOL, imm=0)
    a, b = Instr(Op.CONST, [], imm=0x7FFF_FFFF), Instr(Op.CONST, [], imm=0x8000_0000)
    ops = [
        Instr(Op.SELECT, [t, a, b]),
        Instr(Op.SELECT, [f, a, b]),
        Instr(Op.ZEXT, [Instr(Op.SELECT, [t, f, t], Ty.BOOL)]),
        Instr(Op.ZEXT, [Instr(Op.AND, [t, f], Ty.BOOL)]),
        Instr(Op.ZEXT, [Instr(Op.OR, [t, f], Ty.BOOL)]),
        Instr(Op.ZEXT, [Instr(Op.XOR, [t, t], Ty.BOOL)]),
    ]
    inner = [op.args[0] for op in ops[2:]]
    module = _single([t, f, a, b, *inner, *ops], Exit(ops))
    assert run_function(module, "f", Inputs()).stack == (0x7FFF_FFFF, 0x8000_0000, 0, 0, 1, 0)


FETCH_CASES = [
    # op, old, data, new memory word (the op returns the old word)
    (Op.FETCH_ADD, 0x7FFF_FFFF, 0x8000_0000, 0xFFFF_FFFF),
    (Op.FETCH_ADD, 0xFFFF_FFFF, 1, 0),
    (Op.FETCH_AND, 0x7FFF_FFFF, 0x8000_0000, 0),
    (Op.FETCH_AND, 0xFFFF_FFFF, 1, 1),
    (Op.FETCH_OR, 0x7FFF_FFFF, 0x8000_0000, 0xFFFF_FFFF),
    (Op.FETCH_OR, 0, 0, 0),
    (Op.FETCH_MAX, 0x7FFF_FFFF, 0x8000_0000, 0x8000_0000),  # unsigned
    (Op.FETCH_MAX, 0xFFFF_FFFF, 1, 0xFFFF_FFFF),
    (Op.FETCH_MIN, 0x7FFF_FFFF, 0x8000_0000, 0x7FFF_FFFF),
    (Op.FETCH_MIN, 0xFFFF_FFFF, 1, 1),
]


@pytest.mark.parametrize(("op", "old", "data", "new"), FETCH_CASES)
def test_interp_fetch_ops(op: Op, old: int, data: int, new: int) -> None:
    index, value = Instr(Op.PARAM, [], imm=0), Instr(Op.PARAM, [], imm=1)
    fetch = Instr(op, [index, value], symbol="a")
    module = _single([index, value, fetch], Exit([fetch]), params=2, a=4)
    outcome = run_function(module, "f", Inputs(stack=(3, data), memory={"a": {3: old}}))
    assert outcome.stack == (old,)
    assert outcome.memory == canonical_memory({"a": {3: new}})
    assert outcome.accesses == 1


def test_interp_load_store_and_bounds() -> None:
    i, v = Instr(Op.PARAM, [], imm=0), Instr(Op.PARAM, [], imm=1)
    load = Instr(Op.LOAD, [i], symbol="a")
    store = Instr(Op.STORE, [i, v], None, symbol="b")
    module = _single([i, v, load, store], Exit([load]), params=2, a=4, b=4)
    memory = {"a": [10, 20, 30, 40, 50], "b": {}}
    for index, loaded, stored in [
        (3, 40, {"b": {3: 7}}),
        (4, 0, {}),  # index == size: unmapped, although the input has a word there
        (0xFFFF_FFFF, 0, {}),
    ]:
        outcome = run_function(module, "f", Inputs(stack=(index, 7), memory=memory))
        assert outcome.stack == (loaded,)
        assert outcome.memory == canonical_memory({**memory, **stored})
        assert outcome.accesses == 2
    # the inputs are not modified
    assert memory == {"a": [10, 20, 30, 40, 50], "b": {}}


def test_interp_exit_and_path() -> None:
    module = parse(format_module(kvs_module()))
    hit = run_function(
        module, "cache_get", Inputs(stack=(5, 6, 7), memory={"index": {5: 0x8000_0001}})
    )
    assert hit.stack == (5, 5, 6, 7)
    assert (hit.steer, hit.steer_value, hit.chain, hit.drop_code) == (
        "return_to_sender",
        None,
        None,
        True,
    )
    assert hit.path == ("entry", "hit") and hit.accesses == 1
    miss = run_function(module, "cache_get", Inputs(stack=(5,)))
    assert miss.stack == (5,) and miss.chain == "count_min" and miss.path == ("entry", "miss")
    assert (miss.steer, miss.drop_code) == ("pass", False)


def test_interp_phi_takes_the_edge_value() -> None:
    text = vbody(
        "  %1 = ult %0, %0\n  br %1, l, r\nl:\n  %2 = const 5\n  jmp j\n"
        "r:\n  %3 = const 6\n  jmp j\nj:\n  %4 = phi w32 [%2, l], [%3, r]\n"
        "  exit push(%4) steer forward %0\n"
    )
    outcome = run_function(parse(text), "f", Inputs(stack=(0x1_0001,)))
    assert outcome.stack == (6,) and outcome.path == ("entry", "r", "j")
    assert outcome.steer == "forward" and outcome.steer_value == 0x1_0001  # the full word


def test_outcome_equality_is_semantic() -> None:
    base: dict[str, Any] = {"steer": "pass", "steer_value": None, "chain": None, "drop_code": False}
    a = Outcome([1, 2], memory={"a": [0, 5, 0], "b": [0]}, path=["entry"], **base)
    b = Outcome((1, 2), memory={"a": {1: 5, 7: 0}}, accesses=3, **base)
    assert a == b and a.memory == {"a": {1: 5}}
    assert a != Outcome((1, 2), memory={"a": {1: 6}}, **base)
    assert "stack=(1, 2)" in repr(a)


def test_interp_rejects_malformed_ir() -> None:
    with pytest.raises(InterpError):
        run_function(kvs_module(), "nope", Inputs())
    cyclic = _function(Block("entry", [], Jump("entry")))
    with pytest.raises(InterpError):
        run_function(cyclic, "f", Inputs())
    stranger = Instr(Op.CONST, [], imm=1)
    with pytest.raises(InterpError):
        run_function(_function(Block("entry", [], Exit([stranger]))), "f", Inputs())


# ---------------------------------------------------------------------------- properties


@given(st.data())
def test_random_valid_ir(data: st.DataObject) -> None:
    """One generated module serves the three properties (generation dominates the cost)."""
    module = data.draw(ir_modules())
    # the verifier accepts it (no errors, no warnings)
    assert verify_module(module) == []
    # print -> parse -> print is the identity
    text = format_module(module)
    parsed = parse(text)
    assert format_module(parsed) == text
    assert verify_module(parsed) == []
    # the interpreter runs it, identically on the parsed copy
    inputs = data.draw(ir_inputs(module))
    outcome = run_function(module, "f", inputs)
    again = run_function(parsed, "f", inputs)
    assert outcome == again and outcome.path == again.path
    # at most one memory access per array along the path taken (the RMT rule)
    assert outcome.accesses <= len(module.arrays)
    assert set(outcome.memory) <= set(module.arrays) | set(inputs.memory)


MUTATIONS = st.lists(
    st.tuples(st.integers(0, 10_000), st.integers(0, 3), st.sampled_from("%@,:[](){}=; \n0x1ab")),
    min_size=1,
    max_size=4,
)


@given(ir_modules(), MUTATIONS)
def test_mutated_text_gives_only_diagnostics(
    module: Module, edits: list[tuple[int, int, str]]
) -> None:
    text = format_module(module)
    for position, kind, char in edits:
        at = position % (len(text) + 1)
        if kind == 0:
            text = text[:at] + text[at + 1 :]
        elif kind == 1:
            text = text[:at] + char + text[at:]
        else:
            text = text[:at] + char + text[at + 1 :]
    try:
        parsed = parse(text)
    except DiagnosticError as error:
        assert all(d.code.startswith("DPF53") and d.span is not None for d in error.diagnostics)
        return
    found = verify_module(parsed)  # never raises, whatever the text was
    valid = not [d for d in found if d.severity is Severity.ERROR]
    for function in parsed.functions if valid else []:
        run_function(parsed, function.name, Inputs())


@given(st.text(max_size=200))
def test_arbitrary_text_gives_only_diagnostics(text: str) -> None:
    for candidate in (text, "module m\n" + text, HEAD + text):
        with contextlib.suppress(DiagnosticError):
            parse(candidate)


def test_boundary_constants_are_interesting() -> None:
    assert set(B) <= set(BOUNDARY)
