"""The IR verifier's local checks: each instruction and each terminator on its own.

Contract: :func:`check_op` checks one instruction against the tables of
:mod:`dpfc.ir.core` and :data:`~dpfc.ir.core.ARITY`: its operand count (DPF5302; a phi
has one value per incoming label, at least one), MUL where ``machine`` IR is required
(DPF5336), its array or metadata name (DPF5331, DPF5332; other ops take none, DPF5330),
its immediate (a constant in range for its type, a parameter index below the parameter
count, a hash lane the profile has: DPF5330), and the types of its result and operands
(DPF5329). :func:`check_terminator` checks a block's terminator: a ``br`` tests an ``i1``;
pushed and steering values are ``w32`` words (DPF5329); the steering action exists in the
profile, else in the default list (DPF5333), and has a value exactly when it takes one
(DPF5334). Both only add to the context's diagnostics and never raise, whatever the IR.

Not responsible for: where an operand is defined or whether its definition dominates the
use, phi labels, the RMT rule (:mod:`.paths`); the CFG (:mod:`.structure`).
"""

from __future__ import annotations

from dpfc.catalog import codes
from dpfc.ir.core import (
    ARITY,
    BINARY_WORD_OPS,
    COMPARE_OPS,
    FETCH_OPS,
    MEMORY_OPS,
    WORD_MASK,
    Block,
    Br,
    Exit,
    Instr,
    Op,
    Ty,
)
from dpfc.ir.verify.context import (
    FunctionContext,
    ty_text,
)

_SAME_TYPE_OPS = frozenset({Op.AND, Op.OR, Op.XOR})
_WORD_ARGS_OPS = (BINARY_WORD_OPS - _SAME_TYPE_OPS) | COMPARE_OPS | FETCH_OPS | {Op.NEG, Op.HASH}


def check_op(ctx: FunctionContext, instr: Instr) -> None:
    """Operand count, MUL on machine IR, names and immediates, types of one instruction."""
    op = instr.op
    what = ctx.where(instr)
    if op is Op.PHI:
        if not instr.args or len(instr.args) != len(instr.incoming):
            ctx.error(
                codes.IR_OPERAND_COUNT,
                f"{what} has {len(instr.args)} values for {len(instr.incoming)} incoming "
                "labels (one value per predecessor, at least one)",
                instr.span,
            )
    elif len(instr.args) != ARITY[op]:
        ctx.error(
            codes.IR_OPERAND_COUNT,
            f"{what} takes {ARITY[op]} operand(s), found {len(instr.args)}",
            instr.span,
        )
        return
    if ctx.machine and op is Op.MUL:
        ctx.error(
            codes.IR_MACHINE_MUL,
            f"{what}: MUL is not a machine op (strength reduction must have removed it)",
            instr.span,
        )
    _check_fields(ctx, instr, what)
    _check_types(ctx, instr, what)


def _check_fields(ctx: FunctionContext, instr: Instr, what: str) -> None:
    op = instr.op
    if op in MEMORY_OPS:
        if instr.symbol not in ctx.module.arrays:
            ctx.error(
                codes.IR_UNKNOWN_ARRAY,
                f"{what} names `@{instr.symbol}`, which is not a declared array",
                instr.span,
            )
    elif op is Op.META:
        if instr.symbol not in ctx.metadata:
            known = ", ".join(sorted(ctx.metadata))
            ctx.error(
                codes.IR_UNKNOWN_META,
                f"{what}: unknown metadata field `{instr.symbol}` (known: {known})",
                instr.span,
            )
    elif instr.symbol is not None:
        ctx.error(
            codes.IR_BAD_IMMEDIATE,
            f"{what} takes no array or field name (`{instr.symbol}`)",
            instr.span,
        )
    imm = instr.imm
    if op is Op.CONST:
        limit = 1 if instr.ty is Ty.BOOL else WORD_MASK
        if imm is None or not 0 <= imm <= limit:
            ctx.error(
                codes.IR_BAD_IMMEDIATE,
                f"{what}: constant {imm} is not in 0..{limit:#x}",
                instr.span,
            )
    elif op is Op.PARAM:
        if imm is None or not 0 <= imm < ctx.function.params:
            ctx.error(
                codes.IR_BAD_IMMEDIATE,
                f"{what}: parameter index {imm} is not below the parameter count "
                f"{ctx.function.params}",
                instr.span,
            )
    elif op is Op.HASH and (imm is None or not 0 <= imm < ctx.hash_lanes):
        ctx.error(
            codes.IR_BAD_IMMEDIATE,
            f"{what}: hash function index {imm} is not in 0..{ctx.hash_lanes - 1}",
            instr.span,
        )


