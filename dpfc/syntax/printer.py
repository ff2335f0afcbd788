"""The canonical printer: :class:`~dpfc.syntax.ast.Module` -> ``.dpf`` source text.

Contract: ``format_module(m)`` writes any well-formed tree (the shapes the parser produces)
in one canonical style, and parsing the result gives back an equal tree
(``parse_module(format_module(t)) == t``); printing that again gives the same text. The style:
4-space indentation, one item / statement / attribute per line, a blank line between groups
of items of different kinds and around every ``dpf``, spaces around binary operators and
``=``, and the fewest parentheses the precedence table allows (comparisons are
non-associative, so both their operands are parenthesised when they are comparisons too).
Integer literals keep their text as written when it still denotes their value (so
``0x8000_0000`` stays); literals built without text are printed in decimal below 0x10000 and
in hexadecimal from there on. Comments are not part of the tree and are not printed.

Example::

    @pin(eu = 2)
    segment array hits: u32[K];

    dpf count(key: u32) {
        hits[key & (K - 1)] += 1;
        if hits[0] > 3 {
            drop();
        }
    }
"""

from __future__ import annotations

import dpfc.syntax.ast as ast
from dpfc.syntax.bodies import parse_int_literal

INDENT = "    "

# Binding strength (higher binds tighter). Operators of one level associate to the left,
# except comparisons, which do not associate at all.
_PRECEDENCE = {
    ast.BinaryOp.OR: 1,
    ast.BinaryOp.AND: 2,
    ast.BinaryOp.EQ: 3,
    ast.BinaryOp.NE: 3,
    ast.BinaryOp.LT: 3,
    ast.BinaryOp.LE: 3,
    ast.BinaryOp.GT: 3,
    ast.BinaryOp.GE: 3,
    ast.BinaryOp.BIT_OR: 4,
    ast.BinaryOp.BIT_XOR: 5,
    ast.BinaryOp.BIT_AND: 6,
    ast.BinaryOp.SHL: 7,
    ast.BinaryOp.SHR: 7,
    ast.BinaryOp.ADD: 8,
    ast.BinaryOp.SUB: 8,
    ast.BinaryOp.MUL: 9,
}
_COMPARISON = 3
_UNARY = 10
_POSTFIX = 11
_ATOM = 12


def format_module(module: ast.Module) -> str:
    """The canonical text of ``module`` (ends with a newline unless the module is empty)."""
    lines: list[str] = []
    previous: ast.Item | None = None
    for item in module.items:
        if previous is not None and _separate(previous, item):
            lines.append("")
        lines.extend(_item(item))
        previous = item
    return "".join(line + "\n" for line in lines)


def format_expr(expr: ast.Expr) -> str:
    """The canonical text of one expression."""
    return _expr(expr)


def format_stmt(stmt: ast.Stmt, indent: int = 0) -> str:
    """The canonical text of one statement (lines joined, no final newline)."""
    return "\n".join(_stmt(stmt, indent))


def _separate(previous: ast.Item, item: ast.Item) -> bool:
    if isinstance(previous, ast.DpfDecl) or isinstance(item, ast.DpfDecl):
        return True
    return type(previous) is not type(item)


# -- items ------------------------------------------------------------------------------------


def _item(item: ast.Item) -> list[str]:
    if isinstance(item, ast.ModuleDecl):
        return [f"module {'.'.join(item.path)};"]
    if isinstance(item, ast.Import):
        alias = f" as {item.alias}" if item.alias is not None else ""
        return [f"import {'.'.join(item.path)}{alias};"]
    if isinstance(item, ast.AppDecl):
        value = f" = {_expr(item.value)}" if item.value is not None else ""
        return [f"app {item.name}{value};"]
    if isinstance(item, ast.ConstDecl):
        return [f"const {item.name}{_annotation(item.type)} = {_expr(item.value)};"]
    if isinstance(item, ast.MemoryDecl):
        key = f"{item.key_type.name.value} -> " if item.key_type is not None else ""
        return [
            *(_attribute(a) for a in item.attrs),
            f"{item.mapping.value} {item.kind.value} {item.name}: "
            f"{key}{item.elem_type.name.value}[{_expr(item.size)}];",
        ]
    params = ", ".join(f"{p.name}: {p.type.name.value}" for p in item.params)
    head = f"dpf {item.name}({params})"
    return [*(_attribute(a) for a in item.attrs), *_block(head, item.body, 0)]


def _annotation(type_ref: ast.TypeRef | None) -> str:
    return f": {type_ref.name.value}" if type_ref is not None else ""


def _attribute(attr: ast.Attribute) -> str:
    if not attr.args and not attr.kwargs:
        return f"@{attr.name}"
    args = [_expr(a) for a in attr.args] + [f"{k} = {_expr(v)}" for k, v in attr.kwargs]
    return f"@{attr.name}({', '.join(args)})"


# -- statements -------------------------------------------------------------------------------


