"""The checker: names, types and rules of every DPF body, and the program-level checks.

Contract: :func:`check_program` takes a loaded :class:`~dpfc.sema.loader.Program` and
returns a :class:`CheckedProgram` (item tables, constant values, the type of every
expression) or raises :class:`~dpfc.diagnostics.DiagnosticError` with *all* the errors it
found, sorted by file and position. :func:`check_file` loads and checks a file.

A DPF body is walked in execution order with ``for`` loops unrolled (each iteration sees its
loop variable's value, so ``hash<i>`` and nested bounds are checked per iteration; a
mistake found in several iterations is reported once). The walk checks:

* names: locals (block-scoped, shadowing in inner blocks allowed, a second ``let`` of one
  name in one block is DPF5102), parameters, constants, arrays, ``module.item``;
* types (:mod:`.types`): word operators on words of one type (an integer literal adapts),
  ``&& || !`` and conditions on ``bool``, compares of same-typed operands, ``>>`` not on
  ``i32`` (DPF5110), ``*`` with a constant operand (DPF5113), casts;
* builtins: arity (DPF5115), ``fetch_*`` on an array element (DPF5116), ``hash<k>`` with a
  constant lane of the profile (DPF5117), ``meta.F`` of the profile (DPF5118);
* assignments only to ``let`` locals (DPF5119, DPF5120);
* ``for`` bounds constant (DPF5207) and at most :data:`MAX_ITERATIONS` iterations (DPF5208);
* the per-path rules of :mod:`.paths` (RMT, one steering / drop_code / chain, pushes; a
  warning for unreachable code) and the stack depth (parameters + ``peek()``, DPF5209);
* ``chain`` to a DPF that exists (DPF5205), and no cycle of chains (DPF5206): a DPF
  may not chain back to itself, directly or through others;
* ingress and egress (docs/isa.md §6 item 20): an ``@egress`` DPF steers only ``pass()``
  or ``drop()`` (DPF5222: the output port is chosen before the egress runs), a ``chain``
  names a DPF of the chaining DPF's pipeline (DPF5223), and an array is accessed by DPFs
  of one pipeline only (DPF5224: each pipeline has its own lane memories).
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from pathlib import Path

from dpfc.diagnostics import Diagnostic, DiagnosticError, Note, SourceFile, Span, did_you_mean
from dpfc.sema.codes import Code
from dpfc.sema.consteval import ConstEvaluator
from dpfc.sema.items import ItemChecker
from dpfc.sema.loader import Program, load_program
from dpfc.sema.paths import PathState
from dpfc.sema.report import Reporter, sort_key
from dpfc.sema.resolve import (
    ConstInfo,
    DpfInfo,
    MemoryInfo,
    ModuleInfo,
    ModuleRef,
    Resolver,
    build_tables,
    describe,
)
from dpfc.sema.types import SemType, assignable, concrete, from_ast, join_words
from dpfc.syntax import ast
from dpfc.syntax.parser import ACTION_NAMES
from dpfc.target.profile import BUILTIN_PROFILES, TargetProfile

MAX_ITERATIONS = 64
# What an egress DPF may choose: the port is already decided (docs/isa.md §6 item 20).
EGRESS_STEERING = frozenset({"pass", "drop"})
# Unrolled copies of loop bodies per DPF: nested loops multiply.
MAX_UNROLLED = 4096
STEER_WITH_VALUE = frozenset({"forward", "multicast", "set_port"})
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


@dataclass
class Edge:
    """A ``chain`` statement of ``source`` naming ``target``."""

    source: DpfInfo
    target: DpfInfo
    span: Span


@dataclass
class CheckedProgram:
    """A program that passed every check: what the lowering and the oracle need."""

    program: Program
    tables: dict[str, ModuleInfo]
    types: dict[int, SemType]
    consts: ConstEvaluator
    resolver: Resolver
    profile: TargetProfile | None = None
    chains: list[Edge] = field(default_factory=list)
    warnings: list[Diagnostic] = field(default_factory=list)

    @property
    def main(self) -> str:
        return self.program.main

    @property
    def modules(self) -> dict[str, ModuleInfo]:
        return self.tables

    @property
    def main_module(self) -> ModuleInfo:
        return self.tables[self.program.main]

    @property
    def dpfs(self) -> list[DpfInfo]:
        """The DPFs of the main module, in source order."""
        return list(self.main_module.dpfs.values())


@dataclass
class Local:
    name: str
    type: SemType
    kind: str  # "let" | "param" | "loop"
    span: Span
    value: int = 0  # a loop variable's value in the current iteration


class _Budget(Exception):
    pass


class BodyChecker:
    """Checks one DPF body (see the module docstring)."""

    def __init__(self, ctx: _Context, dpf: DpfInfo) -> None:
        self.ctx = ctx
        self.report = ctx.report
        self.dpf = dpf
        self.module = dpf.module
        self.profile = dpf.profile or BUILTIN_PROFILES["tofino1"]
        self.scopes: list[dict[str, Local]] = [{}]
        self.path = PathState(self.report, self.profile.max_push)
        self.peek: Span | None = None
        self.unrolled = 0

    # -- scopes ---------------------------------------------------------------------------

    def local(self, name: str) -> Local | None:
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        return None

    def visible(self, *kinds: str) -> list[str]:
        """The names of the locals in scope (of ``kinds``, all when none): "did you mean"."""
        return [
            name
            for scope in self.scopes
            for name, local in scope.items()
            if not kinds or local.kind in kinds
        ]

    def is_local(self, name: str) -> bool:
        found = self.local(name)
        return found is not None and found.kind != "loop"

    def loop_values(self) -> dict[str, int]:
        values: dict[str, int] = {}
        for scope in self.scopes:
            for name, local in scope.items():
                if local.kind == "loop":
                    values[name] = local.value
                else:
                    values.pop(name, None)
        return values

    def declare(self, local: Local) -> None:
        scope = self.scopes[-1]
        first = scope.get(local.name)
        if first is not None:
            what = "parameter" if first.kind == "param" else "local"
            self.report.error(
                Code.DUPLICATE,
                f"`{local.name}` is already a {what} of this block",
                local.span,
                notes=(Note(f"`{local.name}` is first declared here", first.span),),
                hint="reassign it (`x = e;`) or use another name",
            )
        scope[local.name] = local

    # -- the DPF --------------------------------------------------------------------------

    def run(self) -> None:
        decl = self.dpf.decl
        for param in decl.params:
            self.declare(Local(param.name, from_ast(param.type.name), "param", param.span))
        with contextlib.suppress(_Budget):  # reported where the budget ran out
            self.block(decl.body)
        self.stack_depth()

    def access(self, memory: MemoryInfo, name: str, span: Span) -> None:
        """One access of ``memory`` on the current path (the RMT rule), and the first access
        of this DPF, for the one-pipeline-per-array check (DPF5224)."""
        self.path.access(memory.ir_name, name, span)
        users = self.ctx.array_users.setdefault(memory.ir_name, [])
        if not any(user.dpf is self.dpf for user in users):
            users.append(_ArrayUse(self.dpf, name, span))

    def stack_depth(self) -> None:
        """The parameters fit the stack (DPF5209) and the prolog's registers (DPF5225)."""
        params = self.dpf.decl.params
        limit = self.profile.stack_max_depth
        registers = self.profile.registers
        if len(params) > limit:
            self.report.error(
                Code.STACK_DEPTH,
                f"`{self.dpf.name}` pops {len(params)} parameters; the stack holds at most "
                f"{limit} words on {self.profile.name}",
                params[limit].span,
            )
        elif self.peek is not None and len(params) + 1 > limit:
            self.report.error(
                Code.STACK_DEPTH,
                f"`peek()` reads stack entry {len(params)}, below the {len(params)} "
                f"parameters; the stack holds at most {limit} words on {self.profile.name}",
                self.peek,
            )
        elif len(params) > registers:
            # The prolog POPs every parameter into a register of its own (paper §3.4: the
            # 2L registers A0..A(L-1), B0..B(L-1)); scheduling would fail with DPF6006.
            self.report.error(
                Code.PROLOG_REGISTERS,
                f"`{self.dpf.name}` takes {len(params)} parameters, but the prolog loads each "
                f"into a register and {self.profile.name} has {registers} "
                f"(2 per lane, {self.profile.lanes} lanes)",
                params[registers].span,
                hint="pass fewer parameters; pop the rest in a chained DPF",
            )

    # -- statements -----------------------------------------------------------------------

    def block(self, block: ast.Block, scope: dict[str, Local] | None = None) -> None:
        self.scopes.append(scope if scope is not None else {})
        try:
            for stmt in block.stmts:
                self.path.statement(stmt.span)
                self.stmt(stmt)
        finally:
            self.scopes.pop()

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
                self.ctx.types[id(stmt.expr)] = self.name(stmt.expr, also=("return",))
            else:
                self.expr(stmt.expr)
        elif isinstance(stmt, ast.If):
            self.if_(stmt)
        elif isinstance(stmt, ast.For):
            self.for_(stmt)
        elif isinstance(stmt, ast.Push):
            for value in stmt.values:
                self.word_value(value, "a pushed value")
            self.path.push(len(stmt.values), stmt.span)
        elif isinstance(stmt, ast.Action):
            self.action(stmt)
        elif isinstance(stmt, ast.Chain):
            self.chain(stmt)
        elif isinstance(stmt, ast.Return):
            self.path.end()
        else:  # pragma: no cover - the Stmt union is closed
            raise AssertionError(f"unknown statement {stmt!r}")

    def let(self, stmt: ast.Let) -> None:
        ty = self.expr(stmt.value)
        declared = from_ast(stmt.type.name) if stmt.type is not None else None
        if declared is not None and not assignable(ty, declared):
            self.report.error(
                Code.TYPE_MISMATCH,
                f"`{stmt.name}` is declared `{declared.value}` but the value is {ty.describe()}",
                stmt.value.span,
                hint=_cast_hint(ty, declared),
            )
        final = declared if declared is not None else concrete(ty)
        self.declare(Local(stmt.name, final, "let", stmt.span))

    def assign(self, stmt: ast.Assign) -> None:
        ty = self.expr(stmt.value)
        local = self.local(stmt.name)
        if local is None:
            item = self.ctx.tables[self.module].item(stmt.name)
            if item is not None:
                self.report.error(
                    Code.ASSIGN_NOT_LOCAL,
                    f"cannot assign to {_bare(describe(item))} `{stmt.name}`: only `let` locals can "
                    "be reassigned",
                    stmt.span,
                    hint="store into an element: `a[i] = v;`"
                    if isinstance(item, MemoryInfo)
                    else None,
                )
            else:
                self.report.error(
                    Code.ASSIGN_UNDECLARED,
                    f"assignment to undeclared `{stmt.name}`",
                    stmt.span,
                    hint=did_you_mean(stmt.name, self.visible("let"))
                    or f"declare it first: `let {stmt.name} = ...;`",
                )
            return
        if local.kind != "let":
            what = "parameter" if local.kind == "param" else "loop variable"
            self.report.error(
                Code.ASSIGN_NOT_LOCAL,
                f"cannot assign to {what} `{stmt.name}`",
                stmt.span,
                notes=(Note(f"`{stmt.name}` is declared here", local.span),),
                hint=f"copy it into a local: `let my_{stmt.name} = {stmt.name};`"
                if local.kind == "param"
                else None,
            )
            return
        if not assignable(ty, local.type):
            self.report.error(
                Code.TYPE_MISMATCH,
                f"`{stmt.name}` is `{local.type.value}` but the value is {ty.describe()}",
                stmt.value.span,
                notes=(Note(f"`{stmt.name}` is declared here", local.span),),
                hint=_cast_hint(ty, local.type),
            )

    def store(self, stmt: ast.Store) -> None:
        memory = self.index_target(stmt.target)
        ty = self.expr(stmt.value)
        if memory is None:
            return
        if not assignable(ty, memory.elem):
            self.report.error(
                Code.TYPE_MISMATCH,
                f"`{stmt.target.array.text}` holds `{memory.elem.value}` words but the value "
                f"is {ty.describe()}",
                stmt.value.span,
                hint=_cast_hint(ty, memory.elem),
            )
        self.access(memory, stmt.target.array.text, stmt.target.span)

    def if_(self, stmt: ast.If) -> None:
        self.condition(stmt.cond)
        before = self.path.fork()
        self.block(stmt.then)
        after_then = self.path
        self.path = before
        if isinstance(stmt.orelse, ast.If):
            self.if_(stmt.orelse)
        elif isinstance(stmt.orelse, ast.Block):
            self.block(stmt.orelse)
        # Join: the paths through `then` and through `else`.
        self.path.merge(after_then)
        self.path.unreachable_reported = False

    def condition(self, cond: ast.Expr) -> None:
        ty = self.expr(cond)
        if ty not in (SemType.BOOL, SemType.ERROR):
            self.report.error(
                Code.OPERAND_TYPE,
                f"a condition must be `bool`, found {ty.describe()}",
                cond.span,
                hint="compare explicitly: `x != 0`",
            )

    def for_(self, stmt: ast.For) -> None:
        bounds: list[int] = []
        for bound in (stmt.start, stmt.end):
            if not self.ctx.consts.is_constant(
                self.module, bound, self.loop_values(), self.is_local
            ):
                # Say why in terms of loops; the generic message would not name the rule
                # (unless the bound has an error of its own, such as an unknown name).
                if self.expr(bound) is SemType.ERROR:
                    return
                self.report.error(
                    Code.LOOP_NOT_CONSTANT,
                    "unbounded loop: `for` bounds must be constant expressions",
                    bound.span,
                    hint="loops are unrolled, so the number of iterations must be known "
                    "when compiling",
                )
                return
            result = self.ctx.consts.eval(
                self.module, bound, self.loop_values(), self.is_local, what="a loop bound"
            )
            if result is None:
                return
            if result[1] is SemType.BOOL:
                self.report.error(
                    Code.OPERAND_TYPE, "a loop bound is a word, not `bool`", bound.span
                )
                return
            bounds.append(result[0])
        start, end = bounds
        count = max(0, end - start)
        if count > MAX_ITERATIONS:
            self.report.error(
                Code.LOOP_TOO_LONG,
                f"this loop runs {count} times; loops are unrolled and may run at most "
                f"{MAX_ITERATIONS} times",
                stmt.span,
            )
            return
        for value in range(start, end):
            self.unrolled += 1
            if self.unrolled > MAX_UNROLLED:
                self.report.error(
                    Code.UNROLL_BUDGET,
                    f"unrolling the loops of `{self.dpf.name}` makes more than {MAX_UNROLLED} "
                    "copies of loop bodies",
                    stmt.span,
                    hint="nested loops multiply: make them shorter",
                )
                raise _Budget
            if not self.path.live:
                break  # a `return` in the body ends the unrolling; the rest is not code
            scope = {stmt.var: Local(stmt.var, SemType.INT, "loop", stmt.span, value)}
            self.block(stmt.body, scope)

    def action(self, stmt: ast.Action) -> None:
        name = stmt.name
        wants = 1 if name in STEER_WITH_VALUE else 0
        if len(stmt.args) != wants:
            example = f"`{name}(v)`" if wants else f"`{name}()`"
            self.report.error(
                Code.ARITY,
                f"`{name}` takes {wants} argument{'s' if wants != 1 else ''}, got "
                f"{len(stmt.args)}: {example}",
                stmt.span,
            )
        for arg in stmt.args:
            self.word_value(arg, f"the value of `{name}`")
        if name == "drop_code":
            self.path.set_drop_code(stmt.span)
            return
        if self.dpf.pipeline == "egress" and name not in EGRESS_STEERING:
            self.report.error(
                Code.EGRESS_STEERING,
                f"`{name}` in egress DPF `{self.dpf.name}`: the egress pipeline runs after the "
                "output port is chosen, so an egress DPF can only pass or drop the packet",
                stmt.span,
                hint="steer the packet in an ingress DPF; here use `pass()` or `drop()`",
            )
        self.path.steering(name, stmt.span)

    def chain(self, stmt: ast.Chain) -> None:
        target = self.chain_target(stmt.target)
        if target is not None:
            self.ctx.chains.append(Edge(self.dpf, target, stmt.span))
            if target.pipeline != self.dpf.pipeline:
                # NEXT_PC rewrites the pointer of the pipeline the DPF runs in (dpf_ptr in
                # the ingress, egress_ptr in the egress): the next switch runs the target
                # in that same pipeline.
                self.report.error(
                    Code.CHAIN_PIPELINE,
                    f"`chain {stmt.target.text}`: `{self.dpf.name}` is an {self.dpf.pipeline} "
                    f"DPF and `{target.name}` an {target.pipeline} DPF; a chain sets the "
                    f"{self.dpf.pipeline} pointer, so it names a DPF of the same pipeline",
                    stmt.target.span,
                    notes=(Note(f"`{target.name}` is declared here", target.decl.span),),
                )
        self.path.set_chain(stmt.span)

    def chain_target(self, name: ast.Name) -> DpfInfo | None:
        info = self.ctx.tables[self.module]
        if len(name.parts) == 1:
            item = info.item(name.parts[0])
        else:
            head = ".".join(name.parts[:-1])
            ref = info.imports.get(head)
            if ref is None:
                self.report.error(
                    Code.CHAIN_UNKNOWN,
                    f"`chain {name.text}`: no imported module `{head}`",
                    name.span,
                    hint=did_you_mean(head, info.imports),
                )
                return None
            info = self.ctx.tables[ref.key]
            item = info.item(name.parts[-1])
        if isinstance(item, DpfInfo):
            return item
        if item is None:
            prefix = "".join(f"{part}." for part in name.parts[:-1])
            self.report.error(
                Code.CHAIN_UNKNOWN,
                f"`chain {name.text}`: no DPF named `{name.text}`",
                name.span,
                hint=did_you_mean(name.parts[-1], info.dpfs, prefix=prefix),
            )
        else:
            self.report.error(
                Code.CHAIN_UNKNOWN,
                f"`chain {name.text}`: `{name.text}` is {describe(item)}, not a DPF",
                name.span,
            )
        return None

    # -- expressions ----------------------------------------------------------------------

    def word_value(self, expr: ast.Expr, what: str) -> None:
        ty = self.expr(expr)
        if ty is SemType.BOOL:
            self.report.error(
                Code.OPERAND_TYPE,
                f"{what} must be a word, found `bool`",
                expr.span,
                hint="convert with `as u32`",
            )

    def expr(self, expr: ast.Expr) -> SemType:
        ty = self._expr(expr)
        self.ctx.types[id(expr)] = ty
        return ty

    def _expr(self, expr: ast.Expr) -> SemType:
        if isinstance(expr, ast.IntLit):
            return SemType.INT
        if isinstance(expr, ast.BoolLit):
            return SemType.BOOL
        if isinstance(expr, ast.Name):
            return self.name(expr)
        if isinstance(expr, ast.Meta):
            if self.profile.metadata_by_name(expr.field) is None:
                self.report.error(
                    Code.UNKNOWN_META,
                    f"unknown metadata field `meta.{expr.field}`",
                    expr.span,
                    hint=did_you_mean(
                        expr.field, [m.name for m in self.profile.metadata], prefix="meta."
                    )
                    or f"{self.profile.name} has: "
                    + ", ".join(m.name for m in self.profile.metadata),
                )
                return SemType.ERROR
            return SemType.U32
        if isinstance(expr, ast.Index):
            memory = self.index_target(expr)
            if memory is None:
                return SemType.ERROR
            self.access(memory, expr.array.text, expr.span)
            return memory.elem
        if isinstance(expr, ast.Unary):
            return self.unary(expr)
        if isinstance(expr, ast.Binary):
            return self.binary(expr)
        if isinstance(expr, ast.Cast):
            inner = self.expr(expr.expr)
            return SemType.ERROR if inner is SemType.ERROR else from_ast(expr.type.name)
        if isinstance(expr, ast.Call):
            return self.call(expr)
        raise AssertionError(f"unknown expression {expr!r}")  # pragma: no cover

    def name(self, expr: ast.Name, also: tuple[str, ...] = ()) -> SemType:
        """The type of a name used as a value (``also``: more names a misspelt one may be)."""
        if len(expr.parts) == 1:
            local = self.local(expr.parts[0])
            if local is not None:
                return local.type
        near = [*self.visible(), *self.ctx.tables[self.module].value_names(), *also]
        item = self.ctx.resolver.lookup(self.module, expr, near)
        if item is None:
            return SemType.ERROR
        if isinstance(item, ConstInfo):
            result = self.ctx.consts.const(item, expr.span)
            return SemType.ERROR if result is None else result[1]
        hint = None
        if isinstance(item, MemoryInfo):
            hint = f"read an element: `{expr.text}[i]`"
        elif isinstance(item, DpfInfo):
            hint = f"to run it next: `chain {expr.text};`"
        self.report.error(
            Code.WRONG_KIND,
            f"`{expr.text}` is {describe(item)}, not a value",
            expr.span,
            hint=hint,
        )
        return SemType.ERROR

    def index_target(self, expr: ast.Index) -> MemoryInfo | None:
        """Check ``arr[i]``'s array and index (not the access itself)."""
        memories = self.ctx.tables[self.module].memories
        item = self.ctx.resolver.lookup(self.module, expr.array, memories)
        if len(expr.array.parts) == 1 and self.local(expr.array.parts[0]) is not None:
            item = None
            self.report.error(
                Code.WRONG_KIND,
                f"`{expr.array.text}` is a local, not an array",
                expr.array.span,
            )
        index_ty = self.expr(expr.index)
        self.ctx.types[id(expr.array)] = SemType.ERROR
        if item is not None and not isinstance(item, MemoryInfo):
            self.report.error(
                Code.WRONG_KIND,
                f"`{expr.array.text}` is {describe(item)}, not an array",
                expr.array.span,
            )
            return None
        if not isinstance(item, MemoryInfo):
            return None
        want = item.key_type
        if index_ty is not SemType.ERROR and not assignable(index_ty, want):
            self.report.error(
                Code.TYPE_MISMATCH,
                f"an index of `{expr.array.text}` is `{want.value}`, found {index_ty.describe()}",
                expr.index.span,
                hint=_cast_hint(index_ty, want),
            )
        return item

    def unary(self, expr: ast.Unary) -> SemType:
        ty = self.expr(expr.operand)
        if ty is SemType.ERROR:
            return ty
        if expr.op is ast.UnaryOp.LNOT:
            if ty is not SemType.BOOL:
                self.report.error(
                    Code.OPERAND_TYPE,
                    f"`!` needs a `bool`, found {ty.describe()}",
                    expr.operand.span,
                    hint="for the bitwise complement of a word use `~`",
                )
                return SemType.ERROR
            return SemType.BOOL
        if ty is SemType.BOOL:
            self.report.error(
                Code.OPERAND_TYPE,
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
                    self.report.error(
                        Code.OPERAND_TYPE,
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
                self.report.error(
                    Code.OPERAND_TYPE,
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
            return SemType.BOOL
        if op is ast.BinaryOp.SHR and joined is SemType.I32:
            self.report.error(
                Code.ARITH_SHIFT,
                "arithmetic shift is not supported; cast to u32",
                expr.span,
                hint="`(x as u32) >> n` shifts in zeros",
            )
            return SemType.ERROR
        if op is ast.BinaryOp.MUL and not (self._constant(expr.left) or self._constant(expr.right)):
            self.report.error(
                Code.MUL_NEEDS_CONSTANT,
                "`*` needs a constant operand: SwitchVM has no multiplier, the compiler turns "
                "a multiplication by a constant into shifts and adds",
                expr.span,
            )
        return joined

    def _constant(self, expr: ast.Expr) -> bool:
        return self.ctx.consts.is_constant(self.module, expr, self.loop_values(), self.is_local)

    def _mismatch(self, expr: ast.Binary, left: SemType, right: SemType) -> None:
        self.report.error(
            Code.TYPE_MISMATCH,
            f"`{expr.op.value}` on different types: {left.describe()} and {right.describe()}",
            expr.span,
            hint="convert one side with `as u32` or `as i32`",
        )

    def call(self, expr: ast.Call) -> SemType:
        func = expr.func
        if func not in BUILTINS:
            for arg in expr.args:
                self.expr(arg)
            self.unknown_call(expr)
            return SemType.ERROR
        arity = BUILTINS[func]
        if len(expr.args) != arity:
            for arg in expr.args:
                self.expr(arg)
            self.report.error(
                Code.ARITY,
                f"`{func}` takes {arity} argument{'s' if arity != 1 else ''}, got {len(expr.args)}",
                expr.span,
            )
            return SemType.ERROR
        if func in FETCH_BUILTINS:
            return self.fetch(expr)
        args = [self.expr(arg) for arg in expr.args]
        if SemType.ERROR in args:
            return SemType.ERROR
        if func in ("min", "max"):
            for arg, ty in zip(expr.args, args, strict=True):
                if ty is SemType.BOOL:
                    self.report.error(
                        Code.OPERAND_TYPE, f"`{func}` needs words, found `bool`", arg.span
                    )
                    return SemType.ERROR
            joined = join_words(args[0], args[1])
            if joined is None:
                self.report.error(
                    Code.TYPE_MISMATCH,
                    f"`{func}` on different types: {args[0].describe()} and {args[1].describe()}",
                    expr.span,
                )
                return SemType.ERROR
            return joined
        if func == "select":
            if args[0] is not SemType.BOOL:
                self.report.error(
                    Code.OPERAND_TYPE,
                    f"the condition of `select` must be `bool`, found {args[0].describe()}",
                    expr.args[0].span,
                )
            if args[1] is SemType.BOOL or args[2] is SemType.BOOL:
                if args[1] is not args[2]:
                    self.report.error(
                        Code.TYPE_MISMATCH,
                        f"`select` arms of different types: {args[1].describe()} and "
                        f"{args[2].describe()}",
                        expr.span,
                    )
                    return SemType.ERROR
                return SemType.BOOL
            joined = join_words(args[1], args[2])
            if joined is None:
                self.report.error(
                    Code.TYPE_MISMATCH,
                    f"`select` arms of different types: {args[1].describe()} and "
                    f"{args[2].describe()}",
                    expr.span,
                )
                return SemType.ERROR
            return joined
        if func == "hash":
            self.hash_lane(expr)
            if args[0] not in (SemType.U32, SemType.INT):
                self.report.error(
                    Code.OPERAND_TYPE,
                    f"`hash` takes a `u32`, found {args[0].describe()}",
                    expr.args[0].span,
                    hint="convert with `as u32`",
                )
            return SemType.U32
        if func == "peek" and self.peek is None:
            self.peek = expr.span
        return SemType.U32  # rand, peek

    def hash_lane(self, expr: ast.Call) -> None:
        if len(expr.type_args) != 1:
            self.report.error(Code.ARITY, "`hash` takes one lane: `hash<k>(x)`", expr.span)
            return
        lane = expr.type_args[0]
        result = self.ctx.consts.eval(
            self.module, lane, self.loop_values(), self.is_local, what="a hash lane"
        )
        if result is None:
            return
        # `hash<k>` is lane k's CRC unit: k names a lane that has a hash function (a profile
        # may list more functions than it has lanes; scheduling would fail with DPF6002).
        count = min(len(self.profile.hash_functions), self.profile.lanes)
        if result[1] is SemType.BOOL or not 0 <= result[0] < count:
            self.report.error(
                Code.HASH_LANE,
                f"hash lane {result[0]} is out of range: `hash<k>` takes k in 0 .. {count - 1}",
                lane.span,
                hint=f"the lanes of {self.profile.name}: "
                + ", ".join(
                    f"{k} = {n}" for k, n in enumerate(self.profile.hash_functions[:count])
                ),
            )

    def fetch(self, expr: ast.Call) -> SemType:
        target, value = expr.args
        if not isinstance(target, ast.Index):
            self.expr(target)
            self.expr(value)
            self.report.error(
                Code.FETCH_TARGET,
                f"the first argument of `{expr.func}` must be an array element: "
                f"`{expr.func}(a[i], v)`",
                target.span,
            )
            return SemType.ERROR
        memory = self.index_target(target)
        self.ctx.types[id(target)] = memory.elem if memory is not None else SemType.ERROR
        ty = self.expr(value)
        if memory is None:
            return SemType.ERROR
        if not assignable(ty, memory.elem):
            self.report.error(
                Code.TYPE_MISMATCH,
                f"`{target.array.text}` holds `{memory.elem.value}` words but the value is "
                f"{ty.describe()}",
                value.span,
                hint=_cast_hint(ty, memory.elem),
            )
        self.access(memory, target.array.text, target.span)
        return memory.elem

    def unknown_call(self, expr: ast.Call) -> None:
        func = expr.func
        if func in ACTION_NAMES:
            self.report.error(
                Code.NOT_CALLABLE,
                f"`{func}` is an epilog action: a statement of its own, not a value",
                expr.span,
            )
            return
        local = self.local(func)
        item = self.ctx.tables[self.module].item(func)
        if local is None and isinstance(item, DpfInfo):
            self.report.error(
                Code.NOT_CALLABLE,
                f"`{func}` is a DPF: DPFs do not call each other",
                expr.span,
                hint=f"to run it after this one: `chain {func};`",
            )
            return
        if local is not None or item is not None:
            what = "a local" if local is not None or item is None else describe(item)
            self.report.error(Code.NOT_CALLABLE, f"`{func}` is {what}, not a function", expr.span)
            return
        # A misspelt action or `push` statement parses as a call too: suggest those as well.
        self.report.error(
            Code.UNKNOWN_FUNCTION,
            f"unknown function `{func}`",
            expr.span,
            hint=did_you_mean(func, [*BUILTINS, *ACTION_NAMES, "push"])
            or "builtins: " + ", ".join(BUILTINS),
        )


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


def _bare(description: str) -> str:
    """``an array`` -> ``array``."""
    return description.split(" ", 1)[1]


def _cast_hint(value: SemType, target: SemType) -> str | None:
    if value is SemType.ERROR or target is SemType.ERROR:
        return None
    if target is SemType.BOOL and value.is_word:
        return "compare explicitly: `x != 0`"
    if value in (SemType.U32, SemType.I32, SemType.BOOL) and target is not SemType.BOOL:
        return f"convert with `as {target.value}`"
    return None


@dataclass(frozen=True)
class _ArrayUse:
    """The first access of an array by one DPF."""

    dpf: DpfInfo
    name: str  # as the DPF writes it (`countmin.row0`)
    span: Span


@dataclass
class _Context:
    tables: dict[str, ModuleInfo]
    report: Reporter
    resolver: Resolver
    consts: ConstEvaluator
    types: dict[int, SemType] = field(default_factory=dict)
    chains: list[Edge] = field(default_factory=list)
    array_users: dict[str, list[_ArrayUse]] = field(default_factory=dict)  # by IR name


def _check_array_pipelines(ctx: _Context) -> None:
    """An array is memory of one pipeline: the egress pipeline's lane memories are other
    registers than the ingress's (P4 registers belong to one control), so an array used by
    an ingress DPF and by an egress DPF would silently be two arrays (DPF5224)."""
    for users in ctx.array_users.values():
        first = users[0]
        other = next((u for u in users if u.dpf.pipeline != first.dpf.pipeline), None)
        if other is None:
            continue
        ctx.report.error(
            Code.ARRAY_PIPELINES,
            f"`{other.name}` is used by {other.dpf.pipeline} DPF `{other.dpf.name}` and by "
            f"{first.dpf.pipeline} DPF `{first.dpf.name}`: each pipeline has its own memory, "
            "so an array belongs to one of them",
            other.span,
            notes=(Note(f"`{first.dpf.name}` uses it here", first.span),),
            hint="declare one array per pipeline, or move the accesses into DPFs of one pipeline",
        )


def _check_chain_cycles(ctx: _Context) -> None:
    edges: dict[int, list[Edge]] = {}
    for edge in ctx.chains:
        edges.setdefault(id(edge.source), []).append(edge)
    done: set[int] = set()
    reported: set[frozenset[int]] = set()

    def visit(dpf: DpfInfo, stack: list[Edge], on_stack: list[DpfInfo]) -> None:
        on_stack.append(dpf)
        for edge in edges.get(id(dpf), []):
            target = edge.target
            if any(target is d for d in on_stack):
                start = next(i for i, d in enumerate(on_stack) if d is target)
                cycle = [*stack[start:], edge]
                key = frozenset(id(e.source) for e in cycle)
                if key not in reported:
                    reported.add(key)
                    names = [e.source.ir_name for e in cycle] + [target.ir_name]
                    ctx.report.error(
                        Code.CHAIN_CYCLE,
                        "chain cycle: " + " -> ".join(f"`{n}`" for n in names)
                        if len(cycle) > 1
                        else f"`{target.name}` chains to itself",
                        edge.span,
                        notes=tuple(
                            Note(
                                f"`{e.source.ir_name}` chains to `{e.target.ir_name}` here", e.span
                            )
                            for e in cycle[:-1]
                        ),
                        hint="a DPF may not run again through its own chain; recursion is "
                        "not allowed",
                    )
            elif id(target) not in done:
                stack.append(edge)
                visit(target, stack, on_stack)
                stack.pop()
        on_stack.pop()
        done.add(id(dpf))

    for info in ctx.tables.values():
        for dpf in info.dpfs.values():
            if id(dpf) not in done:
                visit(dpf, [], [])


def check_program(program: Program, profile: TargetProfile) -> CheckedProgram:
    """Check every module of ``program`` for ``profile`` (resolved by :mod:`dpfc.driver`
    from ``--target`` and ``@target``); raise DiagnosticError with all errors found."""
    report = Reporter()
    tables = build_tables(program, report)
    resolver = Resolver(tables, report)
    consts = ConstEvaluator(resolver, report)
    # Main module first, so that its mistakes are found (and reported) in its own terms.
    order = [program.main, *(k for k in tables if k != program.main)]
    for key in order:
        for info in tables[key].consts.values():
            consts.const(info)
    ItemChecker(tables, consts, report, profile).check()
    ctx = _Context(tables, report, resolver, consts)
    for key in order:
        for dpf in tables[key].dpfs.values():
            BodyChecker(ctx, dpf).run()
    _check_chain_cycles(ctx)
    _check_array_pipelines(ctx)
    report.raise_if_any()
    return CheckedProgram(
        program,
        tables,
        ctx.types,
        consts,
        resolver,
        profile,
        ctx.chains,
        sorted(report.warnings, key=sort_key),
    )


def check_file(
    path: str | Path | SourceFile,
    profile: TargetProfile,
    search_path: list[str | Path] | None = None,
) -> CheckedProgram:
    """Load ``path`` and its imports and check them for ``profile`` (``dpfc check`` goes
    through :func:`dpfc.driver.check_source`, which also resolves the profile).

    Raises :class:`DiagnosticError` with every error found, sorted by position.
    """
    program = load_program(path, search_path)
    return check_program(program, profile)


__all__ = [
    "CheckedProgram",
    "DiagnosticError",
    "Local",
    "ModuleRef",
    "check_file",
    "check_program",
]
