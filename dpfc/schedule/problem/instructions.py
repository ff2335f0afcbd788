"""One IR instruction -> the operations of a tree node, while building a problem.

Contract: :func:`record_instr` binds the value of one non-φ instruction on the current path
(``walk.env``): inputs and constants become shared operations (constants unique by value,
the CRC of a constant folded with the profile's hash of that lane); compares and boolean
``and``/``or``/``xor``/``select`` stay symbolic conditions; a pure ALU or hash operation
identical to one on an ancestor node is reused; memory operations are never merged. A word
``select``/``zext`` of an undecided condition either asks the caller to split the node
(``booleans == "branch"``: returns the condition and both values) or becomes ALU operations
(``"alu"``, :mod:`.boolwords`). What SwitchVM cannot run is a user diagnostic: DPF6001 (a
multiplication of two run-time values), DPF6002 (a hash lane the profile lacks), DPF6007
(unknown switch metadata), DPF6008 (an IR op without an implementation).

Not responsible for φs, terminators, splitting nodes or branching (:mod:`.build`,
:mod:`.conditions`), nor for the ids and nodes themselves (:mod:`.state`).
"""

from __future__ import annotations

from collections.abc import Callable

from dpfc.catalog import codes
from dpfc.diagnostics import Diagnostic, DiagnosticError
from dpfc.ir import ALU_OPS as BINARY_ALU_OPS
from dpfc.ir import COMPARE_OPS, MEM_OPS, Instr, Op, Ty
from dpfc.isa import AluOp, hash_word
from dpfc.schedule.problem.boolwords import bool_op_word, compare_word, select_word
from dpfc.schedule.problem.conditions import BoolOp, Compare, Cond, Value, Walk, bool_op
from dpfc.schedule.problem.state import BuildState
from dpfc.schedule.problem.tree import COMMUTATIVE, Kind

# The IR ops' machine counterparts, from the one table the IR evaluator also uses.
ALU_OPS: dict[Op, AluOp] = {**BINARY_ALU_OPS, Op.NEG: AluOp.NEG}


