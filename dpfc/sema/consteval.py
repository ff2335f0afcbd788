"""Compile-time evaluation of constant expressions, with 32-bit range checks.

Contract: :meth:`ConstEvaluator.eval` returns the value and type of an expression made of
literals, constants (also imported: ``h.LANE1``), ``for`` variables, ``+ - * << >> & | ^ ~``,
unary ``-``, compares, ``&& || !``, ``min``, ``max``, ``select`` and casts, or reports why
it cannot and returns None. Constants are evaluated on demand, each once; one that depends
on itself is DPF5121. Arithmetic is exact: a result outside what its type can hold (u32:
0 .. 2^32-1, i32: -2^31 .. 2^31-1, an untyped integer: either) is DPF5112, so
``const K = 0xffff_ffff + 1;`` is an error rather than 0. A value's type view decides how it
is held: i32 values are signed Python ints, u32 ones non-negative. Shifts use the amount
``& 31`` as at run time; ``>>`` on i32 is DPF5110 as everywhere.

What is not constant (locals, parameters, metadata, memory, ``rand()``, ``hash``, ...) is
DPF5111, pointing at the part that is not. :meth:`is_constant` answers the same question
without reporting (the ``*`` rule of the body checker); :meth:`fold` evaluates a constant
part of run-time code without reporting (the lints, :mod:`.lints`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from dpfc.catalog import codes
from dpfc.diagnostics import Note, Span
from dpfc.sema.report import Reporter
from dpfc.sema.resolve import ConstInfo, DpfInfo, MemoryInfo, ModuleRef, Resolver, describe
from dpfc.sema.types import SemType, from_ast, join_words
from dpfc.syntax import ast

WORD_MASK = 0xFFFF_FFFF
RANGES: dict[SemType, tuple[int, int]] = {
    SemType.U32: (0, WORD_MASK),
    SemType.I32: (-(1 << 31), (1 << 31) - 1),
    SemType.INT: (-(1 << 31), WORD_MASK),
    SemType.BOOL: (0, 1),
}
Value = tuple[int, SemType]
IsLocal = Callable[[str], bool]


class _NotConstant(Exception):
    def __init__(self, span: Span, what: str) -> None:
        super().__init__(what)
        self.span = span
        self.what = what


class _Reported(Exception):
    """The expression had an error that is already reported."""


def _no_locals(name: str) -> bool:
    return False


def to_view(value: int, ty: SemType) -> int:
    """``value``'s 32 bits as ``ty`` reads them (i32 signed, otherwise unsigned)."""
    word = value & WORD_MASK
    if ty is SemType.I32 and word >= 1 << 31:
        return word - (1 << 32)
    return word