def _check_types(ctx: FunctionContext, instr: Instr, what: str) -> None:
    op = instr.op
    args = instr.args
    expected_args: list[Ty | None]
    result: Ty | None
    if op is Op.STORE:
        expected_args, result = [Ty.WORD, Ty.WORD], None
    elif op is Op.CONST:
        expected_args, result = [], instr.ty if instr.ty is not None else Ty.WORD
    elif op in _SAME_TYPE_OPS:
        first = args[0].ty if args[0].ty is not None else Ty.WORD
        expected_args, result = [first, first], first
    elif op in COMPARE_OPS:
        expected_args, result = [Ty.WORD, Ty.WORD], Ty.BOOL
    elif op in _WORD_ARGS_OPS:
        expected_args, result = [Ty.WORD] * len(args), Ty.WORD
    elif op is Op.SELECT:
        arm = instr.ty if instr.ty is not None else Ty.WORD
        expected_args, result = [Ty.BOOL, arm, arm], arm
    elif op is Op.ZEXT:
        expected_args, result = [Ty.BOOL], Ty.WORD
    elif op is Op.LOAD:
        expected_args, result = [Ty.WORD], Ty.WORD
    elif op is Op.PHI:
        arm = instr.ty if instr.ty is not None else Ty.WORD
        expected_args, result = [arm] * len(args), arm
    else:  # PARAM PEEK RAND META
        expected_args, result = [], Ty.WORD
    if instr.ty is not result:
        ctx.error(
            codes.IR_TYPE_ERROR,
            f"{what} has type {ty_text(instr.ty)}, expected {ty_text(result)}",
            instr.span,
        )
    for position, (arg, ty) in enumerate(zip(args, expected_args, strict=False), 1):
        if arg.ty is not ty:
            ctx.error(
                codes.IR_TYPE_ERROR,
                f"{what}: operand {position} ({ctx.ref(arg)}) is {ty_text(arg.ty)}, "
                f"expected {ty_text(ty)}",
                instr.span,
            )


def check_terminator(ctx: FunctionContext, block: Block) -> None:
    """The branch condition's type; pushed values, steering action and steering value."""
    term = block.term
    span = term.span
    if isinstance(term, Br):
        if term.cond.ty is not Ty.BOOL:
            ctx.error(
                codes.IR_TYPE_ERROR,
                f"the branch of block `{block.label}` tests {ctx.ref(term.cond)}, "
                f"which is {ty_text(term.cond.ty)} (expected i1)",
                span,
            )
        return
    if not isinstance(term, Exit):
        return
    for value in term.push:
        if value.ty is not Ty.WORD:
            ctx.error(
                codes.IR_TYPE_ERROR,
                f"block `{block.label}` pushes {ctx.ref(value)}, which is "
                f"{ty_text(value.ty)} (only w32 words are pushed)",
                span,
            )
    action = ctx.steering.get(term.steer)
    if action is None:
        known = ", ".join(ctx.steering)
        ctx.error(
            codes.IR_UNKNOWN_STEER,
            f"block `{block.label}` steers with unknown action `{term.steer}` (known: {known})",
            span,
        )
    elif action.takes_value and term.steer_value is None:
        ctx.error(codes.IR_STEER_VALUE, f"steering action `{term.steer}` needs a value", span)
    elif not action.takes_value and term.steer_value is not None:
        ctx.error(codes.IR_STEER_VALUE, f"steering action `{term.steer}` takes no value", span)
    steer_value = term.steer_value
    if steer_value is not None and steer_value.ty is not Ty.WORD:
        ctx.error(
            codes.IR_TYPE_ERROR,
            f"the steering value {ctx.ref(steer_value)} is {ty_text(steer_value.ty)}, expected w32",
            span,
        )
