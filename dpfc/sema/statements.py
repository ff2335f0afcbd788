"""The statements of a DPF body, walked in execution order: the body checker.

Contract: ``BodyChecker(ctx, dpf).run()`` checks the body of ``dpf`` (its expressions
through :mod:`.expressions` and :mod:`.calls`), reports into ``ctx.report`` and adds the
body's types and ``chain`` edges to ``ctx``. The body is walked with ``for`` loops unrolled:
each iteration sees its loop variable's value, so ``hash<i>`` and nested bounds are checked
per iteration (a mistake found in several iterations is reported once). It checks:

* ``let`` (block-scoped, :mod:`.scopes`) and assignments only to ``let`` locals (DPF5119,
  DPF5120), with the value's type fitting the local's or the array's;
* conditions of type ``bool``; ``for`` bounds constant (DPF5207), at most
  :data:`MAX_ITERATIONS` iterations (DPF5208) and :data:`MAX_UNROLLED` unrolled loop bodies
  per DPF (DPF5219);
* epilog actions: arity, word values, and an ``@egress`` DPF steers only ``pass()`` or
  ``drop()`` (DPF5222: the output port is chosen before the egress runs; docs/isa.md §6
  item 20);
* ``chain`` to a DPF that exists (DPF5205) of the chaining DPF's pipeline (DPF5223);
* the per-path rules of :mod:`.paths` (RMT, one steering / drop_code / chain, pushes; a
  warning for unreachable code), told of each statement, ``if`` fork and join and ``return``;
* the stack depth: parameters + ``peek()`` (DPF5209), one register per parameter (DPF5225);
* and tells the lints (:mod:`.lints`, warnings) of each condition, each loop's range and,
  once the body is walked, which locals and parameters it read.
"""

from __future__ import annotations

import contextlib

from dpfc.catalog import codes
from dpfc.diagnostics import Note, did_you_mean
from dpfc.sema.expressions import ExprChecker
from dpfc.sema.resolve import DpfInfo, MemoryInfo, describe
from dpfc.sema.scopes import BodyContext, BodyState, Edge, Local
from dpfc.sema.types import SemType, assignable, cast_hint, concrete, from_ast
from dpfc.syntax import ast

MAX_ITERATIONS = 64
# What an egress DPF may choose: the port is already decided (docs/isa.md §6 item 20).
EGRESS_STEERING = frozenset({"pass", "drop"})
# Unrolled copies of loop bodies per DPF: nested loops multiply.
MAX_UNROLLED = 4096
STEER_WITH_VALUE = frozenset({"forward", "multicast", "set_port"})


class _Budget(Exception):
    """The unrolling budget ran out (reported where it did): stop walking the body."""


