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

This module lowers statements, control flow (branches, joins with phis, unrolled loops)
and epilogs; the other modules of the package do the rest: :mod:`dpfc.lower.paths` (the
state along a group of paths), :mod:`dpfc.lower.builder` (blocks and instructions of the
function being built) and :mod:`dpfc.lower.expressions` (expressions).
"""

from __future__ import annotations

from dataclasses import replace

from dpfc import ir
from dpfc.diagnostics import Span
from dpfc.ir import Instr, Op, Ty
from dpfc.lower.builder import FunctionBuilder
from dpfc.lower.expressions import ExprLowerer
from dpfc.lower.paths import (
    Binding,
    Epilog,
    PendingEdge,
    State,
    common_actions,
    local_names,
    loop_values,
)
from dpfc.sema import CheckedProgram, DpfInfo, MemoryInfo, SemType
from dpfc.syntax import ast

_STORE: dict[ast.StoreOp, Op] = {
    ast.StoreOp.ADD: Op.FETCH_ADD,
    ast.StoreOp.AND: Op.FETCH_AND,
    ast.StoreOp.OR: Op.FETCH_OR,
}


class FunctionLowerer:
    """Lowers one DPF: its statements, branches, joins and loops (expressions: ``exprs``)."""

    def __init__(self, lowering: Lowering, dpf: DpfInfo) -> None:
        self.checked = lowering.checked
        self.dpf = dpf
        self.module = dpf.module
        decl = dpf.decl
        self.build = FunctionBuilder(
            ir.Function(
                dpf.ir_name,
                len(decl.params),
                attrs={
                    "placement": dpf.placement,
                    "target": dpf.profile.name,
                    "pipeline": dpf.pipeline,
                },
                span=decl.span,
            )
        )
        self.exprs = ExprLowerer(self.build, self.checked, self.module, lowering.use_memory)
        self.ifs = 0

    # -- the function ---------------------------------------------------------------------

    def run(self) -> ir.Function:
        build = self.build
        decl = self.dpf.decl
        entry = build.new_block("entry")
        state = State(entry, [{}], Epilog())
        for k, param in enumerate(decl.params):
            value = build.emit(state, Instr(Op.PARAM, [], imm=k, span=param.span, hint=param.name))
            if param.type.name is ast.TypeName.BOOL:
                one = build.const(state, 1, param.span)
                value = build.emit(
                    state, Instr(Op.TEST, [value, one], Ty.BOOL, span=param.span, hint=param.name)
                )
            state.env[0][param.name] = value
        states = self.block(decl.body, [state])
        end = Span(decl.body.span.source, decl.body.span.end - 1, decl.body.span.end)
        for final in states:
            build.finish(final, end)
        return build.function

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
            value = self.exprs.expr(stmt.value, state)
            self.name_value(value, stmt.name)
            state.env[-1][stmt.name] = value
        elif isinstance(stmt, ast.Assign):
            value = self.exprs.expr(stmt.value, state)
            self.name_value(value, stmt.name)
            state.rebind(stmt.name, value)
        elif isinstance(stmt, ast.Store):
            self.store(stmt, state)
        elif isinstance(stmt, ast.ExprStmt):
            self.exprs.expr(stmt.expr, state)
        elif isinstance(stmt, ast.If):
            return self.if_(stmt, state)
        elif isinstance(stmt, ast.For):
            return self.for_(stmt, state)
        elif isinstance(stmt, ast.Push):
            state.epilog.push.extend(self.exprs.expr(v, state) for v in stmt.values)
            if state.epilog.actions.push is None:
                state.epilog.actions = replace(state.epilog.actions, push=stmt.span)
        elif isinstance(stmt, ast.Action):
            if stmt.name == "drop_code":
                state.epilog.drop_code = True
                state.epilog.actions = replace(state.epilog.actions, drop_code=stmt.span)
            else:
                state.epilog.steer = stmt.name
                state.epilog.steer_value = (
                    self.exprs.expr(stmt.args[0], state) if stmt.args else None
                )
                state.epilog.actions = replace(state.epilog.actions, steer=stmt.span)
        elif isinstance(stmt, ast.Chain):
            state.epilog.chain = self.chain_target(stmt.target)
            state.epilog.actions = replace(state.epilog.actions, chain=stmt.span)
        elif isinstance(stmt, ast.Return):
            self.build.finish(state, stmt.span)
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
        memory = self.exprs.memory(stmt.target.array)
        index = self.exprs.expr(stmt.target.index, state)
        value = self.exprs.expr(stmt.value, state)
        if stmt.op is ast.StoreOp.SET:
            instr = Instr(Op.STORE, [index, value], None, symbol=memory.ir_name, span=stmt.span)
        else:
            instr = Instr(_STORE[stmt.op], [index, value], symbol=memory.ir_name, span=stmt.span)
        self.build.emit(state, instr)

    def if_(self, stmt: ast.If, state: State) -> list[State]:
        cond = self.exprs.expr(stmt.cond, state)
        source = self.build.open(state)
        self.ifs += 1
        n = self.ifs
        then_block = self.build.new_block(f"then{n}")
        br = ir.Br(cond, then_block.label, "", span=stmt.span)
        source.term = br
        then_states = self.block(stmt.then, [state.fork(then_block)])
        if stmt.orelse is None:
            edge = PendingEdge(br, False, source.label, f"else{n}")
            else_states = [state.fork(None, edge)]
        else:
            else_block = self.build.new_block(f"else{n}")
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
        join = self.build.new_block(base)
        preds: list[str] = []
        for state in group:
            if state.block is not None:
                state.block.term = ir.Jump(join.label)
                preds.append(state.block.label)
            else:
                assert state.edge is not None
                self.build.patch(state.edge, join.label)
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
        epilog.actions = common_actions([s.epilog.actions for s in group], branch)
        epilog.push = [
            phi([s.epilog.push[k] for s in group], None) for k in range(len(epilog.push))
        ]
        if epilog.steer_value is not None:
            steer_values = [s.epilog.steer_value for s in group]
            epilog.steer_value = phi([v for v in steer_values if v is not None], None)
        join.instrs = phis
        return State(join, env, epilog)

    def for_(self, stmt: ast.For, state: State) -> list[State]:
        loops = loop_values(state)
        consts = self.checked.consts
        start = consts.eval(self.module, stmt.start, loops, local_names(state))
        end = consts.eval(self.module, stmt.end, loops, local_names(state))
        assert start is not None and end is not None
        states = [state]
        for value in range(start[0], end[0]):
            states = self.block(stmt.body, states, {stmt.var: value})
            if not states:
                break
        return states


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
