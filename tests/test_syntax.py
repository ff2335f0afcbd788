"""The DPF front end: parser (text -> AST, spans, DPF50xx errors) and canonical printer.

- every construct of docs/language.md parses to the expected tree;
- spans are the exact text of their nodes;
- the printer's output for the programs under tests/golden/syntax/ is golden
  (``NAME.in.dpf`` -> ``NAME.out.dpf``; ``DPFC_BLESS=1`` rewrites);
- print -> parse is the identity on random trees (hypothesis, >= 1,000 examples in CI), and
  print -> parse -> print on the examples.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given

from dpfc.diagnostics import DiagnosticError, SourceFile
from dpfc.syntax import KEYWORDS, ast, parse_module
from dpfc.syntax.bodies import parse_int_literal
from dpfc.syntax.printer import format_expr, format_module
from tests.conftest import ROOT, assert_golden
from tests.dpf_strategies import SPAN, modules

GOLDEN = ROOT / "tests" / "golden" / "syntax"
PROGRAMS = sorted(GOLDEN.glob("*.in.dpf"))

S = SPAN
B = ast.BinaryOp


def parse(text: str, name: str = "t.dpf") -> ast.Module:
    return parse_module(SourceFile(name, text))


def body(text: str) -> tuple[ast.Stmt, ...]:
    item = parse(f"dpf f() {{\n{text}\n}}\n").items[0]
    assert isinstance(item, ast.DpfDecl)
    return item.body.stmts


def expr(text: str) -> ast.Expr:
    (stmt,) = body(f"let v = {text};")
    assert isinstance(stmt, ast.Let)
    return stmt.value


def n(*parts: str) -> ast.Name:
    return ast.Name(span=S, parts=parts)


def i(value: int) -> ast.IntLit:
    return ast.IntLit(span=S, value=value)


def bin_(op: ast.BinaryOp, left: ast.Expr, right: ast.Expr) -> ast.Binary:
    return ast.Binary(span=S, op=op, left=left, right=right)


def t(name: str) -> ast.TypeRef:
    return ast.TypeRef(span=S, name=ast.TypeName(name))


def error_code(text: str) -> str:
    with pytest.raises(DiagnosticError) as info:
        parse(text)
    (diag,) = info.value.diagnostics
    return diag.code


# -- items ------------------------------------------------------------------------------------


def test_module_items() -> None:
    module = parse(
        """
        module kvs.cache;
        import stdlib.countmin;
        import stdlib.hash as h;
        app kvs = 0x4b5601;
        app bare;
        const K: u32 = 128;
        const MASK = K - 1;
        direct map index: u32 -> u32 [45000];
        segment array values0: u32[K];
        """
    )
    assert module.items == (
        ast.ModuleDecl(span=S, path=("kvs", "cache")),
        ast.Import(span=S, path=("stdlib", "countmin")),
        ast.Import(span=S, path=("stdlib", "hash"), alias="h"),
        ast.AppDecl(span=S, name="kvs", value=i(0x4B5601)),
        ast.AppDecl(span=S, name="bare"),
        ast.ConstDecl(span=S, name="K", type=t("u32"), value=i(128)),
        ast.ConstDecl(span=S, name="MASK", value=bin_(B.SUB, n("K"), i(1))),
        ast.MemoryDecl(
            span=S,
            mapping=ast.Mapping.DIRECT,
            kind=ast.MemoryKind.MAP,
            name="index",
            key_type=t("u32"),
            elem_type=t("u32"),
            size=i(45000),
        ),
        ast.MemoryDecl(
            span=S,
            mapping=ast.Mapping.SEGMENT,
            kind=ast.MemoryKind.ARRAY,
            name="values0",
            elem_type=t("u32"),
            size=n("K"),
        ),
    )
    assert module.name == ("kvs", "cache")
    import_ = module.items[2]
    assert isinstance(import_, ast.Import) and import_.local_name == "h"


def test_attributes_and_dpf() -> None:
    module = parse(
        """
        @pin(eu = 2, lane = 0)
        segment array hits: u32[4];
        @target(tofino1) @placement(packet)
        @ingress
        dpf get(key: u32, delta: i32, flag: bool) {}
        """
    )
    memory, dpf = module.items
    assert isinstance(memory, ast.MemoryDecl)
    assert memory.attrs == (
        ast.Attribute(span=S, name="pin", kwargs=(("eu", i(2)), ("lane", i(0)))),
    )
    assert dpf == ast.DpfDecl(
        span=S,
        attrs=(
            ast.Attribute(span=S, name="target", args=(n("tofino1"),)),
            ast.Attribute(span=S, name="placement", args=(n("packet"),)),
            ast.Attribute(span=S, name="ingress"),
        ),
        name="get",
        params=(
            ast.Param(span=S, name="key", type=t("u32")),
            ast.Param(span=S, name="delta", type=t("i32")),
            ast.Param(span=S, name="flag", type=t("bool")),
        ),
        body=ast.Block(span=S, stmts=()),
    )


def test_empty_file_and_comments_only() -> None:
    assert parse("").items == ()
    assert parse("// nothing here\n\n  // at all").items == ()


# -- statements -------------------------------------------------------------------------------


def test_simple_statements() -> None:
    stmts = body(
        """
        let x = 1;
        let y: i32 = 2;
        x = y;
        arr[x] = 3;
        arr[x] += 4;
        arr[x] &= 5;
        m.arr[x] |= 6;
        fetch_add(arr[x], 1);
        push(x, y);
        push();
        chain other;
        chain mod.other;
        return;
        """
    )
    index = ast.Index(span=S, array=n("arr"), index=n("x"))
    assert stmts == (
        ast.Let(span=S, name="x", value=i(1)),
        ast.Let(span=S, name="y", type=t("i32"), value=i(2)),
        ast.Assign(span=S, name="x", value=n("y")),
        ast.Store(span=S, target=index, op=ast.StoreOp.SET, value=i(3)),
        ast.Store(span=S, target=index, op=ast.StoreOp.ADD, value=i(4)),
        ast.Store(span=S, target=index, op=ast.StoreOp.AND, value=i(5)),
        ast.Store(
            span=S,
            target=ast.Index(span=S, array=n("m", "arr"), index=n("x")),
            op=ast.StoreOp.OR,
            value=i(6),
        ),
        ast.ExprStmt(span=S, expr=ast.Call(span=S, func="fetch_add", args=(index, i(1)))),
        ast.Push(span=S, values=(n("x"), n("y"))),
        ast.Push(span=S, values=()),
        ast.Chain(span=S, target=n("other")),
        ast.Chain(span=S, target=n("mod", "other")),
        ast.Return(span=S),
    )


@pytest.mark.parametrize(
    "name",
    [
        "forward",
        "multicast",
        "set_port",
        "return_to_sender",
        "drop",
        "pass",
        "recirculate",
        "drop_code",
    ],
)
def test_action_statements(name: str) -> None:
    (stmt,) = body(f"{name}(7);")
    assert stmt == ast.Action(span=S, name=name, args=(i(7),))


def test_action_names_are_calls_inside_expressions() -> None:
    assert expr("drop()") == ast.Call(span=S, func="drop", args=())
    (stmt,) = body("minimum(1);")
    assert isinstance(stmt, ast.ExprStmt)


def test_if_else_chain_and_for() -> None:
    (if_stmt, for_stmt) = body(
        """
        if a { drop(); } else if b { pass(); } else { return; }
        for k in 0..N + 1 { push(k); }
        """
    )

    def block(*stmts: ast.Stmt) -> ast.Block:
        return ast.Block(span=S, stmts=stmts)

    assert if_stmt == ast.If(
        span=S,
        cond=n("a"),
        then=block(ast.Action(span=S, name="drop", args=())),
        orelse=ast.If(
            span=S,
            cond=n("b"),
            then=block(ast.Action(span=S, name="pass", args=())),
            orelse=block(ast.Return(span=S)),
        ),
    )
    assert for_stmt == ast.For(
        span=S,
        var="k",
        start=i(0),
        end=bin_(B.ADD, n("N"), i(1)),
        body=block(ast.Push(span=S, values=(n("k"),))),
    )


# -- expressions ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "tree"),
    [
        ("a || b && c", bin_(B.OR, n("a"), bin_(B.AND, n("b"), n("c")))),
        ("a == b | c", bin_(B.EQ, n("a"), bin_(B.BIT_OR, n("b"), n("c")))),
        (
            "a | b ^ c & d",
            bin_(B.BIT_OR, n("a"), bin_(B.BIT_XOR, n("b"), bin_(B.BIT_AND, n("c"), n("d")))),
        ),
        ("a & b << c", bin_(B.BIT_AND, n("a"), bin_(B.SHL, n("b"), n("c")))),
        ("a << b + c", bin_(B.SHL, n("a"), bin_(B.ADD, n("b"), n("c")))),
        ("a + b * c", bin_(B.ADD, n("a"), bin_(B.MUL, n("b"), n("c")))),
        ("a - b - c", bin_(B.SUB, bin_(B.SUB, n("a"), n("b")), n("c"))),
        ("a - (b - c)", bin_(B.SUB, n("a"), bin_(B.SUB, n("b"), n("c")))),
        ("a >> 1 >> 2", bin_(B.SHR, bin_(B.SHR, n("a"), i(1)), i(2))),
        ("(a < b) == c", bin_(B.EQ, bin_(B.LT, n("a"), n("b")), n("c"))),
        ("a <= b", bin_(B.LE, n("a"), n("b"))),
        ("a >= b", bin_(B.GE, n("a"), n("b"))),
        ("a != b", bin_(B.NE, n("a"), n("b"))),
        ("a > b", bin_(B.GT, n("a"), n("b"))),
        (
            "-a * ~b",
            bin_(
                B.MUL,
                ast.Unary(span=S, op=ast.UnaryOp.NEG, operand=n("a")),
                ast.Unary(span=S, op=ast.UnaryOp.NOT, operand=n("b")),
            ),
        ),
        (
            "!x as bool",
            ast.Unary(
                span=S,
                op=ast.UnaryOp.LNOT,
                operand=ast.Cast(span=S, expr=n("x"), type=t("bool")),
            ),
        ),
        (
            "x as u32 as i32",
            ast.Cast(span=S, expr=ast.Cast(span=S, expr=n("x"), type=t("u32")), type=t("i32")),
        ),
        ("true", ast.BoolLit(span=S, value=True)),
        ("false", ast.BoolLit(span=S, value=False)),
        ("meta.ingress_port", ast.Meta(span=S, field="ingress_port")),
        ("countmin.sketch0", n("countmin", "sketch0")),
        ("a.b[i + 1]", ast.Index(span=S, array=n("a", "b"), index=bin_(B.ADD, n("i"), i(1)))),
        ("min(a, b)", ast.Call(span=S, func="min", args=(n("a"), n("b")))),
        ("rand()", ast.Call(span=S, func="rand", args=())),
        ("hash<2>(x)", ast.Call(span=S, func="hash", args=(n("x"),), type_args=(i(2),))),
        (
            "hash <K>(x, y)",
            ast.Call(span=S, func="hash", args=(n("x"), n("y")), type_args=(n("K"),)),
        ),
        (
            "hash<(K + 1)>(x) < 3",
            bin_(
                B.LT,
                ast.Call(
                    span=S, func="hash", args=(n("x"),), type_args=(bin_(B.ADD, n("K"), i(1)),)
                ),
                i(3),
            ),
        ),
        ("hashed < 3", bin_(B.LT, n("hashed"), i(3))),
        ("hash(x)", ast.Call(span=S, func="hash", args=(n("x"),))),
    ],
)
def test_expressions(text: str, tree: ast.Expr) -> None:
    assert expr(text) == tree


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("0", 0),
        ("42", 42),
        ("0x2a", 42),
        ("0X2A", 42),
        ("0b101", 5),
        ("0x8000_0000", 0x8000_0000),
        ("1_000", 1000),
        ("4294967295", 0xFFFF_FFFF),
        ("0xffff_ffff", 0xFFFF_FFFF),
    ],
)
def test_integer_literals(text: str, value: int) -> None:
    lit = expr(text)
    assert lit == ast.IntLit(span=S, value=value)
    assert isinstance(lit, ast.IntLit) and lit.text == text
    assert parse_int_literal(text) == value


def test_negative_numbers_are_unary_minus() -> None:
    assert expr("-1") == ast.Unary(span=S, op=ast.UnaryOp.NEG, operand=i(1))


# -- spans ------------------------------------------------------------------------------------


def test_spans_are_exact() -> None:
    text = "const K = 3;\ndpf f(a: u32) {\n    let x = (a + 1) * K;\n    arr[x] += -x;\n}\n"
    module = parse(text)
    const, dpf = module.items
    assert const.span.text() == "const K = 3;"
    assert isinstance(dpf, ast.DpfDecl)
    assert dpf.span.text() == text[13:-1]
    assert dpf.params[0].span.text() == "a: u32"
    assert dpf.params[0].type.span.text() == "u32"
    assert dpf.body.span.text().startswith("{") and dpf.body.span.text().endswith("}")
    let, store = dpf.body.stmts
    assert isinstance(let, ast.Let) and isinstance(store, ast.Store)
    assert let.span.text() == "let x = (a + 1) * K;"
    assert isinstance(let.value, ast.Binary)
    assert let.value.span.text() == "(a + 1) * K"
    assert let.value.left.span.text() == "a + 1"
    assert let.value.right.span.text() == "K"
    assert (let.value.span.line, let.value.span.column) == (3, 13)
    assert store.span.text() == "arr[x] += -x;"
    assert store.target.span.text() == "arr[x]"
    assert store.target.array.span.text() == "arr"
    assert store.value.span.text() == "-x"
    assert module.span.text() == text


def test_spans_of_calls_attributes_and_meta() -> None:
    text = "@pin(eu = 2)\nsegment array h: u32[4];\ndpf g() { forward(hash<1>(meta.switch_id)); }"
    memory, dpf = parse(text).items
    assert isinstance(memory, ast.MemoryDecl) and isinstance(dpf, ast.DpfDecl)
    assert memory.span.text().startswith("@pin(eu = 2)\nsegment")
    assert memory.attrs[0].span.text() == "@pin(eu = 2)"
    (action,) = dpf.body.stmts
    assert isinstance(action, ast.Action)
    assert action.span.text() == "forward(hash<1>(meta.switch_id));"
    (call,) = action.args
    assert isinstance(call, ast.Call)
    assert call.span.text() == "hash<1>(meta.switch_id)"
    assert call.args[0].span.text() == "meta.switch_id"
    assert call.type_args[0].span.text() == "1"


# -- errors (the corpus in tests/errors/ has the full messages) -------------------------------


@pytest.mark.parametrize("keyword", sorted(KEYWORDS))
def test_keywords_are_reserved(keyword: str) -> None:
    assert error_code(f"dpf f() {{ let {keyword} = 1; }}") in ("DPF5010", "DPF5009")
    assert error_code(f"const {keyword} = 1;") in ("DPF5010", "DPF5009")


def test_several_tree_errors_are_reported_together() -> None:
    with pytest.raises(DiagnosticError) as info:
        parse("const A = 0x1_0000_0000;\nconst B = 0b2;\ndpf f() { x += 1; }\n")
    assert [d.code for d in info.value.diagnostics] == ["DPF5003", "DPF5002", "DPF5017"]


def test_nesting_limit() -> None:
    assert error_code("const K = " + "(" * 150 + "1" + ")" * 150 + ";") == "DPF5022"
    assert error_code("const K = " + "-" * 2000 + "1;") == "DPF5022"
    assert error_code("const K = " + "(" * 3000 + "1" + ")" * 3000 + ";") == "DPF5022"
    expr("(" * 40 + "1" + ")" * 40)


# -- printer ----------------------------------------------------------------------------------


@pytest.mark.parametrize("path", PROGRAMS, ids=[p.name.split(".")[0] for p in PROGRAMS])
def test_printer_golden(path: Path) -> None:
    module = parse(path.read_text(encoding="utf-8"), path.name)
    printed = format_module(module)
    assert_golden(path.with_name(path.name.replace(".in.", ".out.")), printed)
    again = parse(printed)
    assert again == module
    assert format_module(again) == printed


def test_golden_programs_exist() -> None:
    assert len(PROGRAMS) >= 4
    goldens = {p.name.replace(".out.", ".in.") for p in GOLDEN.glob("*.out.dpf")}
    assert goldens == {p.name for p in PROGRAMS}


@pytest.mark.parametrize(
    ("tree", "text"),
    [
        (bin_(B.SUB, n("a"), bin_(B.SUB, n("b"), n("c"))), "a - (b - c)"),
        (bin_(B.SUB, bin_(B.SUB, n("a"), n("b")), n("c")), "a - b - c"),
        (bin_(B.MUL, bin_(B.ADD, n("a"), n("b")), n("c")), "(a + b) * c"),
        (bin_(B.LT, bin_(B.LT, n("a"), n("b")), n("c")), "(a < b) < c"),
        (bin_(B.EQ, n("a"), bin_(B.NE, n("b"), n("c"))), "a == (b != c)"),
        (bin_(B.OR, bin_(B.AND, n("a"), n("b")), n("c")), "a && b || c"),
        (bin_(B.AND, bin_(B.OR, n("a"), n("b")), n("c")), "(a || b) && c"),
        (
            ast.Cast(
                span=S, expr=ast.Unary(span=S, op=ast.UnaryOp.NEG, operand=n("x")), type=t("u32")
            ),
            "(-x) as u32",
        ),
        (
            ast.Unary(
                span=S,
                op=ast.UnaryOp.NEG,
                operand=ast.Unary(span=S, op=ast.UnaryOp.NEG, operand=i(1)),
            ),
            "--1",
        ),
        (i(0x10000), "0x10000"),
        (i(65535), "65535"),
        (ast.IntLit(span=S, value=5, text="0b101"), "0b101"),
        (ast.IntLit(span=S, value=6, text="0b101"), "6"),
        (
            ast.Call(span=S, func="hash", args=(n("x"),), type_args=(ast.Meta(span=S, field="k"),)),
            "hash<(meta.k)>(x)",
        ),
    ],
)
def test_printer_parenthesises_minimally(tree: ast.Expr, text: str) -> None:
    assert format_expr(tree) == text
    assert expr(text) == tree


@given(modules())
def test_print_parse_roundtrip(module: ast.Module) -> None:
    text = format_module(module)
    parsed = parse(text)
    assert parsed == module, text
    assert format_module(parsed) == text