def _block(head: str, block: ast.Block, indent: int) -> list[str]:
    """``head {`` + the statements one level deeper + ``}`` (``head {}`` when empty)."""
    pad = INDENT * indent
    if not block.stmts:
        return [f"{pad}{head} {{}}"]
    lines = [f"{pad}{head} {{"]
    for stmt in block.stmts:
        lines.extend(_stmt(stmt, indent + 1))
    lines.append(f"{pad}}}")
    return lines


def _stmt(stmt: ast.Stmt, indent: int) -> list[str]:
    pad = INDENT * indent
    if isinstance(stmt, ast.If):
        return _if(stmt, indent)
    if isinstance(stmt, ast.For):
        head = f"for {stmt.var} in {_expr(stmt.start)}..{_expr(stmt.end)}"
        return _block(head, stmt.body, indent)
    if isinstance(stmt, ast.Let):
        return [f"{pad}let {stmt.name}{_annotation(stmt.type)} = {_expr(stmt.value)};"]
    if isinstance(stmt, ast.Assign):
        return [f"{pad}{stmt.name} = {_expr(stmt.value)};"]
    if isinstance(stmt, ast.Store):
        return [f"{pad}{_expr(stmt.target)} {stmt.op.value} {_expr(stmt.value)};"]
    if isinstance(stmt, ast.ExprStmt):
        return [f"{pad}{_expr(stmt.expr)};"]
    if isinstance(stmt, ast.Push):
        return [f"{pad}push({_args(stmt.values)});"]
    if isinstance(stmt, ast.Action):
        return [f"{pad}{stmt.name}({_args(stmt.args)});"]
    if isinstance(stmt, ast.Chain):
        return [f"{pad}chain {stmt.target.text};"]
    return [f"{pad}return;"]


def _if(stmt: ast.If, indent: int) -> list[str]:
    lines = _block(f"if {_expr(stmt.cond)}", stmt.then, indent)
    orelse = stmt.orelse
    while orelse is not None:
        # `} else ...` continues the closing line of the previous block.
        closing = lines.pop()
        if isinstance(orelse, ast.If):
            chained = _block(f"if {_expr(orelse.cond)}", orelse.then, indent)
            lines.append(f"{closing} else {chained[0].lstrip()}")
            lines.extend(chained[1:])
            orelse = orelse.orelse
        else:
            tail = _block("else", orelse, indent)
            lines.append(f"{closing} {tail[0].lstrip()}")
            lines.extend(tail[1:])
            orelse = None
    return lines


# -- expressions ------------------------------------------------------------------------------


def _args(args: tuple[ast.Expr, ...]) -> str:
    return ", ".join(_expr(a) for a in args)


def _precedence(expr: ast.Expr) -> int:
    if isinstance(expr, ast.Binary):
        return _PRECEDENCE[expr.op]
    if isinstance(expr, ast.Unary):
        return _UNARY
    if isinstance(expr, ast.Cast):
        return _POSTFIX
    return _ATOM


def _operand(expr: ast.Expr, minimum: int) -> str:
    text = _expr(expr)
    return text if _precedence(expr) >= minimum else f"({text})"


def _expr(expr: ast.Expr) -> str:
    if isinstance(expr, ast.IntLit):
        return _int(expr)
    if isinstance(expr, ast.BoolLit):
        return "true" if expr.value else "false"
    if isinstance(expr, ast.Name):
        return expr.text
    if isinstance(expr, ast.Meta):
        return f"meta.{expr.field}"
    if isinstance(expr, ast.Index):
        return f"{expr.array.text}[{_expr(expr.index)}]"
    if isinstance(expr, ast.Unary):
        return f"{expr.op.value}{_operand(expr.operand, _UNARY)}"
    if isinstance(expr, ast.Cast):
        return f"{_operand(expr.expr, _POSTFIX)} as {expr.type.name.value}"
    if isinstance(expr, ast.Call):
        if expr.type_args:
            lanes = ", ".join(_type_arg(t) for t in expr.type_args)
            return f"{expr.func}<{lanes}>({_args(expr.args)})"
        return f"{expr.func}({_args(expr.args)})"
    level = _PRECEDENCE[expr.op]
    # Left operands of the same level need no parentheses (left associativity); right
    # operands do, and so does either side of a comparison.
    left_min = level + 1 if level == _COMPARISON else level
    return f"{_operand(expr.left, left_min)} {expr.op.value} {_operand(expr.right, level + 1)}"


def _type_arg(expr: ast.Expr) -> str:
    # The grammar takes a literal or a name between `<` and `>`; anything else is bracketed.
    text = _expr(expr)
    return text if isinstance(expr, ast.IntLit | ast.Name) else f"({text})"


def _int(lit: ast.IntLit) -> str:
    if lit.text and parse_int_literal(lit.text) == lit.value:
        return lit.text
    if 0 <= lit.value < 0x10000:
        return str(lit.value)
    return hex(lit.value) if lit.value >= 0 else f"-{hex(-lit.value)}"
