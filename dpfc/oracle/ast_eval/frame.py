"""The tree walk of the AST evaluator (:mod:`.run`): statements and expressions.

Contract: :class:`Frame` runs one DPF body on a :class:`~.values.State` (or, without a
state, evaluates a constant expression): it keeps the lexical scopes of locals, runs each
statement in order, evaluates operands left to right, and raises :class:`ReturnFromDpf` on
``return;``. :class:`Evaluator` is what frames share for one run: the program, the target
profile (hash functions of ``hash<k>``) and the values of module constants, each evaluated
once; a constant that depends on itself is an :class:`~.values.EvalError`.

Not responsible for word arithmetic and memory bounds (:mod:`.values`), name
resolution across modules (:mod:`.program`), or binding parameters and building the
outcome (:mod:`.run`).
"""

from __future__ import annotations

from dpfc.isa import hash_word, to_signed
from dpfc.oracle.ast_eval.program import Program
from dpfc.oracle.ast_eval.values import (
    COMPARE,
    FETCH,
    WORD_MASK,
    EvalError,
    Memory,
    State,
    Value,
    arith,
    join_types,
    read_cell,
    write_cell,
)
from dpfc.syntax import ast
from dpfc.target import TargetProfile


class ReturnFromDpf(Exception):
    """``return;``: leave the DPF body for the epilog."""


class Evaluator:
    """What the frames of one run share: the program, the profile, the constants' values."""

    def __init__(self, program: Program, profile: TargetProfile) -> None:
        self.program = program
        self.profile = profile
        self.const_cache: dict[tuple[str, str], Value] = {}
        self.const_busy: set[tuple[str, str]] = set()

    # -- names ------------------------------------------------------------------------------

    def const(self, module: str, name: str) -> Value:
        key = (module, name)
        cached = self.const_cache.get(key)
        if cached is not None:
            return cached
        if key in self.const_busy:
            raise EvalError(f"constant `{name}` depends on itself")
        decl = self.program.module(module).consts.get(name)
        if decl is None:
            raise EvalError(f"unknown name `{name}` in module `{module}`")
        self.const_busy.add(key)
        value = Frame(self, module, None).expr(decl.value)
        self.const_busy.discard(key)
        declared = decl.type.name if decl.type is not None else None
        result = Value(value.word, declared or value.type or ast.TypeName.U32)
        self.const_cache[key] = result
        return result

    def memory(self, module: str, array: ast.Name) -> Memory:
        owner, name = self.program.lookup(module, array.parts)
        decl = self.program.module(owner).memories.get(name)
        if decl is None:
            raise EvalError(f"`{array.text}` is not an array")
        size = Frame(self, owner, None).expr(decl.size).word
        return Memory(self.program.ir_name(owner, name), size, decl.elem_type.name)

    def const_int(self, module: str, expr: ast.Expr) -> int:
        return Frame(self, module, None).expr(expr).word


