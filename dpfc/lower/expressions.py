"""Lowering of expressions: one AST expression -> the SSA value that computes it.

Contract: :meth:`ExprLowerer.expr` emits, into the block of a
:class:`~dpfc.lower.paths.State`, the instructions that compute an expression of a checked
DPF, in source (evaluation) order, and returns the value. Locals come from the state's
scopes, loop variables and named constants become CONSTs (with the name as hint). The
mapping (signed compares on ``i32``, sign-flipped ``min``/``max``, casts, bool ``==``...) is
the one listed in :mod:`dpfc.lower.lower`. Each array an expression touches is reported to
``use_memory``, so that the module declares it.

Not responsible for statements, control flow or epilogs (:mod:`dpfc.lower.lower`), nor for
creating blocks (:mod:`dpfc.lower.builder`).
"""

from __future__ import annotations

from collections.abc import Callable

from dpfc.ir import Instr, Op, Ty
from dpfc.lower.builder import WORD_MASK, FunctionBuilder
from dpfc.lower.paths import State, local_names, loop_values
from dpfc.sema import CheckedProgram, ConstInfo, MemoryInfo, SemType, is_signed
from dpfc.syntax import ast

SIGN_BIT = 0x8000_0000

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


class ExprLowerer:
    """Lowers the expressions of the DPFs of ``module`` (a module key of ``checked``)."""

    def __init__(
        self,
        builder: FunctionBuilder,
        checked: CheckedProgram,
        module: str,
        use_memory: Callable[[MemoryInfo], None],
    ) -> None:
        self.builder = builder
        self.checked = checked
        self.module = module
        self.types = checked.types
        self.use_memory = use_memory

    def type_of(self, expr: ast.Expr) -> SemType:
        return self.types.get(id(expr), SemType.U32)

    def memory(self, name: ast.Name) -> MemoryInfo:
        """The array ``name`` refers to, recorded as used by the module."""
        item = self.checked.resolver.lookup(self.module, name)
        assert isinstance(item, MemoryInfo)
        self.use_memory(item)
        return item

    def expr(self, expr: ast.Expr, state: State) -> Instr:
        build = self.builder
        span = expr.span
        if isinstance(expr, ast.IntLit):
            return build.const(state, expr.value, span)
        if isinstance(expr, ast.BoolLit):
            return build.const(state, int(expr.value), span, Ty.BOOL)
        if isinstance(expr, ast.Name):
            return self.name(expr, state)
        if isinstance(expr, ast.Meta):
            return build.emit(
                state, Instr(Op.META, [], symbol=expr.field, span=span, hint=f"meta.{expr.field}")
            )
        if isinstance(expr, ast.Index):
            memory = self.memory(expr.array)
            index = self.expr(expr.index, state)
            return build.emit(state, Instr(Op.LOAD, [index], symbol=memory.ir_name, span=span))
        if isinstance(expr, ast.Unary):
            value = self.expr(expr.operand, state)
            if expr.op is ast.UnaryOp.NEG:
                return build.op(state, Op.NEG, [value], span)
            if expr.op is ast.UnaryOp.NOT:
                ones = build.const(state, WORD_MASK, span)
                return build.op(state, Op.XOR, [value, ones], span)
            true = build.const(state, 1, span, Ty.BOOL)
            return build.op(state, Op.XOR, [value, true], span, Ty.BOOL)
        if isinstance(expr, ast.Binary):
            return self.binary(expr, state)
        if isinstance(expr, ast.Cast):
            value = self.expr(expr.expr, state)
            source = self.type_of(expr.expr)
            if expr.type.name is ast.TypeName.BOOL:
                if source is SemType.BOOL:
                    return value
                zero = build.const(state, 0, span)
                return build.op(state, Op.NE, [value, zero], span, Ty.BOOL)
            if source is SemType.BOOL:
                return build.op(state, Op.ZEXT, [value], span)
            return value
        assert isinstance(expr, ast.Call)
        return self.call(expr, state)

    def name(self, expr: ast.Name, state: State) -> Instr:
        if len(expr.parts) == 1:
            found = state.lookup(expr.parts[0])
            if isinstance(found, Instr):
                return found
            if found is not None:
                return self.builder.const(state, found, expr.span, hint=expr.text)
        item = self.checked.resolver.lookup(self.module, expr)
        assert isinstance(item, ConstInfo) and item.value is not None
        ty = Ty.BOOL if item.type is SemType.BOOL else Ty.WORD
        return self.builder.const(state, item.value, expr.span, ty, hint=expr.text)

    def binary(self, expr: ast.Binary, state: State) -> Instr:
        build = self.builder
        op, span = expr.op, expr.span
        left = self.expr(expr.left, state)
        right = self.expr(expr.right, state)
        if op is ast.BinaryOp.AND:
            return build.op(state, Op.AND, [left, right], span, Ty.BOOL)
        if op is ast.BinaryOp.OR:
            return build.op(state, Op.OR, [left, right], span, Ty.BOOL)
        lt, rt = self.type_of(expr.left), self.type_of(expr.right)
        if op in (ast.BinaryOp.EQ, ast.BinaryOp.NE) and SemType.BOOL in (lt, rt):
            differ = build.op(state, Op.XOR, [left, right], span, Ty.BOOL)
            if op is ast.BinaryOp.NE:
                return differ
            true = build.const(state, 1, span, Ty.BOOL)
            return build.op(state, Op.XOR, [differ, true], span, Ty.BOOL)
        if op in _COMPARE:
            unsigned, signed = _COMPARE[op]
            return build.op(
                state, signed if is_signed(lt, rt) else unsigned, [left, right], span, Ty.BOOL
            )
        return build.op(state, _ARITH[op], [left, right], span)

    def call(self, expr: ast.Call, state: State) -> Instr:
        build = self.builder
        func, span = expr.func, expr.span
        if func in _FETCH:
            target = expr.args[0]
            assert isinstance(target, ast.Index)
            memory = self.memory(target.array)
            index = self.expr(target.index, state)
            value = self.expr(expr.args[1], state)
            return build.emit(
                state, Instr(_FETCH[func], [index, value], symbol=memory.ir_name, span=span)
            )
        args = [self.expr(arg, state) for arg in expr.args]
        if func in ("min", "max"):
            op = Op.MIN if func == "min" else Op.MAX
            types = [self.type_of(a) for a in expr.args]
            if not is_signed(*types):
                return build.op(state, op, args, span)
            # Signed order is unsigned order with the sign bit flipped.
            bias = build.const(state, SIGN_BIT, span)
            a = build.op(state, Op.XOR, [args[0], bias], span)
            b = build.op(state, Op.XOR, [args[1], bias], span)
            chosen = build.op(state, op, [a, b], span)
            return build.op(state, Op.XOR, [chosen, bias], span)
        if func == "select":
            return build.op(state, Op.SELECT, args, span, args[1].ty)
        if func == "hash":
            loops = loop_values(state)
            lane = self.checked.consts.eval(
                self.module, expr.type_args[0], loops, local_names(state)
            )
            assert lane is not None
            return build.emit(state, Instr(Op.HASH, args, imm=lane[0], span=span))
        if func == "rand":
            return build.op(state, Op.RAND, [], span)
        assert func == "peek", func
        return build.op(state, Op.PEEK, [], span)
