"""The builtin functions of a DPF body and their calls.

Contract: :meth:`CallChecker.call` returns the type of a call (recorded by
:meth:`~dpfc.sema.expressions.ExprChecker.expr`), reporting:

* a call of anything but a builtin of :data:`BUILTINS`: an epilog action or a DPF used as a
  function (DPF5122, with ``chain f;`` as the hint for a DPF), an unknown function (DPF5114,
  suggesting builtins, actions and ``push``);
* arity (DPF5115) and the types of ``min``, ``max``, ``select`` and ``hash``;
* ``fetch_*`` on an array element (DPF5116), an access of the per-path rules;
* ``hash<k>`` with a constant lane that the profile has a hash function for (DPF5117),
  evaluated per iteration of the enclosing loops;
* and remembers the first ``peek()`` for the stack depth (DPF5209, :mod:`.statements`).
"""

from __future__ import annotations

from typing import Protocol

from dpfc.catalog import codes
from dpfc.diagnostics import did_you_mean
from dpfc.sema.resolve import DpfInfo, MemoryInfo, describe
from dpfc.sema.scopes import BodyState
from dpfc.sema.types import SemType, assignable, cast_hint, join_words
from dpfc.syntax import ACTION_NAMES, ast

FETCH_BUILTINS = ("fetch_add", "fetch_and", "fetch_or", "fetch_max", "fetch_min")
BUILTINS: dict[str, int] = {
    "min": 2,
    "max": 2,
    "select": 3,
    "hash": 1,
    "rand": 0,
    "peek": 0,
    **dict.fromkeys(FETCH_BUILTINS, 2),
}

# How each builtin and epilog action is written, for a name used without its parentheses
# (`drop;`, `let r = rand;`): "did you mean `drop()`?".
CALL_FORMS: dict[str, str] = {
    **{name: f"{name}()" for name in ACTION_NAMES},
    "forward": "forward(port)",
    "multicast": "multicast(group)",
    "set_port": "set_port(port)",
    "min": "min(a, b)",
    "max": "max(a, b)",
    "select": "select(c, a, b)",
    "hash": "hash<k>(x)",
    "rand": "rand()",
    "peek": "peek()",
    **{name: f"{name}(a[i], v)" for name in FETCH_BUILTINS},
}


class ExpressionTyper(Protocol):
    """What the call checker asks of the expression checker that holds it: the type of an
    argument, the array of an element ``a[i]``."""

    def expr(self, expr: ast.Expr) -> SemType: ...

    def index_target(self, expr: ast.Index) -> MemoryInfo | None: ...