def record_instr(
    state: BuildState, node: int, instr: Instr, walk: Walk
) -> tuple[Cond, Value, Value] | None:
    """Record ``instr``; returns (condition, value if true, value if false) when it is a
    word select that must split the node."""
    op = instr.op
    env = walk.env
    if op is Op.CONST:
        value = instr.imm or 0
        env[id(instr)] = bool(value) if instr.ty is Ty.BOOL else state.const(value)
    elif op is Op.PARAM:
        index = instr.imm or 0
        env[id(instr)] = state.shared_op(
            ("param", index),
            kind=Kind.PARAM,
            index=index,
            name=state.name(instr),
            span=instr.span,
        )
    elif op is Op.PEEK:
        env[id(instr)] = state.shared_op(
            ("peek",), kind=Kind.PEEK, name=state.name(instr), span=instr.span
        )
    elif op is Op.META:
        field = state.profile.metadata_by_name(instr.symbol or "")
        if field is None:
            raise DiagnosticError(
                Diagnostic(
                    codes.SCHEDULE_UNKNOWN_META,
                    f"{state.profile.name} has no switch metadata `{instr.symbol}`",
                    instr.span,
                )
            )
        env[id(instr)] = state.shared_op(
            ("meta", field.index),
            kind=Kind.META,
            index=field.index,
            name=state.name(instr),
            span=instr.span,
        )
    elif op is Op.RAND:
        index = state.rand_index[id(instr)]
        env[id(instr)] = state.shared_op(
            ("rand", index), kind=Kind.RAND, index=index, name=state.name(instr), span=instr.span
        )
    elif op in COMPARE_OPS:
        x, y = (walk.word(a) for a in instr.args)
        env[id(instr)] = Compare(op, x, y, instr.span)
    elif op in (Op.AND, Op.OR, Op.XOR) and instr.ty is Ty.BOOL:
        a, b = (walk.cond(arg) for arg in instr.args)
        env[id(instr)] = bool_op(op.value, a, b)
    elif op is Op.SELECT:
        cond = walk.cond(instr.args[0])
        on_true, on_false = env[id(instr.args[1])], env[id(instr.args[2])]
        if isinstance(cond, bool):
            env[id(instr)] = on_true if cond else on_false
        elif instr.ty is Ty.BOOL:
            assert not isinstance(on_true, int) or isinstance(on_true, bool)
            assert not isinstance(on_false, int) or isinstance(on_false, bool)
            env[id(instr)] = BoolOp("select", (cond, on_true, on_false))
        else:
            state.value_conditions += 1
            if state.booleans == "branch":
                return cond, on_true, on_false
            assert isinstance(on_true, int) and isinstance(on_false, int)
            word = bool_word(state, node, walk, cond, instr)
            env[id(instr)] = select_word(word, on_true, on_false, alu_of(state, node, walk, instr))
    elif op is Op.ZEXT:
        cond = walk.cond(instr.args[0])
        one, zero = state.const(1), state.const(0)
        if isinstance(cond, bool):
            env[id(instr)] = one if cond else zero
        else:
            state.value_conditions += 1
            if state.booleans == "branch":
                return cond, one, zero
            env[id(instr)] = bool_word(state, node, walk, cond, instr)
    elif op in ALU_OPS:
        args = tuple(walk.word(a) for a in instr.args)
        env[id(instr)] = alu_op(state, node, walk, instr, ALU_OPS[op], args)
    elif op is Op.HASH:
        lane = instr.imm or 0
        if lane >= state.profile.lanes:
            raise DiagnosticError(
                Diagnostic(
                    codes.SCHEDULE_NO_HASH_LANE,
                    f"hash<{lane}> is lane {lane}'s CRC, but {state.profile.name} has "
                    f"{state.profile.lanes} lanes",
                    instr.span,
                    hint=f"use hash<0> .. hash<{state.profile.lanes - 1}> on this target",
                )
            )
        args = (walk.word(instr.args[0]),)
        operand = state.ops[args[0]]
        if operand.kind is Kind.CONST:
            # The CRC of a constant is a constant: computed here, where the profile
            # (whose hash function lane k runs) is known; the IR cannot fold it.
            crc = hash_word(state.profile.hash_for_lane(lane), operand.value)
            env[id(instr)] = state.const(crc)
            return None
        key = ("hash", lane, args)
        if key not in walk.pure:
            walk.pure[key] = state.owned(
                node,
                kind=Kind.HASH,
                lane=lane,
                operands=args,
                name=state.name(instr),
                span=instr.span,
            )
        env[id(instr)] = walk.pure[key]
    elif op in MEM_OPS:
        args = tuple(walk.word(a) for a in instr.args)
        env[id(instr)] = state.owned(
            node,
            kind=Kind.MEM,
            mem=MEM_OPS[op],
            array=instr.symbol,
            operands=args,
            name=state.name(instr),
            span=instr.span,
        )
    elif op is Op.MUL:
        raise DiagnosticError(
            Diagnostic(
                codes.SCHEDULE_RUNTIME_MUL,
                "SwitchVM has no multiplier: this multiplication of two run-time values cannot run",
                instr.span,
                hint="multiply by a constant (it becomes shifts and adds), or precompute "
                "the product",
            )
        )
    else:
        raise DiagnosticError(
            Diagnostic(
                codes.SCHEDULE_NO_IMPLEMENTATION,
                f"the IR operation `{op.value}` has no SwitchVM implementation",
                instr.span,
            )
        )
    return None


def alu_op(
    state: BuildState, node: int, walk: Walk, instr: Instr, alu: AluOp, args: tuple[int, ...]
) -> int:
    """The ALU operation ``alu`` on ``args`` (one per path: reused when an ancestor or
    this node computes it already)."""
    # One operation for x op y and y op x (the operands stay as written).
    key: tuple[object, ...] = ("alu", alu, tuple(sorted(args)) if alu in COMMUTATIVE else args)
    if key not in walk.pure:
        walk.pure[key] = state.owned(
            node, kind=Kind.ALU, alu=alu, operands=args, name=state.name(instr), span=instr.span
        )
    return walk.pure[key]


def alu_of(
    state: BuildState, node: int, walk: Walk, instr: Instr
) -> Callable[[AluOp, int, int], int]:
    """:func:`alu_op` in the shape :mod:`.boolwords` asks for (``y`` unused by NEG)."""

    def make(alu: AluOp, x: int, y: int) -> int:
        return alu_op(state, node, walk, instr, alu, (x,) if alu is AluOp.NEG else (x, y))

    return make


def bool_word(state: BuildState, node: int, walk: Walk, cond: Cond, instr: Instr) -> int:
    """``cond`` as the word 1 or 0, computed by ALU operations (:mod:`.boolwords`); a
    compare this path has decided already is a constant."""
    if isinstance(cond, Compare):
        outcome = walk.outcome(cond)
        if outcome is not None:
            cond = outcome
    if isinstance(cond, bool):
        return state.const(int(cond))
    alu = alu_of(state, node, walk, instr)
    if isinstance(cond, Compare):
        return compare_word(cond.op, cond.x, cond.y, alu, state.const)
    words = [bool_word(state, node, walk, arg, instr) for arg in cond.args]
    return bool_op_word(cond.op, words, alu, state.const)
