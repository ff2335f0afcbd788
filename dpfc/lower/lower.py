"""Lowering: a checked program -> the SSA IR (:mod:`dpfc.ir.core`).

Contract: :func:`lower_program` turns every DPF of the main module of a
:class:`~dpfc.sema.CheckedProgram` into a :class:`~dpfc.ir.core.Function` with the same
meaning (the AST evaluator, :mod:`dpfc.oracle.ast_eval`, is the reference). Requires a
program that passed the checker; ensures SSA form (one definition per value, phis at the
top of join blocks), acyclic control flow, a span on every instruction and a ``hint``
(the source name) on the ones a name was given to.

How each construct maps:

* locals are SSA values: ``let``/assignment rebind a name; at the join after an ``if`` a
  name bound to different values on the incoming paths gets a PHI;
* ``for`` loops are unrolled; the loop variable is a CONST in each copy;
* ``&& || !`` are bool AND/OR/XOR (both sides are evaluated, as the language says); ``==``
  and ``!=`` on bools are XORs;
* compares are signed (SLT...) when an operand is ``i32``; ``min``/``max`` on ``i32`` flip
  the sign bit (``x ^ 0x80000000``) around the unsigned MIN/MAX;
* ``b as u32`` is ZEXT, ``x as bool`` is ``x != 0``, word-to-word casts are free; a
  ``bool`` parameter is its stack word's bit 0 (TEST with 1);
* ``x * c`` is MUL (the strength-reduction pass turns it into shifts and adds);
* ``a[i] = v`` is STORE; ``a[i] += v`` / ``&=`` / ``|=`` are FETCH_ADD / AND / OR whose
  result is unused; loads and fetch ops are emitted in source (evaluation) order;
* epilog statements are collected per path and end up in the path's :class:`Exit`: the
  push list, the steering action and value, the chain target (the DPF's IR name: ``f`` in
  this module, ``m.f`` in a module imported as ``m``) and ``drop_code``. Paths whose
  epilogs differ in shape (push count, action, chain, drop_code) cannot share a join
  block, so the code after such an ``if`` is lowered once per shape; values that differ
  within one shape become phis. ``return`` ends its path with an Exit.

Function attributes: ``placement`` (packet|switch), ``target`` (profile name) and
``pipeline`` (ingress|egress). Arrays: the main module's, and every imported array the DPFs
access, named as the checker names them (``countmin.row0``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

from dpfc.diagnostics import Span
from dpfc.ir import core as ir
from dpfc.ir.core import Instr, Op, Ty
from dpfc.sema.check import CheckedProgram
from dpfc.sema.resolve import ConstInfo, DpfInfo, MemoryInfo
from dpfc.sema.types import SemType, is_signed
from dpfc.syntax import ast

WORD_MASK = 0xFFFF_FFFF
SIGN_BIT = 0x8000_0000
Binding = Instr | int  # an SSA value, or a loop variable's value

_ARITH: dict[ast.BinaryOp, Op] = {
    ast.BinaryOp.ADD: Op.ADD,
    ast.BinaryOp.SUB: Op.SUB,
    ast.BinaryOp.MUL: Op.MUL,
    ast.BinaryOp.BIT_AND: Op.AND,
    ast.BinaryOp.BIT_OR: Op.OR,
    ast.BinaryOp.BIT_XOR: Op.XOR,
    ast.BinaryOp.SHL: Op.SHL,
    ast.BinaryOp.SHR: Op.SHR,
}
_COMPARE: dict[ast.BinaryOp, tuple[Op, Op]] = {  # (unsigned, signed)
    ast.BinaryOp.EQ: (Op.EQ, Op.EQ),
    ast.BinaryOp.NE: (Op.NE, Op.NE),
    ast.BinaryOp.LT: (Op.ULT, Op.SLT),
    ast.BinaryOp.LE: (Op.ULE, Op.SLE),
    ast.BinaryOp.GT: (Op.UGT, Op.SGT),
    ast.BinaryOp.GE: (Op.UGE, Op.SGE),
}
_FETCH: dict[str, Op] = {
    "fetch_add": Op.FETCH_ADD,
    "fetch_and": Op.FETCH_AND,
    "fetch_or": Op.FETCH_OR,
    "fetch_max": Op.FETCH_MAX,
    "fetch_min": Op.FETCH_MIN,
}
_STORE: dict[ast.StoreOp, Op] = {
    ast.StoreOp.ADD: Op.FETCH_ADD,
    ast.StoreOp.AND: Op.FETCH_AND,
    ast.StoreOp.OR: Op.FETCH_OR,
}


def _common_actions(spans: list[ir.ActionSpans], branch: Span | None) -> ir.ActionSpans:
    """Each action's statement where all ``spans`` agree on it, else ``branch``: the ``if``
    whose arms wrote it in different statements."""

    def common(values: list[Span | None]) -> Span | None:
        return values[0] if all(v == values[0] for v in values) else branch

    return ir.ActionSpans(
        push=common([s.push for s in spans]),
        steer=common([s.steer for s in spans]),
        chain=common([s.chain for s in spans]),
        drop_code=common([s.drop_code for s in spans]),
    )


@dataclass
class Epilog:
    push: list[Instr] = field(default_factory=list)
    steer: str | None = None
    steer_value: Instr | None = None
    chain: str | None = None
    drop_code: bool = False
    # The statements of the actions. Where joining paths wrote an action in different
    # statements (`forward(j)` / `forward(i)` in the arms of an `if`), the joined epilog
    # names the `if` for it: the statement that caused it, never the wrong arm.
    actions: ir.ActionSpans = field(default_factory=ir.ActionSpans)

    def copy(self) -> Epilog:
        return Epilog(
            list(self.push),
            self.steer,
            self.steer_value,
            self.chain,
            self.drop_code,
            self.actions,
        )

    def shape(self) -> tuple[int, str | None, bool, str | None, bool]:
        """What must agree for two paths to share a block (values may differ: phis)."""
        return (len(self.push), self.steer, self.steer_value is None, self.chain, self.drop_code)


@dataclass
class PendingEdge:
    """A branch edge with no block yet (``if`` without ``else``): patched when needed."""

    br: ir.Br
    then_side: bool
    source: str  # the label of the block ending in ``br``
    label: str  # the label to give a block created for this edge alone


@dataclass
class State:
    """One group of paths being lowered: where code goes, the locals, the epilog so far."""

    block: ir.Block | None
    env: list[dict[str, Binding]]
    epilog: Epilog
    edge: PendingEdge | None = None

    def fork(self, block: ir.Block | None, edge: PendingEdge | None = None) -> State:
        return State(block, [dict(s) for s in self.env], self.epilog.copy(), edge)

    def lookup(self, name: str) -> Binding | None:
        for scope in reversed(self.env):
            if name in scope:
                return scope[name]
        return None

    def rebind(self, name: str, value: Binding) -> None:
        for scope in reversed(self.env):
            if name in scope:
                scope[name] = value
                return
        raise AssertionError(f"assignment to unbound `{name}`")  # the checker prevents it


class FunctionLowerer:
    def __init__(self, lowering: Lowering, dpf: DpfInfo) -> None:
        self.lowering = lowering
        self.checked = lowering.checked
        self.dpf = dpf
        self.module = dpf.module
        self.types = lowering.checked.types
        decl = dpf.decl
        profile = dpf.profile
        self.function = ir.Function(
            dpf.ir_name,
            len(decl.params),
            attrs={
                "placement": dpf.placement,
                "target": profile.name if profile is not None else "tofino1",
                "pipeline": dpf.pipeline,
            },
            span=decl.span,
        )
        self.used_labels: set[str] = set()
        self.ifs = 0

    # -- blocks ---------------------------------------------------------------------------

    def label(self, base: str) -> str:
        label, k = base, 1
        while label in self.used_labels:
            k += 1
            label = f"{base}_{k}"
        self.used_labels.add(label)
        return label

    def new_block(self, base: str) -> ir.Block:
        block = ir.Block(self.label(base))
        self.function.blocks.append(block)
        return block

    def open(self, state: State) -> ir.Block:
        """The block code of ``state`` goes to, creating it for a pending edge."""
        if state.block is None:
            edge = state.edge
            assert edge is not None
            block = self.new_block(edge.label)
            self._patch(edge, block.label)
            state.block, state.edge = block, None
        return state.block

    @staticmethod
    def _patch(edge: PendingEdge, label: str) -> None:
        if edge.then_side:
            edge.br.then = label
        else:
            edge.br.orelse = label

    def emit(self, state: State, instr: Instr) -> Instr:
        self.open(state).instrs.append(instr)
        return instr

    def const(
        self, state: State, value: int, span: Span, ty: Ty = Ty.WORD, hint: str | None = None
    ) -> Instr:
        return self.emit(
            state, Instr(Op.CONST, [], ty, imm=value & WORD_MASK, span=span, hint=hint)
        )

    def op(
        self, state: State, op: Op, args: list[Instr], span: Span, ty: Ty | None = Ty.WORD
    ) -> Instr:
        return self.emit(state, Instr(op, args, ty, span=span))

    # -- the function ---------------------------------------------------------------------

    def run(self) -> ir.Function:
        decl = self.dpf.decl
        entry = self.new_block("entry")
        state = State(entry, [{}], Epilog())
        for k, param in enumerate(decl.params):
            value = self.emit(state, Instr(Op.PARAM, [], imm=k, span=param.span, hint=param.name))
            if param.type.name is ast.TypeName.BOOL:
                one = self.const(state, 1, param.span)
                value = self.emit(
                    state, Instr(Op.TEST, [value, one], Ty.BOOL, span=param.span, hint=param.name)
                )
            state.env[0][param.name] = value
        states = self.block(decl.body, [state])
        end = Span(decl.body.span.source, decl.body.span.end - 1, decl.body.span.end)
        for final in states:
            self.finish(final, end)
        return self.function

    def finish(self, state: State, span: Span) -> None:
        block = self.open(state)
        epilog = state.epilog
        block.term = ir.Exit(
            push=list(epilog.push),
            steer=epilog.steer or "pass",
            steer_value=epilog.steer_value,
            chain=epilog.chain,
            drop_code=epilog.drop_code,
            span=span,
            actions=epilog.actions,
        )

    # -- statements -----------------------------------------------------------------------

    def block(
        self, block: ast.Block, states: list[State], scope: dict[str, Binding] | None = None
    ) -> list[State]:
        for state in states:
            state.env.append(dict(scope) if scope is not None else {})
        for stmt in block.stmts:
            states = [out for state in states for out in self.stmt(stmt, state)]
            if not states:
                break
        for state in states:
            state.env.pop()
        return states

    def stmt(self, stmt: ast.Stmt, state: State) -> list[State]:
        if isinstance(stmt, ast.Let):
            value = self.expr(stmt.value, state)
            self.name_value(value, stmt.name)
            state.env[-1][stmt.name] = value
        elif isinstance(stmt, ast.Assign):
            value = self.expr(stmt.value, state)
            self.name_value(value, stmt.name)
            state.rebind(stmt.name, value)
        elif isinstance(stmt, ast.Store):
            self.store(stmt, state)
        elif isinstance(stmt, ast.ExprStmt):
            self.expr(stmt.expr, state)
        elif isinstance(stmt, ast.If):
            return self.if_(stmt, state)
        elif isinstance(stmt, ast.For):
            return self.for_(stmt, state)
        elif isinstance(stmt, ast.Push):
            state.epilog.push.extend(self.expr(v, state) for v in stmt.values)
            if state.epilog.actions.push is None:
                state.epilog.actions = replace(state.epilog.actions, push=stmt.span)
        elif isinstance(stmt, ast.Action):
            if stmt.name == "drop_code":
                state.epilog.drop_code = True
                state.epilog.actions = replace(state.epilog.actions, drop_code=stmt.span)
            else:
                state.epilog.steer = stmt.name
                state.epilog.steer_value = self.expr(stmt.args[0], state) if stmt.args else None
                state.epilog.actions = replace(state.epilog.actions, steer=stmt.span)
        elif isinstance(stmt, ast.Chain):
            state.epilog.chain = self.chain_target(stmt.target)
            state.epilog.actions = replace(state.epilog.actions, chain=stmt.span)
        elif isinstance(stmt, ast.Return):
            self.finish(state, stmt.span)
            return []
        return [state]

    @staticmethod
    def name_value(value: Instr, name: str) -> None:
        if value.hint is None:
            value.hint = name

    def chain_target(self, name: ast.Name) -> str:
        info = self.checked.tables[self.module]
        if len(name.parts) == 1:
            item = info.item(name.parts[0])
        else:
            ref = info.imports[".".join(name.parts[:-1])]
            item = self.checked.tables[ref.key].item(name.parts[-1])
        assert isinstance(item, DpfInfo)
        return item.ir_name

    def store(self, stmt: ast.Store, state: State) -> None:
        memory = self.memory(stmt.target.array)
        index = self.expr(stmt.target.index, state)
        value = self.expr(stmt.value, state)
        if stmt.op is ast.StoreOp.SET:
            instr = Instr(Op.STORE, [index, value], None, symbol=memory.ir_name, span=stmt.span)
        else:
            instr = Instr(_STORE[stmt.op], [index, value], symbol=memory.ir_name, span=stmt.span)
        self.emit(state, instr)

    def if_(self, stmt: ast.If, state: State) -> list[State]:
        cond = self.expr(stmt.cond, state)
        source = self.open(state)
        self.ifs += 1
        n = self.ifs
        then_block = self.new_block(f"then{n}")
        br = ir.Br(cond, then_block.label, "", span=stmt.span)
        source.term = br
        then_states = self.block(stmt.then, [state.fork(then_block)])
        if stmt.orelse is None:
            edge = PendingEdge(br, False, source.label, f"else{n}")
            else_states = [state.fork(None, edge)]
        else:
            else_block = self.new_block(f"else{n}")
            br.orelse = else_block.label
            else_state = state.fork(else_block)
            if isinstance(stmt.orelse, ast.If):
                else_states = self.if_(stmt.orelse, else_state)
            else:
                else_states = self.block(stmt.orelse, [else_state])
        return self.merge(then_states + else_states, f"join{n}", stmt.span)

    def merge(self, states: list[State], base: str, branch: Span | None) -> list[State]:
        groups: dict[tuple[object, ...], list[State]] = {}
        for state in states:
            groups.setdefault(state.epilog.shape(), []).append(state)
        merged: list[State] = []
        for group in groups.values():
            merged.append(group[0] if len(group) == 1 else self.join(group, base, branch))
        return merged

    def join(self, group: list[State], base: str, branch: Span | None) -> State:
        join = self.new_block(base)
        preds: list[str] = []
        for state in group:
            if state.block is not None:
                state.block.term = ir.Jump(join.label)
                preds.append(state.block.label)
            else:
                assert state.edge is not None
                self._patch(state.edge, join.label)
                preds.append(state.edge.source)
        phis: list[Instr] = []

        def phi(values: list[Instr], hint: str | None) -> Instr:
            if all(v is values[0] for v in values):
                return values[0]
            instr = Instr(
                Op.PHI,
                list(values),
                values[0].ty,
                incoming=list(preds),
                hint=hint,
                span=values[0].span,
            )
            phis.append(instr)
            return instr

        first = group[0]
        env: list[dict[str, Binding]] = []
        for depth, scope in enumerate(first.env):
            merged_scope: dict[str, Binding] = {}
            for name, value in scope.items():
                if isinstance(value, int):
                    merged_scope[name] = value
                    continue
                values = [s.env[depth][name] for s in group]
                merged_scope[name] = phi([v for v in values if isinstance(v, Instr)], name)
            env.append(merged_scope)
        epilog = first.epilog.copy()
        epilog.actions = _common_actions([s.epilog.actions for s in group], branch)
        epilog.push = [
            phi([s.epilog.push[k] for s in group], None) for k in range(len(epilog.push))
        ]
        if epilog.steer_value is not None:
            steer_values = [s.epilog.steer_value for s in group]
            epilog.steer_value = phi([v for v in steer_values if v is not None], None)
        join.instrs = phis
        return State(join, env, epilog)

    def for_(self, stmt: ast.For, state: State) -> list[State]:
        loops = self.loop_values(state)
        consts = self.checked.consts
        start = consts.eval(self.module, stmt.start, loops, self._is_local(state))
        end = consts.eval(self.module, stmt.end, loops, self._is_local(state))
        assert start is not None and end is not None
        states = [state]
        for value in range(start[0], end[0]):
            states = self.block(stmt.body, states, {stmt.var: value})
            if not states:
                break
        return states

    # -- expressions ----------------------------------------------------------------------

    @staticmethod
    def loop_values(state: State) -> dict[str, int]:
        values: dict[str, int] = {}
        for scope in state.env:
            for name, value in scope.items():
                if isinstance(value, int):
                    values[name] = value
                else:
                    values.pop(name, None)
        return values

    @staticmethod
    def _is_local(state: State) -> Callable[[str], bool]:
        def is_local(name: str) -> bool:
            found = state.lookup(name)
            return found is not None and not isinstance(found, int)

        return is_local

    def type_of(self, expr: ast.Expr) -> SemType:
        return self.types.get(id(expr), SemType.U32)

    def memory(self, name: ast.Name) -> MemoryInfo:
        item = self.checked.resolver.lookup(self.module, name)
        assert isinstance(item, MemoryInfo)
        self.lowering.use_memory(item)
        return item

    def expr(self, expr: ast.Expr, state: State) -> Instr:
        span = expr.span
        if isinstance(expr, ast.IntLit):
            return self.const(state, expr.value, span)
        if isinstance(expr, ast.BoolLit):
            return self.const(state, int(expr.value), span, Ty.BOOL)
        if isinstance(expr, ast.Name):
            return self.name(expr, state)
        if isinstance(expr, ast.Meta):
            return self.emit(
                state, Instr(Op.META, [], symbol=expr.field, span=span, hint=f"meta.{expr.field}")
            )
        if isinstance(expr, ast.Index):
            memory = self.memory(expr.array)
            index = self.expr(expr.index, state)
            return self.emit(state, Instr(Op.LOAD, [index], symbol=memory.ir_name, span=span))
        if isinstance(expr, ast.Unary):
            value = self.expr(expr.operand, state)
            if expr.op is ast.UnaryOp.NEG:
                return self.op(state, Op.NEG, [value], span)
            if expr.op is ast.UnaryOp.NOT:
                ones = self.const(state, WORD_MASK, span)
                return self.op(state, Op.XOR, [value, ones], span)
            true = self.const(state, 1, span, Ty.BOOL)
            return self.op(state, Op.XOR, [value, true], span, Ty.BOOL)
        if isinstance(expr, ast.Binary):
            return self.binary(expr, state)
        if isinstance(expr, ast.Cast):
            value = self.expr(expr.expr, state)
            source = self.type_of(expr.expr)
            if expr.type.name is ast.TypeName.BOOL:
                if source is SemType.BOOL:
                    return value
                zero = self.const(state, 0, span)
                return self.op(state, Op.NE, [value, zero], span, Ty.BOOL)
            if source is SemType.BOOL:
                return self.op(state, Op.ZEXT, [value], span)
            return value
        assert isinstance(expr, ast.Call)
        return self.call(expr, state)

    def name(self, expr: ast.Name, state: State) -> Instr:
        if len(expr.parts) == 1:
            found = state.lookup(expr.parts[0])
            if isinstance(found, Instr):
                return found
            if found is not None:
                return self.const(state, found, expr.span, hint=expr.text)
        item = self.checked.resolver.lookup(self.module, expr)
        assert isinstance(item, ConstInfo) and item.value is not None
        ty = Ty.BOOL if item.type is SemType.BOOL else Ty.WORD
        return self.const(state, item.value, expr.span, ty, hint=expr.text)

    def binary(self, expr: ast.Binary, state: State) -> Instr:
        op, span = expr.op, expr.span
        left = self.expr(expr.left, state)
        right = self.expr(expr.right, state)
        if op is ast.BinaryOp.AND:
            return self.op(state, Op.AND, [left, right], span, Ty.BOOL)
        if op is ast.BinaryOp.OR:
            return self.op(state, Op.OR, [left, right], span, Ty.BOOL)
        lt, rt = self.type_of(expr.left), self.type_of(expr.right)
        if op in (ast.BinaryOp.EQ, ast.BinaryOp.NE) and SemType.BOOL in (lt, rt):
            differ = self.op(state, Op.XOR, [left, right], span, Ty.BOOL)
            if op is ast.BinaryOp.NE:
                return differ
            true = self.const(state, 1, span, Ty.BOOL)
            return self.op(state, Op.XOR, [differ, true], span, Ty.BOOL)
        if op in _COMPARE:
            unsigned, signed = _COMPARE[op]
            return self.op(
                state, signed if is_signed(lt, rt) else unsigned, [left, right], span, Ty.BOOL
            )
        return self.op(state, _ARITH[op], [left, right], span)

    def call(self, expr: ast.Call, state: State) -> Instr:
        func, span = expr.func, expr.span
        if func in _FETCH:
            target = expr.args[0]
            assert isinstance(target, ast.Index)
            memory = self.memory(target.array)
            index = self.expr(target.index, state)
            value = self.expr(expr.args[1], state)
            return self.emit(
                state, Instr(_FETCH[func], [index, value], symbol=memory.ir_name, span=span)
            )
        args = [self.expr(arg, state) for arg in expr.args]
        if func in ("min", "max"):
            op = Op.MIN if func == "min" else Op.MAX
            types = [self.type_of(a) for a in expr.args]
            if not is_signed(*types):
                return self.op(state, op, args, span)
            # Signed order is unsigned order with the sign bit flipped.
            bias = self.const(state, SIGN_BIT, span)
            a = self.op(state, Op.XOR, [args[0], bias], span)
            b = self.op(state, Op.XOR, [args[1], bias], span)
            chosen = self.op(state, op, [a, b], span)
            return self.op(state, Op.XOR, [chosen, bias], span)
        if func == "select":
            return self.op(state, Op.SELECT, args, span, args[1].ty)
        if func == "hash":
            loops = self.loop_values(state)
            lane = self.checked.consts.eval(
                self.module, expr.type_args[0], loops, self._is_local(state)
            )
            assert lane is not None
            return self.emit(state, Instr(Op.HASH, args, imm=lane[0], span=span))
        if func == "rand":
            return self.op(state, Op.RAND, [], span)
        assert func == "peek", func
        return self.op(state, Op.PEEK, [], span)


class Lowering:
    """Lowers the main module of a checked program."""

    def __init__(self, checked: CheckedProgram) -> None:
        self.checked = checked
        self.used: dict[str, MemoryInfo] = {}

    def use_memory(self, memory: MemoryInfo) -> None:
        self.used.setdefault(memory.ir_name, memory)

    def run(self) -> ir.Module:
        main = self.checked.main_module
        module = ir.Module(main.key, app_id=main.app_id)
        functions = [FunctionLowerer(self, dpf).run() for dpf in main.dpfs.values()]
        memories = list(main.memories.values()) + [
            m for m in self.used.values() if m.module != main.key
        ]
        for memory in memories:
            module.arrays[memory.ir_name] = ir.ArrayDecl(
                memory.ir_name,
                memory.decl.mapping.value,
                memory.size or 0,
                pin=memory.pin,
                signed=memory.elem is SemType.I32,
                span=memory.decl.span,
            )
        module.functions = functions
        return module


def lower_program(checked: CheckedProgram) -> ir.Module:
    """The IR of the main module of ``checked`` (see the module docstring)."""
    return Lowering(checked).run()