class ConstEvaluator:
    def __init__(self, resolver: Resolver, report: Reporter) -> None:
        self.resolver = resolver
        self.report = report
        self.busy: list[ConstInfo] = []

    # -- constants ------------------------------------------------------------------------

    def const(self, info: ConstInfo, use: Span | None = None) -> Value | None:
        if info.value is not None and info.type is not None:
            return info.value, info.type
        if info.failed:
            return None
        if info in self.busy:
            self.report.error(
                codes.CONST_CYCLE,
                f"constant `{info.name}` depends on itself",
                use if use is not None else info.decl.span,
                notes=(Note(f"`{info.name}` is defined here", info.decl.span),),
            )
            for member in self.busy[self.busy.index(info) :]:
                member.failed = True
            return None
        self.busy.append(info)
        try:
            result = self.eval(info.module, info.decl.value)
        finally:
            self.busy.pop()
        if info.failed or result is None:
            info.failed = True
            return None
        value, ty = result
        declared = from_ast(info.decl.type.name) if info.decl.type is not None else None
        target = declared if declared is not None else (SemType.U32 if ty is SemType.INT else ty)
        if declared is not None and not (
            ty is declared or (ty is SemType.INT and declared is not SemType.BOOL)
        ):
            self.report.error(
                codes.TYPE_MISMATCH,
                f"constant `{info.name}` is declared `{declared.value}` but its value is "
                f"{ty.describe()}",
                info.decl.value.span,
            )
            info.failed = True
            return None
        low, high = RANGES[target]
        if not low <= value <= high:
            hint = "declare it `i32`" if target is SemType.U32 and value < 0 else None
            self.report.error(
                codes.CONST_OVERFLOW,
                f"constant `{info.name}` = {value} does not fit in `{target.value}` "
                f"({low} .. {high})",
                info.decl.value.span,
                hint=hint,
            )
            info.failed = True
            return None
        info.value, info.type = value, target
        return value, target

    # -- expressions ----------------------------------------------------------------------

    def eval(
        self,
        module: str,
        expr: ast.Expr,
        loop_vars: Mapping[str, int] | None = None,
        is_local: IsLocal = _no_locals,
        *,
        what: str = "",
    ) -> Value | None:
        """The value of a constant expression, or None (reported). ``what`` names the place
        that needs a constant, for the message (``"an array size"``)."""
        try:
            return self._eval(module, expr, loop_vars or {}, is_local)
        except _NotConstant as exc:
            where = f"{what} must be a constant expression" if what else "not a constant expression"
            self.report.error(
                codes.NOT_CONSTANT,
                f"{where}: {exc.what}",
                exc.span,
                hint="constants are literals, `const` items and `for` variables, combined "
                "with operators, `min`, `max` and casts",
            )
            return None
        except _Reported:
            return None

    def is_constant(
        self,
        module: str,
        expr: ast.Expr,
        loop_vars: Mapping[str, int],
        is_local: IsLocal,
    ) -> bool:
        """Is ``expr`` made of constants only (no report; names are assumed to resolve)?"""
        if isinstance(expr, ast.IntLit | ast.BoolLit):
            return True
        if isinstance(expr, ast.Name):
            if len(expr.parts) == 1 and expr.parts[0] in loop_vars:
                return True
            if len(expr.parts) == 1 and is_local(expr.parts[0]):
                return False
            info = self.resolver.tables[module]
            if len(expr.parts) == 1:
                return isinstance(info.item(expr.parts[0]), ConstInfo)
            ref = info.imports.get(".".join(expr.parts[:-1]))
            target = self.resolver.tables.get(ref.key) if ref is not None else None
            return target is not None and isinstance(target.item(expr.parts[-1]), ConstInfo)
        if isinstance(expr, ast.Unary):
            return self.is_constant(module, expr.operand, loop_vars, is_local)
        if isinstance(expr, ast.Binary):
            return self.is_constant(module, expr.left, loop_vars, is_local) and self.is_constant(
                module, expr.right, loop_vars, is_local
            )
        if isinstance(expr, ast.Cast):
            return self.is_constant(module, expr.expr, loop_vars, is_local)
        if isinstance(expr, ast.Call) and expr.func in ("min", "max", "select"):
            return all(self.is_constant(module, a, loop_vars, is_local) for a in expr.args)
        return False

    def fold(
        self, module: str, expr: ast.Expr, loop_vars: Mapping[str, int], is_local: IsLocal
    ) -> Value | None:
        """The value of ``expr`` when it is constant and evaluates without error, else None;
        reports nothing (the lints fold run-time expressions: an overflow there wraps)."""
        if not self.is_constant(module, expr, loop_vars, is_local):
            return None
        saved = self.report, self.resolver.report
        self.report = self.resolver.report = Reporter()
        try:
            return self.eval(module, expr, loop_vars, is_local)
        finally:
            self.report, self.resolver.report = saved

    def _fit(self, value: int, ty: SemType, span: Span) -> Value:
        low, high = RANGES[ty]
        if not low <= value <= high:
            self.report.error(
                codes.CONST_OVERFLOW,
                f"constant expression overflows {ty.describe()}: {value} is outside "
                f"{low} .. {high}",
                span,
            )
            raise _Reported
        return value, ty

    def _eval(
        self, module: str, expr: ast.Expr, loops: Mapping[str, int], is_local: IsLocal
    ) -> Value:
        if isinstance(expr, ast.IntLit):
            return expr.value, SemType.INT
        if isinstance(expr, ast.BoolLit):
            return int(expr.value), SemType.BOOL
        if isinstance(expr, ast.Name):
            return self._name(module, expr, loops, is_local)
        if isinstance(expr, ast.Meta):
            raise _NotConstant(expr.span, f"`meta.{expr.field}` is read at run time")
        if isinstance(expr, ast.Index):
            raise _NotConstant(expr.span, "a memory access is made at run time")
        if isinstance(expr, ast.Unary):
            return self._unary(module, expr, loops, is_local)
        if isinstance(expr, ast.Binary):
            return self._binary(module, expr, loops, is_local)
        if isinstance(expr, ast.Cast):
            value, ty = self._eval(module, expr.expr, loops, is_local)
            target = from_ast(expr.type.name)
            if target is SemType.BOOL:
                return int(value != 0), SemType.BOOL
            if ty is SemType.BOOL:
                return value, target
            return to_view(value, target), target
        if isinstance(expr, ast.Call):
            return self._call(module, expr, loops, is_local)
        raise AssertionError(f"unknown expression {expr!r}")  # pragma: no cover

    def _name(
        self, module: str, expr: ast.Name, loops: Mapping[str, int], is_local: IsLocal
    ) -> Value:
        if len(expr.parts) == 1:
            name = expr.parts[0]
            if name in loops:
                return loops[name], SemType.INT
            if is_local(name):
                raise _NotConstant(expr.span, f"`{name}` is a variable")
        consts = self.resolver.tables[module].consts
        item = self.resolver.lookup(module, expr, [*loops, *consts])
        if item is None:
            raise _Reported
        if isinstance(item, ConstInfo):
            result = self.const(item, expr.span)
            if result is None:
                raise _Reported
            return result
        if isinstance(item, MemoryInfo | DpfInfo | ModuleRef):
            self.report.error(
                codes.WRONG_KIND,
                f"`{expr.text}` is {describe(item)}, not a value",
                expr.span,
            )
        raise _Reported

    def _word(self, value: Value, span: Span, op: str) -> Value:
        if value[1] is SemType.BOOL:
            self.report.error(codes.OPERAND_TYPE, f"`{op}` needs a word, found `bool`", span)
            raise _Reported
        return value

    def _bool(self, value: Value, span: Span, op: str) -> Value:
        if value[1] is not SemType.BOOL:
            self.report.error(
                codes.OPERAND_TYPE, f"`{op}` needs a `bool`, found {value[1].describe()}", span
            )
            raise _Reported
        return value

    def _unary(
        self, module: str, expr: ast.Unary, loops: Mapping[str, int], is_local: IsLocal
    ) -> Value:
        value, ty = self._eval(module, expr.operand, loops, is_local)
        op = expr.op.value
        if expr.op is ast.UnaryOp.LNOT:
            self._bool((value, ty), expr.operand.span, op)
            return 1 - value, SemType.BOOL
        self._word((value, ty), expr.operand.span, op)
        if expr.op is ast.UnaryOp.NEG:
            if ty is SemType.U32:  # wraps, as at run time: -1 as u32 is 0xffff_ffff
                return (-value) & WORD_MASK, ty
            return self._fit(-value, ty, expr.span)
        if ty is SemType.I32 or value < 0:
            return ~value, ty
        return value ^ WORD_MASK, ty

    def _binary(
        self, module: str, expr: ast.Binary, loops: Mapping[str, int], is_local: IsLocal
    ) -> Value:
        op = expr.op
        a, at = self._eval(module, expr.left, loops, is_local)
        b, bt = self._eval(module, expr.right, loops, is_local)
        if op in (ast.BinaryOp.AND, ast.BinaryOp.OR):
            self._bool((a, at), expr.left.span, op.value)
            self._bool((b, bt), expr.right.span, op.value)
            return (a & b if op is ast.BinaryOp.AND else a | b), SemType.BOOL
        if op in (ast.BinaryOp.EQ, ast.BinaryOp.NE) and at is SemType.BOOL and bt is SemType.BOOL:
            return int((a == b) == (op is ast.BinaryOp.EQ)), SemType.BOOL
        self._word((a, at), expr.left.span, op.value)
        self._word((b, bt), expr.right.span, op.value)
        ty = join_words(at, bt)
        if ty is None:
            self.report.error(
                codes.TYPE_MISMATCH,
                f"`{op.value}` on different types: `{at.value}` and `{bt.value}`",
                expr.span,
                hint="convert one side with `as u32` or `as i32`",
            )
            raise _Reported
        if op in _COMPARE:
            view = SemType.I32 if ty is SemType.I32 else SemType.U32
            return int(_COMPARE[op](to_view(a, view), to_view(b, view))), SemType.BOOL
        if op is ast.BinaryOp.ADD:
            return self._fit(a + b, ty, expr.span)
        if op is ast.BinaryOp.SUB:
            return self._fit(a - b, ty, expr.span)
        if op is ast.BinaryOp.MUL:
            return self._fit(a * b, ty, expr.span)
        if op is ast.BinaryOp.BIT_AND:
            return self._fit(a & b, ty, expr.span)
        if op is ast.BinaryOp.BIT_OR:
            return self._fit(a | b, ty, expr.span)
        if op is ast.BinaryOp.BIT_XOR:
            return self._fit(a ^ b, ty, expr.span)
        if op is ast.BinaryOp.SHL:
            return self._fit(a << (b & 31), ty, expr.span)
        if ty is SemType.I32:
            self.report.error(
                codes.ARITH_SHIFT,
                "arithmetic shift is not supported; cast to u32",
                expr.span,
                hint="`(x as u32) >> n` shifts in zeros",
            )
            raise _Reported
        return (a & WORD_MASK) >> (b & 31), ty

    def _call(
        self, module: str, expr: ast.Call, loops: Mapping[str, int], is_local: IsLocal
    ) -> Value:
        if expr.func in ("min", "max") and len(expr.args) == 2:
            (a, at), (b, bt) = (self._eval(module, x, loops, is_local) for x in expr.args)
            self._word((a, at), expr.args[0].span, expr.func)
            self._word((b, bt), expr.args[1].span, expr.func)
            ty = join_words(at, bt)
            if ty is None:
                self.report.error(
                    codes.TYPE_MISMATCH,
                    f"`{expr.func}` on different types: `{at.value}` and `{bt.value}`",
                    expr.span,
                )
                raise _Reported
            view = SemType.I32 if ty is SemType.I32 else SemType.U32
            pick = min if expr.func == "min" else max
            chosen = pick((a, b), key=lambda v: to_view(v, view))
            return chosen, ty
        if expr.func == "select" and len(expr.args) == 3:
            c, ct = self._eval(module, expr.args[0], loops, is_local)
            self._bool((c, ct), expr.args[0].span, "select")
            yes = self._eval(module, expr.args[1], loops, is_local)
            no = self._eval(module, expr.args[2], loops, is_local)
            ty = yes[1] if yes[1] is no[1] else join_words(yes[1], no[1])
            if ty is None:
                self.report.error(
                    codes.TYPE_MISMATCH,
                    f"`select` arms of different types: `{yes[1].value}` and `{no[1].value}`",
                    expr.span,
                )
                raise _Reported
            return (yes[0] if c else no[0]), ty
        raise _NotConstant(expr.span, f"`{expr.func}(...)` is computed at run time")


_COMPARE: dict[ast.BinaryOp, Callable[[int, int], bool]] = {
    ast.BinaryOp.EQ: lambda a, b: a == b,
    ast.BinaryOp.NE: lambda a, b: a != b,
    ast.BinaryOp.LT: lambda a, b: a < b,
    ast.BinaryOp.LE: lambda a, b: a <= b,
    ast.BinaryOp.GT: lambda a, b: a > b,
    ast.BinaryOp.GE: lambda a, b: a >= b,
}