class BodyChecker:
    """Checks one DPF body (see the module docstring): its statements here, its expressions
    by the :class:`~dpfc.sema.expressions.ExprChecker` it holds, over one
    :class:`~dpfc.sema.scopes.BodyState`."""

    def __init__(self, ctx: BodyContext, dpf: DpfInfo) -> None:
        self.state = BodyState(ctx, dpf)
        self.exprs = ExprChecker(self.state)

    def run(self) -> None:
        decl = self.state.dpf.decl
        for param in decl.params:
            self.state.declare(Local(param.name, from_ast(param.type.name), "param", param.span))
        with contextlib.suppress(_Budget):  # reported where the budget ran out
            self.block(decl.body)
        self.stack_depth()
        self.state.ctx.lints.unused(self.state.usage)

    def stack_depth(self) -> None:
        """The parameters fit the stack (DPF5209) and the prolog's registers (DPF5225)."""
        params = self.state.dpf.decl.params
        limit = self.state.profile.stack_max_depth
        registers = self.state.profile.registers
        if len(params) > limit:
            self.state.report.error(
                codes.STACK_DEPTH,
                f"`{self.state.dpf.name}` pops {len(params)} parameters; the stack holds at most "
                f"{limit} words on {self.state.profile.name}",
                params[limit].span,
            )
        elif self.state.peek is not None and len(params) + 1 > limit:
            self.state.report.error(
                codes.STACK_DEPTH,
                f"`peek()` reads stack entry {len(params)}, below the {len(params)} "
                f"parameters; the stack holds at most {limit} words on {self.state.profile.name}",
                self.state.peek,
            )
        elif len(params) > registers:
            # The prolog POPs every parameter into a register of its own (paper §3.4: the
            # 2L registers A0..A(L-1), B0..B(L-1)); scheduling would fail with DPF6006.
            self.state.report.error(
                codes.PROLOG_REGISTERS,
                f"`{self.state.dpf.name}` takes {len(params)} parameters, but the prolog loads each "
                f"into a register and {self.state.profile.name} has {registers} "
                f"(2 per lane, {self.state.profile.lanes} lanes)",
                params[registers].span,
                hint="pass fewer parameters; pop the rest in a chained DPF",
            )

    def block(self, block: ast.Block, scope: dict[str, Local] | None = None) -> None:
        self.state.scopes.append(scope if scope is not None else {})
        try:
            for stmt in block.stmts:
                self.state.path.statement(stmt.span)
                self.stmt(stmt)
        finally:
            self.state.scopes.pop()

    def stmt(self, stmt: ast.Stmt) -> None:
        if isinstance(stmt, ast.Let):
            self.let(stmt)
        elif isinstance(stmt, ast.Assign):
            self.assign(stmt)
        elif isinstance(stmt, ast.Store):
            self.store(stmt)
        elif isinstance(stmt, ast.ExprStmt):
            if isinstance(stmt.expr, ast.Name):
                # `retrun;` parses as a name used as a statement.
                self.state.ctx.types[id(stmt.expr)] = self.exprs.name(stmt.expr, also=("return",))
            else:
                self.exprs.expr(stmt.expr)
        elif isinstance(stmt, ast.If):
            self.if_(stmt)
        elif isinstance(stmt, ast.For):
            self.for_(stmt)
        elif isinstance(stmt, ast.Push):
            for value in stmt.values:
                self.exprs.word_value(value, "a pushed value")
            self.state.path.push(len(stmt.values), stmt.span)
        elif isinstance(stmt, ast.Action):
            self.action(stmt)
        elif isinstance(stmt, ast.Chain):
            self.chain(stmt)
        elif isinstance(stmt, ast.Return):
            self.state.path.end()
        else:  # pragma: no cover - the Stmt union is closed
            raise AssertionError(f"unknown statement {stmt!r}")

    def let(self, stmt: ast.Let) -> None:
        ty = self.exprs.expr(stmt.value)
        declared = from_ast(stmt.type.name) if stmt.type is not None else None
        if declared is not None and not assignable(ty, declared):
            self.state.report.error(
                codes.TYPE_MISMATCH,
                f"`{stmt.name}` is declared `{declared.value}` but the value is {ty.describe()}",
                stmt.value.span,
                hint=cast_hint(ty, declared),
            )
        final = declared if declared is not None else concrete(ty)
        self.state.declare(Local(stmt.name, final, "let", stmt.span))

    def assign(self, stmt: ast.Assign) -> None:
        ty = self.exprs.expr(stmt.value)
        local = self.state.local(stmt.name)
        if local is None:
            item = self.state.ctx.tables[self.state.module].item(stmt.name)
            if item is not None:
                self.state.report.error(
                    codes.ASSIGN_NOT_LOCAL,
                    f"cannot assign to {_bare(describe(item))} `{stmt.name}`: only `let` locals can "
                    "be reassigned",
                    stmt.span,
                    hint="store into an element: `a[i] = v;`"
                    if isinstance(item, MemoryInfo)
                    else None,
                )
            else:
                self.state.report.error(
                    codes.ASSIGN_UNDECLARED,
                    f"assignment to undeclared `{stmt.name}`",
                    stmt.span,
                    hint=did_you_mean(stmt.name, self.state.visible("let"))
                    or f"declare it first: `let {stmt.name} = ...;`",
                )
            return
        if local.kind != "let":
            what = "parameter" if local.kind == "param" else "loop variable"
            self.state.report.error(
                codes.ASSIGN_NOT_LOCAL,
                f"cannot assign to {what} `{stmt.name}`",
                stmt.span,
                notes=(Note(f"`{stmt.name}` is declared here", local.span),),
                hint=f"copy it into a local: `let my_{stmt.name} = {stmt.name};`"
                if local.kind == "param"
                else None,
            )
            return
        self.state.usage.assign(local.span)
        if not assignable(ty, local.type):
            self.state.report.error(
                codes.TYPE_MISMATCH,
                f"`{stmt.name}` is `{local.type.value}` but the value is {ty.describe()}",
                stmt.value.span,
                notes=(Note(f"`{stmt.name}` is declared here", local.span),),
                hint=cast_hint(ty, local.type),
            )

    def store(self, stmt: ast.Store) -> None:
        memory = self.exprs.index_target(stmt.target)
        ty = self.exprs.expr(stmt.value)
        if memory is None:
            return
        if not assignable(ty, memory.elem):
            self.state.report.error(
                codes.TYPE_MISMATCH,
                f"`{stmt.target.array.text}` holds `{memory.elem.value}` words but the value "
                f"is {ty.describe()}",
                stmt.value.span,
                hint=cast_hint(ty, memory.elem),
            )
        self.state.access(memory, stmt.target.array.text, stmt.target.span)

    def if_(self, stmt: ast.If) -> None:
        self.condition(stmt.cond)
        before = self.state.path.fork()
        self.block(stmt.then)
        after_then = self.state.path
        self.state.path = before
        if isinstance(stmt.orelse, ast.If):
            self.if_(stmt.orelse)
        elif isinstance(stmt.orelse, ast.Block):
            self.block(stmt.orelse)
        # Join: the paths through `then` and through `else`.
        self.state.path.merge(after_then)
        self.state.path.unreachable_reported = False

    def condition(self, cond: ast.Expr) -> None:
        ty = self.exprs.expr(cond)
        if ty not in (SemType.BOOL, SemType.ERROR):
            self.state.report.error(
                codes.OPERAND_TYPE,
                f"a condition must be `bool`, found {ty.describe()}",
                cond.span,
                hint="compare explicitly: `x != 0`",
            )
        elif ty is SemType.BOOL:
            self.state.ctx.lints.condition(
                self.state.module, cond, self.state.is_variable, "this condition"
            )

    def for_(self, stmt: ast.For) -> None:
        bounds: list[int] = []
        for bound in (stmt.start, stmt.end):
            if not self.state.ctx.consts.is_constant(
                self.state.module, bound, self.state.loop_values(), self.state.is_local
            ):
                # Say why in terms of loops; the generic message would not name the rule
                # (unless the bound has an error of its own, such as an unknown name).
                if self.exprs.expr(bound) is SemType.ERROR:
                    return
                self.state.report.error(
                    codes.LOOP_NOT_CONSTANT,
                    "unbounded loop: `for` bounds must be constant expressions",
                    bound.span,
                    hint="loops are unrolled, so the number of iterations must be known "
                    "when compiling",
                )
                return
            result = self.state.ctx.consts.eval(
                self.state.module,
                bound,
                self.state.loop_values(),
                self.state.is_local,
                what="a loop bound",
            )
            if result is None:
                return
            if result[1] is SemType.BOOL:
                self.state.report.error(
                    codes.OPERAND_TYPE, "a loop bound is a word, not `bool`", bound.span
                )
                return
            bounds.append(result[0])
            self.state.ctx.lints.shifts_in(self.state.module, bound, self.state.loop_values())
        start, end = bounds
        lints = self.state.ctx.lints
        fixed = all(
            lints.fold(self.state.module, bound, {}, self.state.is_variable) is not None
            for bound in (stmt.start, stmt.end)
        )
        lints.empty_loop(stmt, (start, end), fixed)
        count = max(0, end - start)
        if count > MAX_ITERATIONS:
            self.state.report.error(
                codes.LOOP_TOO_LONG,
                f"this loop runs {count} times; loops are unrolled and may run at most "
                f"{MAX_ITERATIONS} times",
                stmt.span,
            )
            return
        for value in range(start, end):
            self.state.unrolled += 1
            if self.state.unrolled > MAX_UNROLLED:
                self.state.report.error(
                    codes.UNROLL_BUDGET,
                    f"unrolling the loops of `{self.state.dpf.name}` makes more than {MAX_UNROLLED} "
                    "copies of loop bodies",
                    stmt.span,
                    hint="nested loops multiply: make them shorter",
                )
                raise _Budget
            if not self.state.path.live:
                break  # a `return` in the body ends the unrolling; the rest is not code
            scope = {stmt.var: Local(stmt.var, SemType.INT, "loop", stmt.span, value)}
            self.block(stmt.body, scope)

    def action(self, stmt: ast.Action) -> None:
        name = stmt.name
        wants = 1 if name in STEER_WITH_VALUE else 0
        if len(stmt.args) != wants:
            example = f"`{name}(v)`" if wants else f"`{name}()`"
            self.state.report.error(
                codes.ARGUMENT_COUNT,
                f"`{name}` takes {wants} argument{'s' if wants != 1 else ''}, got "
                f"{len(stmt.args)}: {example}",
                stmt.span,
            )
        for arg in stmt.args:
            self.exprs.word_value(arg, f"the value of `{name}`")
        if name == "drop_code":
            self.state.path.set_drop_code(stmt.span)
            return
        if self.state.dpf.pipeline == "egress" and name not in EGRESS_STEERING:
            self.state.report.error(
                codes.EGRESS_STEERING,
                f"`{name}` in egress DPF `{self.state.dpf.name}`: the egress pipeline runs after the "
                "output port is chosen, so an egress DPF can only pass or drop the packet",
                stmt.span,
                hint="steer the packet in an ingress DPF; here use `pass()` or `drop()`",
            )
        self.state.path.steering(name, stmt.span)

    def chain(self, stmt: ast.Chain) -> None:
        target = self.chain_target(stmt.target)
        if target is not None:
            self.state.ctx.chains.append(Edge(self.state.dpf, target, stmt.span))
            if target.pipeline != self.state.dpf.pipeline:
                # NEXT_PC rewrites the pointer of the pipeline the DPF runs in (dpf_ptr in
                # the ingress, egress_ptr in the egress): the next switch runs the target
                # in that same pipeline.
                self.state.report.error(
                    codes.CHAIN_PIPELINE,
                    f"`chain {stmt.target.text}`: `{self.state.dpf.name}` is an {self.state.dpf.pipeline} "
                    f"DPF and `{target.name}` an {target.pipeline} DPF; a chain sets the "
                    f"{self.state.dpf.pipeline} pointer, so it names a DPF of the same pipeline",
                    stmt.target.span,
                    notes=(Note(f"`{target.name}` is declared here", target.decl.span),),
                )
        self.state.path.set_chain(stmt.span)

    def chain_target(self, name: ast.Name) -> DpfInfo | None:
        info = self.state.ctx.tables[self.state.module]
        if len(name.parts) == 1:
            item = info.item(name.parts[0])
        else:
            head = ".".join(name.parts[:-1])
            ref = info.imports.get(head)
            if ref is None:
                self.state.report.error(
                    codes.CHAIN_UNKNOWN,
                    f"`chain {name.text}`: no imported module `{head}`",
                    name.span,
                    hint=self.state.ctx.resolver.module_hint(self.state.module, head),
                )
                return None
            info = self.state.ctx.tables[ref.key]
            item = info.item(name.parts[-1])
        if isinstance(item, DpfInfo):
            return item
        if item is None:
            prefix = "".join(f"{part}." for part in name.parts[:-1])
            self.state.report.error(
                codes.CHAIN_UNKNOWN,
                f"`chain {name.text}`: no DPF named `{name.text}`",
                name.span,
                hint=did_you_mean(name.parts[-1], info.dpfs, prefix=prefix),
            )
        else:
            self.state.report.error(
                codes.CHAIN_UNKNOWN,
                f"`chain {name.text}`: `{name.text}` is {describe(item)}, not a DPF",
                name.span,
            )
        return None


def _bare(description: str) -> str:
    """``an array`` -> ``array``."""
    return description.split(" ", 1)[1]
