"""The lints of the DPF language: warnings about programs that compile but most likely do not
do what they say (DPF54xx; :mod:`.paths` warns of unreachable statements, DPF5218).

Contract: one :class:`Lints` per program check, called by the body checker where it already
has what a lint needs (a folded index, a shift, a condition, a loop's range), and by
:func:`~dpfc.sema.check.check_program` once every body is checked (unused arrays, shifts in
the module's declarations). Each :class:`Usage` records which locals and parameters of one
DPF body are read. A lint reports a :meth:`~dpfc.sema.report.Reporter.warning`, never an
error, and changes nothing that is compiled. It fires only on what is certain whatever the
packet: a value folded from literals and constants (``fold`` of
:class:`~dpfc.sema.consteval.ConstEvaluator`, silent), never from run-time values, and:

* an index or a shift amount may use the current iteration's value of a ``for`` variable
  (loops are unrolled: each copy really makes that access, that shift);
* a condition, a comparison or a loop range may not: ``if i == 0`` inside
  ``for i in 0..4`` is the idiom of a first iteration, ``x >= i`` is always true in the
  first copy only, and ``for j in 0..i`` is empty in one copy only;
* a condition that is just a named ``bool`` constant (``if TRACE``, ``if !TRACE``) is a
  deliberate compile-time switch, not a mistake;
* names starting with ``_`` are never unused (a parameter popped only to drop its word).

The checker keeps the warnings of the main module (the file being checked); an imported
module is linted when it is checked itself.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field

from dpfc.catalog import codes
from dpfc.diagnostics import Span
from dpfc.sema.consteval import WORD_MASK, ConstEvaluator, Value, to_view
from dpfc.sema.report import Reporter
from dpfc.sema.resolve import MemoryInfo, ModuleInfo
from dpfc.sema.types import SemType
from dpfc.syntax import ast, format_expr

WORD_BITS = 32
NO_LOOPS: Mapping[str, int] = {}
# A comparison with the end of its type's range, constant on the right: (op, at the low end)
# -> always true (True) or always false (False). `x >= 0` on u32, `x > 0x7fff_ffff` on i32.
_RANGE_ENDS: dict[tuple[ast.BinaryOp, bool], bool] = {
    (ast.BinaryOp.GE, True): True,
    (ast.BinaryOp.LT, True): False,
    (ast.BinaryOp.LE, False): True,
    (ast.BinaryOp.GT, False): False,
}
_FLIPPED = {
    ast.BinaryOp.LT: ast.BinaryOp.GT,
    ast.BinaryOp.GT: ast.BinaryOp.LT,
    ast.BinaryOp.LE: ast.BinaryOp.GE,
    ast.BinaryOp.GE: ast.BinaryOp.LE,
}


@dataclass
class Declared:
    """A ``let`` local or a parameter of a body, as declared (the first unrolled copy)."""

    name: str
    kind: str  # "let" | "param"
    span: Span  # the declaration


@dataclass
class Usage:
    """Which locals and parameters of one DPF body are read, by declaration: a ``let`` in a
    loop body is one declaration however many copies the unrolling makes."""

    declared: dict[tuple[int, int], Declared] = field(default_factory=dict)
    read: set[tuple[int, int]] = field(default_factory=set)
    assigned: set[tuple[int, int]] = field(default_factory=set)

    def declare(self, name: str, kind: str, span: Span) -> None:
        if kind in ("let", "param"):
            self.declared.setdefault((span.start, span.end), Declared(name, kind, span))

    def use(self, span: Span) -> None:
        self.read.add((span.start, span.end))

    def assign(self, span: Span) -> None:
        self.assigned.add((span.start, span.end))

    def unused(self) -> Iterator[tuple[Declared, bool]]:
        """Each declaration never read (and whether it is assigned), in source order."""
        for key, declared in sorted(self.declared.items()):
            if key not in self.read and not declared.name.startswith("_"):
                yield declared, key in self.assigned


def name_span(span: Span, name: str, after: str = "") -> Span:
    """The span of ``name`` in a declaration's text, after the keyword ``after`` (``let``,
    ``array``); the whole span if it is not found."""
    text = span.text()
    pattern = rf"\b{after}\s+({re.escape(name)})\b" if after else rf"\b({re.escape(name)})\b"
    found = re.search(pattern, text)
    if found is None:
        return span
    return Span(span.source, span.start + found.start(1), span.start + found.end(1))


def subexpressions(expr: ast.Expr) -> Iterator[ast.Expr]:
    """``expr`` and every expression inside it (hash lanes included)."""
    yield expr
    children: tuple[ast.Expr, ...] = ()
    if isinstance(expr, ast.Index):
        children = (expr.index,)
    elif isinstance(expr, ast.Unary):
        children = (expr.operand,)
    elif isinstance(expr, ast.Binary):
        children = (expr.left, expr.right)
    elif isinstance(expr, ast.Cast):
        children = (expr.expr,)
    elif isinstance(expr, ast.Call):
        children = (*expr.type_args, *expr.args)
    for child in children:
        yield from subexpressions(child)


class Lints:
    """The lints of one program check (see the module docstring)."""

    def __init__(self, report: Reporter, consts: ConstEvaluator) -> None:
        self.report = report
        self.consts = consts

    def fold(
        self,
        module: str,
        expr: ast.Expr,
        loops: Mapping[str, int],
        is_local: Callable[[str], bool],
    ) -> Value | None:
        return self.consts.fold(module, expr, loops, is_local)

    # -- expressions ----------------------------------------------------------------------

    def index(self, memory: MemoryInfo, expr: ast.Index, value: Value | None) -> None:
        """``a[i]`` with a constant ``i`` at or beyond the array's size (DPF5401)."""
        size = memory.size
        if value is None or size is None or memory.decl.kind is not ast.MemoryKind.ARRAY:
            return
        index = value[0] & WORD_MASK
        if index < size:
            return
        self.report.warning(
            codes.INDEX_OUT_OF_RANGE,
            f"index {index} is out of range: `{expr.array.text}` has {size} "
            f"word{'s' if size != 1 else ''} (0 .. {size - 1}), so this access reads 0 and "
            "writes nothing",
            expr.index.span,
        )

    def shift(self, expr: ast.Binary, amount: Value | None) -> None:
        """``x << n`` or ``x >> n`` with a constant ``n`` of 32 or more (DPF5402): the
        machine shifts by ``n & 31``."""
        if amount is None or expr.op not in (ast.BinaryOp.SHL, ast.BinaryOp.SHR):
            return
        bits = amount[0] & WORD_MASK
        if bits < WORD_BITS:
            return
        self.report.warning(
            codes.SHIFT_TOO_WIDE,
            f"shift amount {to_view(amount[0], amount[1])} is {WORD_BITS} or more: a shift "
            f"uses the amount & 31, so this shifts by {bits & (WORD_BITS - 1)}",
            expr.right.span,
        )

    def shifts_in(self, module: str, expr: ast.Expr, loops: Mapping[str, int] = NO_LOOPS) -> None:
        """DPF5402 for every shift inside a constant expression (a ``const``, a size, a
        ``for`` bound, a hash lane), which the body checker does not walk."""
        for sub in subexpressions(expr):
            if isinstance(sub, ast.Binary) and sub.op in (ast.BinaryOp.SHL, ast.BinaryOp.SHR):
                self.shift(sub, self.fold(module, sub.right, loops, _no_locals))

    def condition(
        self, module: str, cond: ast.Expr, is_local: Callable[[str], bool], what: str
    ) -> None:
        """A condition made of literals and constants only (DPF5406); ``is_local`` must
        count loop variables as locals (a condition on one is the first-iteration idiom)."""
        if _named_switch(cond):
            return
        value = self.fold(module, cond, NO_LOOPS, is_local)
        if value is None or value[1] is not SemType.BOOL:
            return
        self.report.warning(
            codes.CONSTANT_CONDITION,
            f"{what} is always {'true' if value[0] else 'false'}: `{format_expr(cond)}` is "
            "made of literals and constants",
            cond.span,
        )

    def comparison(
        self,
        module: str,
        expr: ast.Binary,
        ty: SemType,
        is_local: Callable[[str], bool],
    ) -> None:
        """A word compared with an end of its type's range, so that the result never
        changes: ``x >= 0`` and ``x < 0`` on ``u32`` (DPF5407); ``is_local`` counts loop
        variables as locals."""
        op = expr.op
        if op not in _FLIPPED or ty not in (SemType.U32, SemType.I32):
            return
        left = self.fold(module, expr.left, NO_LOOPS, is_local)
        right = self.fold(module, expr.right, NO_LOOPS, is_local)
        if (left is None) == (right is None):
            return  # both run-time values, or both constants (a constant condition)
        value, varying = (right, expr.left) if right is not None else (left, expr.right)
        assert value is not None
        if left is not None:
            op = _FLIPPED[op]
        low, high = (-(1 << 31), (1 << 31) - 1) if ty is SemType.I32 else (0, WORD_MASK)
        seen = to_view(value[0], ty)
        if seen not in (low, high):
            return
        always = _RANGE_ENDS.get((op, seen == low))
        if always is None:
            return
        end = "below" if seen == low else "above"
        bound = "0xffff_ffff" if seen == WORD_MASK else str(seen)
        self.report.warning(
            codes.COMPARISON_ALWAYS,
            f"`{format_expr(expr)}` is always {'true' if always else 'false'}: "
            f"`{format_expr(varying)}` is `{ty.value}`, never {end} {bound}",
            expr.span,
        )

    def empty_loop(self, stmt: ast.For, bounds: tuple[int, int], constant: bool) -> None:
        """A ``for`` whose range is empty whatever the enclosing loops (DPF5408)."""
        start, end = bounds
        if end > start or not constant:
            return
        self.report.warning(
            codes.EMPTY_LOOP,
            f"this loop never runs: the range {start}..{end} is empty (the end is exclusive), "
            "so its body is neither checked nor compiled",
            Span(stmt.start.span.source, stmt.start.span.start, stmt.end.span.end),
        )

    # -- declarations ---------------------------------------------------------------------

    def unused(self, usage: Usage) -> None:
        """The locals and parameters of one body that are never read (DPF5403, DPF5404)."""
        for declared, assigned in usage.unused():
            if declared.kind == "param":
                self.report.warning(
                    codes.UNUSED_PARAMETER,
                    f"parameter `{declared.name}` is never used (its stack word is still popped)",
                    Span(
                        declared.span.source,
                        declared.span.start,
                        declared.span.start + len(declared.name),
                    ),
                )
                continue
            self.report.warning(
                codes.UNUSED_LOCAL,
                f"local `{declared.name}` is "
                + ("assigned but never read" if assigned else "never used"),
                name_span(declared.span, declared.name, "let"),
            )

    def unused_arrays(self, main: ModuleInfo, used: Mapping[str, object]) -> None:
        """Arrays of the main module no DPF of the program accesses (DPF5405); not in a
        module without DPFs (a library of memory for its importers)."""
        if not main.dpfs:
            return
        for memory in main.memories.values():
            if memory.ir_name in used or memory.name.startswith("_"):
                continue
            what = "map" if memory.decl.kind is ast.MemoryKind.MAP else "array"
            self.report.warning(
                codes.UNUSED_ARRAY,
                f"{what} `{memory.name}` is never accessed by a DPF",
                name_span(memory.decl.span, memory.name, what),
            )

    def declarations(self, main: ModuleInfo) -> None:
        """DPF5402 in the constant expressions of the main module's declarations."""
        for item in main.tree.items:
            for expr in _declared_expressions(item):
                self.shifts_in(main.key, expr)


def _declared_expressions(item: ast.Item) -> Iterator[ast.Expr]:
    """The constant expressions of a declaration: a value, a size, attribute arguments."""
    if isinstance(item, ast.ConstDecl | ast.AppDecl) and item.value is not None:
        yield item.value
    if isinstance(item, ast.MemoryDecl):
        yield item.size
    if isinstance(item, ast.MemoryDecl | ast.DpfDecl):
        for attr in item.attrs:
            yield from attr.args
            yield from (value for _, value in attr.kwargs)


def _no_locals(name: str) -> bool:
    return False


def _named_switch(cond: ast.Expr) -> bool:
    """``NAME`` or ``!NAME``: a compile-time switch, written on purpose."""
    if isinstance(cond, ast.Unary) and cond.op is ast.UnaryOp.LNOT:
        cond = cond.operand
    return isinstance(cond, ast.Name)