class CallChecker:
    """Checks the calls of one DPF body (see the module docstring), its arguments typed by
    the expression checker that holds it."""

    def __init__(self, state: BodyState, exprs: ExpressionTyper) -> None:
        self.state = state
        self.exprs = exprs

    def call(self, expr: ast.Call) -> SemType:
        func = expr.func
        if func not in BUILTINS:
            for arg in expr.args:
                self.exprs.expr(arg)
            self.unknown_call(expr)
            return SemType.ERROR
        arity = BUILTINS[func]
        if len(expr.args) != arity:
            for arg in expr.args:
                self.exprs.expr(arg)
            self.state.report.error(
                codes.ARGUMENT_COUNT,
                f"`{func}` takes {arity} argument{'s' if arity != 1 else ''}, got {len(expr.args)}",
                expr.span,
            )
            return SemType.ERROR
        if func in FETCH_BUILTINS:
            return self.fetch(expr)
        args = [self.exprs.expr(arg) for arg in expr.args]
        if SemType.ERROR in args:
            return SemType.ERROR
        if func in ("min", "max"):
            for arg, ty in zip(expr.args, args, strict=True):
                if ty is SemType.BOOL:
                    self.state.report.error(
                        codes.OPERAND_TYPE, f"`{func}` needs words, found `bool`", arg.span
                    )
                    return SemType.ERROR
            joined = join_words(args[0], args[1])
            if joined is None:
                self.state.report.error(
                    codes.TYPE_MISMATCH,
                    f"`{func}` on different types: {args[0].describe()} and {args[1].describe()}",
                    expr.span,
                )
                return SemType.ERROR
            return joined
        if func == "select":
            if args[0] is not SemType.BOOL:
                self.state.report.error(
                    codes.OPERAND_TYPE,
                    f"the condition of `select` must be `bool`, found {args[0].describe()}",
                    expr.args[0].span,
                )
            else:
                self.state.ctx.lints.condition(
                    self.state.module,
                    expr.args[0],
                    self.state.is_variable,
                    "this `select` condition",
                )
            if args[1] is SemType.BOOL or args[2] is SemType.BOOL:
                if args[1] is not args[2]:
                    self.state.report.error(
                        codes.TYPE_MISMATCH,
                        f"`select` arms of different types: {args[1].describe()} and "
                        f"{args[2].describe()}",
                        expr.span,
                    )
                    return SemType.ERROR
                return SemType.BOOL
            joined = join_words(args[1], args[2])
            if joined is None:
                self.state.report.error(
                    codes.TYPE_MISMATCH,
                    f"`select` arms of different types: {args[1].describe()} and "
                    f"{args[2].describe()}",
                    expr.span,
                )
                return SemType.ERROR
            return joined
        if func == "hash":
            self.hash_lane(expr)
            if args[0] not in (SemType.U32, SemType.INT):
                self.state.report.error(
                    codes.OPERAND_TYPE,
                    f"`hash` takes a `u32`, found {args[0].describe()}",
                    expr.args[0].span,
                    hint="convert with `as u32`",
                )
            return SemType.U32
        if func == "peek" and self.state.peek is None:
            self.state.peek = expr.span
        return SemType.U32  # rand, peek

    def hash_lane(self, expr: ast.Call) -> None:
        if len(expr.type_args) != 1:
            self.state.report.error(
                codes.ARGUMENT_COUNT, "`hash` takes one lane: `hash<k>(x)`", expr.span
            )
            return
        lane = expr.type_args[0]
        self.state.ctx.lints.shifts_in(self.state.module, lane, self.state.loop_values())
        result = self.state.ctx.consts.eval(
            self.state.module,
            lane,
            self.state.loop_values(),
            self.state.is_local,
            what="a hash lane",
        )
        if result is None:
            return
        # `hash<k>` is lane k's CRC unit: k names a lane that has a hash function (a profile
        # may list more functions than it has lanes; scheduling would fail with DPF6002).
        count = min(len(self.state.profile.hash_functions), self.state.profile.lanes)
        if result[1] is SemType.BOOL or not 0 <= result[0] < count:
            self.state.report.error(
                codes.HASH_LANE,
                f"hash lane {result[0]} is out of range: `hash<k>` takes k in 0 .. {count - 1}",
                lane.span,
                hint=f"the lanes of {self.state.profile.name}: "
                + ", ".join(
                    f"{k} = {n}" for k, n in enumerate(self.state.profile.hash_functions[:count])
                ),
            )

    def fetch(self, expr: ast.Call) -> SemType:
        target, value = expr.args
        if not isinstance(target, ast.Index):
            self.exprs.expr(target)
            self.exprs.expr(value)
            self.state.report.error(
                codes.FETCH_TARGET,
                f"the first argument of `{expr.func}` must be an array element: "
                f"`{expr.func}(a[i], v)`",
                target.span,
            )
            return SemType.ERROR
        memory = self.exprs.index_target(target)
        self.state.ctx.types[id(target)] = memory.elem if memory is not None else SemType.ERROR
        ty = self.exprs.expr(value)
        if memory is None:
            return SemType.ERROR
        if not assignable(ty, memory.elem):
            self.state.report.error(
                codes.TYPE_MISMATCH,
                f"`{target.array.text}` holds `{memory.elem.value}` words but the value is "
                f"{ty.describe()}",
                value.span,
                hint=cast_hint(ty, memory.elem),
            )
        self.state.access(memory, target.array.text, target.span)
        return memory.elem

    def unknown_call(self, expr: ast.Call) -> None:
        func = expr.func
        if func in ACTION_NAMES:
            self.state.report.error(
                codes.NOT_CALLABLE,
                f"`{func}` is an epilog action: a statement of its own, not a value",
                expr.span,
            )
            return
        local = self.state.local(func)
        item = self.state.ctx.tables[self.state.module].item(func)
        if local is None and isinstance(item, DpfInfo):
            self.state.report.error(
                codes.NOT_CALLABLE,
                f"`{func}` is a DPF: DPFs do not call each other",
                expr.span,
                hint=f"to run it after this one: `chain {func};`",
            )
            return
        if local is not None or item is not None:
            what = "a local" if local is not None or item is None else describe(item)
            self.state.report.error(
                codes.NOT_CALLABLE, f"`{func}` is {what}, not a function", expr.span
            )
            return
        # A misspelt action or `push` statement parses as a call too: suggest those as well.
        self.state.report.error(
            codes.UNKNOWN_FUNCTION,
            f"unknown function `{func}`",
            expr.span,
            hint=did_you_mean(func, [*BUILTINS, *ACTION_NAMES, "push"])
            or "builtins: " + ", ".join(BUILTINS),
        )