class Frame:
    """One DPF body being run (or, with ``state`` None, a constant expression)."""

    def __init__(self, ev: Evaluator, module: str, state: State | None) -> None:
        self.ev = ev
        self.module = module
        self.state = state
        self.scopes: list[dict[str, Value]] = [{}]

    def need_state(self) -> State:
        if self.state is None:
            raise EvalError("not a constant expression")
        return self.state

    # -- locals -----------------------------------------------------------------------------

    def local(self, name: str) -> Value | None:
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        return None

    def assign(self, name: str, value: Value) -> None:
        for scope in reversed(self.scopes):
            if name in scope:
                scope[name] = Value(value.word, scope[name].type)
                return
        raise EvalError(f"assignment to unknown local `{name}`")

    # -- statements -------------------------------------------------------------------------

    def block(self, block: ast.Block) -> None:
        self.scopes.append({})
        try:
            for stmt in block.stmts:
                self.stmt(stmt)
        finally:
            self.scopes.pop()

    def stmt(self, stmt: ast.Stmt) -> None:
        state = self.need_state()
        if isinstance(stmt, ast.Let):
            value = self.expr(stmt.value)
            declared = stmt.type.name if stmt.type is not None else None
            word = value.word & 1 if declared is ast.TypeName.BOOL else value.word
            self.scopes[-1][stmt.name] = Value(word, declared or value.type or ast.TypeName.U32)
        elif isinstance(stmt, ast.Assign):
            self.assign(stmt.name, self.expr(stmt.value))
        elif isinstance(stmt, ast.Store):
            self.store(stmt)
        elif isinstance(stmt, ast.ExprStmt):
            self.expr(stmt.expr)
        elif isinstance(stmt, ast.If):
            self.if_(stmt)
        elif isinstance(stmt, ast.For):
            start = self.expr(stmt.start).word
            end = self.expr(stmt.end).word
            for i in range(start, end):
                self.scopes.append({stmt.var: Value(i, None)})
                try:
                    self.block(stmt.body)
                finally:
                    self.scopes.pop()
        elif isinstance(stmt, ast.Push):
            state.pushed.extend(self.expr(v).word for v in stmt.values)
        elif isinstance(stmt, ast.Action):
            self.action(stmt, state)
        elif isinstance(stmt, ast.Chain):
            owner, name = self.ev.program.lookup(self.module, stmt.target.parts)
            state.chain = self.ev.program.ir_name(owner, name)
        elif isinstance(stmt, ast.Return):
            raise ReturnFromDpf
        else:  # pragma: no cover - the Stmt union is closed
            raise EvalError(f"unknown statement {stmt!r}")

    def if_(self, stmt: ast.If) -> None:
        if self.expr(stmt.cond).word & 1:
            self.block(stmt.then)
        elif isinstance(stmt.orelse, ast.If):
            self.if_(stmt.orelse)
        elif isinstance(stmt.orelse, ast.Block):
            self.block(stmt.orelse)

    def action(self, stmt: ast.Action, state: State) -> None:
        if stmt.name == "drop_code":
            state.drop_code = True
            return
        state.steer = stmt.name
        state.steer_value = self.expr(stmt.args[0]).word if stmt.args else None

    def store(self, stmt: ast.Store) -> None:
        state = self.need_state()
        mem = self.ev.memory(self.module, stmt.target.array)
        index = self.expr(stmt.target.index).word
        value = self.expr(stmt.value).word
        old = read_cell(state, mem, index)
        if stmt.op is ast.StoreOp.SET:
            new = value
        elif stmt.op is ast.StoreOp.ADD:
            new = (old + value) & WORD_MASK
        elif stmt.op is ast.StoreOp.AND:
            new = old & value
        else:
            new = old | value
        write_cell(state, mem, index, new)

    # -- expressions ------------------------------------------------------------------------

    def expr(self, expr: ast.Expr) -> Value:
        if isinstance(expr, ast.IntLit):
            return Value(expr.value & WORD_MASK, None)
        if isinstance(expr, ast.BoolLit):
            return Value(int(expr.value), ast.TypeName.BOOL)
        if isinstance(expr, ast.Name):
            return self.name(expr)
        if isinstance(expr, ast.Meta):
            state = self.need_state()
            return Value(state.meta.get(expr.field, 0) & WORD_MASK, ast.TypeName.U32)
        if isinstance(expr, ast.Index):
            state = self.need_state()
            mem = self.ev.memory(self.module, expr.array)
            return Value(read_cell(state, mem, self.expr(expr.index).word), mem.elem)
        if isinstance(expr, ast.Unary):
            return self.unary(expr)
        if isinstance(expr, ast.Binary):
            return self.binary(expr)
        if isinstance(expr, ast.Call):
            return self.call(expr)
        if isinstance(expr, ast.Cast):
            value = self.expr(expr.expr)
            target = expr.type.name
            if target is ast.TypeName.BOOL:
                return Value(int(value.word != 0), target)
            return Value(value.word, target)
        raise EvalError(f"unknown expression {expr!r}")  # pragma: no cover

    def name(self, expr: ast.Name) -> Value:
        if len(expr.parts) == 1:
            found = self.local(expr.parts[0])
            if found is not None:
                return found
        owner, name = self.ev.program.lookup(self.module, expr.parts)
        return self.ev.const(owner, name)

    def unary(self, expr: ast.Unary) -> Value:
        value = self.expr(expr.operand)
        if expr.op is ast.UnaryOp.NEG:
            return Value(-value.word & WORD_MASK, value.type)
        if expr.op is ast.UnaryOp.NOT:
            return Value(~value.word & WORD_MASK, value.type)
        return Value(1 - (value.word & 1), ast.TypeName.BOOL)

    def binary(self, expr: ast.Binary) -> Value:
        op = expr.op
        left = self.expr(expr.left)
        right = self.expr(expr.right)
        a, b = left.word, right.word
        kind = join_types(left.type, right.type)
        if op in COMPARE:
            if kind is ast.TypeName.I32:
                a, b = to_signed(a), to_signed(b)
            return Value(int(COMPARE[op](a, b)), ast.TypeName.BOOL)
        if op is ast.BinaryOp.AND:
            return Value(a & b & 1, ast.TypeName.BOOL)
        if op is ast.BinaryOp.OR:
            return Value((a | b) & 1, ast.TypeName.BOOL)
        return Value(arith(op, a, b), kind)

    def call(self, expr: ast.Call) -> Value:
        func = expr.func
        if func == "hash":
            lane = self.ev.const_int(self.module, expr.type_args[0])
            value = self.expr(expr.args[0]).word
            return Value(hash_word(self.ev.profile.hash_for_lane(lane), value), ast.TypeName.U32)
        if func in ("min", "max"):
            left, right = self.expr(expr.args[0]), self.expr(expr.args[1])
            kind = join_types(left.type, right.type)
            pick = min if func == "min" else max
            key = to_signed if kind is ast.TypeName.I32 else None
            return Value(pick(left.word, right.word, key=key), kind)
        if func == "select":
            cond = self.expr(expr.args[0])
            yes, no = self.expr(expr.args[1]), self.expr(expr.args[2])
            return Value(yes.word if cond.word & 1 else no.word, join_types(yes.type, no.type))
        state = self.need_state()
        if func == "rand":
            state.rand_draws += 1
            return Value(next(state.rand) & WORD_MASK, ast.TypeName.U32)
        if func == "peek":
            n = state.nparams
            word = state.stack[n] if n < len(state.stack) else 0
            return Value(word & WORD_MASK, ast.TypeName.U32)
        if func in FETCH:
            target = expr.args[0]
            if not isinstance(target, ast.Index):
                raise EvalError(f"`{func}` needs an array element")
            mem = self.ev.memory(self.module, target.array)
            index = self.expr(target.index).word
            data = self.expr(expr.args[1]).word
            old = read_cell(state, mem, index)
            write_cell(state, mem, index, FETCH[func](old, data))
            return Value(old, mem.elem)
        raise EvalError(f"unknown builtin `{func}`")
