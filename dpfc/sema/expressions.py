"""The expressions of a DPF body: their names and types.

Contract: :meth:`ExprChecker.expr` returns the :class:`~dpfc.sema.types.SemType` of an
expression and records it in :attr:`BodyContext.types <dpfc.sema.scopes.BodyContext.types>`
(by ``id`` of the node: the lowering reads it), reporting:

* names (DPF51xx): a local, a parameter, a constant, or ``module.item``; an array, a DPF
  or a module used as a value is DPF5107 with a hint of what to write instead;
* ``arr[i]``: an array (not a local or another item) indexed by its key type; each element
  read is one access of the per-path rules (:mod:`.paths`);
* ``meta.F`` a metadata field of the profile (DPF5118);
* types (:mod:`.types`): word operators on words of one type (an integer literal adapts),
  ``&& || !`` on ``bool``, compares of same-typed operands, ``>>`` not on ``i32``
  (DPF5110), ``*`` with a constant operand (DPF5113: SwitchVM has no multiplier), casts;
* a builtin or an action named without its parentheses (``drop;``: DPF5101 with the call
  as the hint);

and it tells the lints (:mod:`.lints`) of each read of a local, each index, shift and
comparison.

An operand already reported is :attr:`SemType.ERROR`, which every operator accepts silently,
so one mistake is reported once. Calls are typed by the :class:`~dpfc.sema.calls.CallChecker`
it holds (:mod:`.calls`).
"""

from __future__ import annotations

from dpfc.catalog import codes
from dpfc.diagnostics import did_you_mean
from dpfc.sema.calls import CALL_FORMS, CallChecker
from dpfc.sema.consteval import Value
from dpfc.sema.resolve import ConstInfo, DpfInfo, MemoryInfo, describe
from dpfc.sema.scopes import BodyState
from dpfc.sema.types import SemType, assignable, cast_hint, from_ast, join_words
from dpfc.syntax import ast

_BOOL_RESULT = frozenset(
    {
        ast.BinaryOp.EQ,
        ast.BinaryOp.NE,
        ast.BinaryOp.LT,
        ast.BinaryOp.LE,
        ast.BinaryOp.GT,
        ast.BinaryOp.GE,
        ast.BinaryOp.AND,
        ast.BinaryOp.OR,
    }
)


class ExprChecker:
    """Types the expressions of one DPF body (see the module docstring); its calls are
    typed by the :class:`~dpfc.sema.calls.CallChecker` it holds."""

    def __init__(self, state: BodyState) -> None:
        self.state = state
        self.calls = CallChecker(state, self)

    def word_value(self, expr: ast.Expr, what: str) -> None:
        ty = self.expr(expr)
        if ty is SemType.BOOL:
            self.state.report.error(
                codes.OPERAND_TYPE,
                f"{what} must be a word, found `bool`",
                expr.span,
                hint="convert with `as u32`",
            )

    def expr(self, expr: ast.Expr) -> SemType:
        ty = self._expr(expr)
        self.state.ctx.types[id(expr)] = ty
        return ty

    def _expr(self, expr: ast.Expr) -> SemType:
        if isinstance(expr, ast.IntLit):
            return SemType.INT
        if isinstance(expr, ast.BoolLit):
            return SemType.BOOL
        if isinstance(expr, ast.Name):
            return self.name(expr)
        if isinstance(expr, ast.Meta):
            if self.state.profile.metadata_by_name(expr.field) is None:
                self.state.report.error(
                    codes.UNKNOWN_META,
                    f"unknown metadata field `meta.{expr.field}`",
                    expr.span,
                    hint=did_you_mean(
                        expr.field, [m.name for m in self.state.profile.metadata], prefix="meta."
                    )
                    or f"{self.state.profile.name} has: "
                    + ", ".join(m.name for m in self.state.profile.metadata),
                )
                return SemType.ERROR
            return SemType.U32
        if isinstance(expr, ast.Index):
            memory = self.index_target(expr)
            if memory is None:
                return SemType.ERROR
            self.state.access(memory, expr.array.text, expr.span)
            return memory.elem
        if isinstance(expr, ast.Unary):
            return self.unary(expr)
        if isinstance(expr, ast.Binary):
            return self.binary(expr)
        if isinstance(expr, ast.Cast):
            inner = self.expr(expr.expr)
            return SemType.ERROR if inner is SemType.ERROR else from_ast(expr.type.name)
        if isinstance(expr, ast.Call):
            return self.calls.call(expr)
        raise AssertionError(f"unknown expression {expr!r}")  # pragma: no cover

    def name(self, expr: ast.Name, also: tuple[str, ...] = ()) -> SemType:
        """The type of a name used as a value (``also``: more names a misspelt one may be)."""
        if len(expr.parts) == 1:
            local = self.state.local(expr.parts[0])
            if local is not None:
                self.state.usage.use(local.span)
                return local.type
        near = [
            *self.state.visible(),
            *self.state.ctx.tables[self.state.module].value_names(),
            *also,
        ]
        form = CALL_FORMS.get(expr.text)
        if form is not None and self.state.ctx.tables[self.state.module].item(expr.text) is None:
            # `drop;`, `let r = rand;`: a builtin or an action without its parentheses.
            self.state.report.error(
                codes.UNKNOWN_NAME,
                f"unknown name `{expr.text}`",
                expr.span,
                hint=f"did you mean `{form}`?",
            )
            return SemType.ERROR
        item = self.state.ctx.resolver.lookup(self.state.module, expr, near)
        if item is None:
            return SemType.ERROR
        if isinstance(item, ConstInfo):
            result = self.state.ctx.consts.const(item, expr.span)
            return SemType.ERROR if result is None else result[1]
        hint = None
        if isinstance(item, MemoryInfo):
            hint = f"read an element: `{expr.text}[i]`"
        elif isinstance(item, DpfInfo):
            hint = f"to run it next: `chain {expr.text};`"
        self.state.report.error(
            codes.WRONG_KIND,
            f"`{expr.text}` is {describe(item)}, not a value",
            expr.span,
            hint=hint,
        )
        return SemType.ERROR

    def index_target(self, expr: ast.Index) -> MemoryInfo | None:
        """Check ``arr[i]``'s array and index (not the access itself)."""
        memories = self.state.ctx.tables[self.state.module].memories
        item = self.state.ctx.resolver.lookup(self.state.module, expr.array, memories)
        if len(expr.array.parts) == 1 and self.state.local(expr.array.parts[0]) is not None:
            item = None
            self.state.report.error(
                codes.WRONG_KIND,
                f"`{expr.array.text}` is a local, not an array",
                expr.array.span,
            )
        index_ty = self.expr(expr.index)
        self.state.ctx.types[id(expr.array)] = SemType.ERROR
        if item is not None and not isinstance(item, MemoryInfo):
            self.state.report.error(
                codes.WRONG_KIND,
                f"`{expr.array.text}` is {describe(item)}, not an array",
                expr.array.span,
            )
            return None
        if not isinstance(item, MemoryInfo):
            return None
        want = item.key_type
        if index_ty is not SemType.ERROR and not assignable(index_ty, want):
            self.state.report.error(
                codes.TYPE_MISMATCH,
                f"an index of `{expr.array.text}` is `{want.value}`, found {index_ty.describe()}",
                expr.index.span,
                hint=cast_hint(index_ty, want),
            )
        elif index_ty is not SemType.ERROR:
            self.state.ctx.lints.index(item, expr, self._fold(expr.index))
        return item

    def unary(self, expr: ast.Unary) -> SemType:
        ty = self.expr(expr.operand)
        if ty is SemType.ERROR:
            return ty
        if expr.op is ast.UnaryOp.LNOT:
            if ty is not SemType.BOOL:
                self.state.report.error(
                    codes.OPERAND_TYPE,
                    f"`!` needs a `bool`, found {ty.describe()}",
                    expr.operand.span,
                    hint="for the bitwise complement of a word use `~`",
                )
                return SemType.ERROR
            return SemType.BOOL
        if ty is SemType.BOOL:
            self.state.report.error(
                codes.OPERAND_TYPE,
                f"`{expr.op.value}` needs a word, found `bool`",
                expr.operand.span,
                hint="negate a `bool` with `!`" if expr.op is ast.UnaryOp.NOT else None,
            )
            return SemType.ERROR
        return ty

    def binary(self, expr: ast.Binary) -> SemType:
        op = expr.op
        left = self.expr(expr.left)
        right = self.expr(expr.right)
        if SemType.ERROR in (left, right):
            return SemType.BOOL if op in _BOOL_RESULT else SemType.ERROR
        if op in (ast.BinaryOp.AND, ast.BinaryOp.OR):
            for side, ty in ((expr.left, left), (expr.right, right)):
                if ty is not SemType.BOOL:
                    self.state.report.error(
                        codes.OPERAND_TYPE,
                        f"`{op.value}` needs `bool` operands, found {ty.describe()}",
                        side.span,
                        hint="compare explicitly: `x != 0`",
                    )
            return SemType.BOOL
        if op in (ast.BinaryOp.EQ, ast.BinaryOp.NE) and SemType.BOOL in (left, right):
            if left is not right:
                self._mismatch(expr, left, right)
            return SemType.BOOL
        for side, ty in ((expr.left, left), (expr.right, right)):
            if ty is SemType.BOOL:
                self.state.report.error(
                    codes.OPERAND_TYPE,
                    f"`{op.value}` needs words, found `bool`",
                    side.span,
                    hint="convert with `as u32`",
                )
                return SemType.BOOL if op in _BOOL_RESULT else SemType.ERROR
        joined = join_words(left, right)
        if joined is None:
            self._mismatch(expr, left, right)
            return SemType.BOOL if op in _BOOL_RESULT else SemType.ERROR
        if op in _BOOL_RESULT:
            self.state.ctx.lints.comparison(self.state.module, expr, joined, self.state.is_variable)
            return SemType.BOOL
        self.state.ctx.lints.shift(expr, self._fold(expr.right))
        if op is ast.BinaryOp.SHR and joined is SemType.I32:
            self.state.report.error(
                codes.ARITH_SHIFT,
                "arithmetic shift is not supported; cast to u32",
                expr.span,
                hint="`(x as u32) >> n` shifts in zeros",
            )
            return SemType.ERROR
        if op is ast.BinaryOp.MUL and not (self._constant(expr.left) or self._constant(expr.right)):
            self.state.report.error(
                codes.MUL_NEEDS_CONSTANT,
                "`*` needs a constant operand: SwitchVM has no multiplier, the compiler turns "
                "a multiplication by a constant into shifts and adds",
                expr.span,
            )
        return joined

    def _fold(self, expr: ast.Expr) -> Value | None:
        """The value of a constant operand in this unrolled copy (for the lints)."""
        return self.state.ctx.lints.fold(
            self.state.module, expr, self.state.loop_values(), self.state.is_local
        )

    def _constant(self, expr: ast.Expr) -> bool:
        return self.state.ctx.consts.is_constant(
            self.state.module, expr, self.state.loop_values(), self.state.is_local
        )

    def _mismatch(self, expr: ast.Binary, left: SemType, right: SemType) -> None:
        self.state.report.error(
            codes.TYPE_MISMATCH,
            f"`{expr.op.value}` on different types: {left.describe()} and {right.describe()}",
            expr.span,
            hint="convert one side with `as u32` or `as i32`",
        )
