"""The IR text reader's instruction and terminator lines, inside one ``dpf`` body.

Contract: :func:`read_instr` reads one instruction line (``%N = OP OPERANDS`` or
``store @ARRAY, %I, %V``) into an :class:`~dpfc.ir.core.Instr`, and :func:`read_terminator`
one ``br``/``jmp``/``exit`` line into a :class:`~dpfc.ir.core.Terminator`, both against
the :class:`FunctionState` of the function being read: operands must name values defined
on earlier lines (DPF5303/5304), except phi arguments, which are recorded in
``FunctionState.phi_args`` and resolved when the function closes. They check op names
(DPF5301), operand counts (:data:`~dpfc.ir.core.ARITY`, DPF5302), result presence
(DPF5310), value numbering (DPF5305) and constant ranges (DPF5309), raising
:class:`~dpfc.ir.reader.tokens.ParseFailure`.

Not responsible for: tokens (:mod:`.tokens`), the module, array, ``dpf`` and label
lines, block structure or resolving phis (:mod:`.module`), nor the IR's own
invariants such as types and dominance (:mod:`dpfc.ir.verify`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from dpfc.catalog import codes
from dpfc.diagnostics import Note, Span
from dpfc.ir.core import (
    ARITY,
    MEMORY_OPS,
    Block,
    Br,
    Exit,
    Function,
    Instr,
    Jump,
    Op,
    Terminator,
    Ty,
    result_type,
)
from dpfc.ir.reader.tokens import (
    MAX_INT,
    Line,
    error,
    read_integer,
    read_type,
    value_number,
)

OPS_BY_NAME: dict[str, Op] = {op.value: op for op in Op}
TERMINATORS = frozenset({"br", "jmp", "exit"})


@dataclass
class FunctionState:
    """What the reader knows of the function whose body it is reading."""

    function: Function
    header: Span
    values: dict[int, Instr] = field(default_factory=dict)
    # phi -> the (value number, span) of each argument, resolved at the closing brace
    phi_args: list[tuple[Instr, list[tuple[int, Span]]]] = field(default_factory=list)
    labels: dict[str, Span] = field(default_factory=dict)
    block: Block | None = None
    terminated: bool = True


def read_instr(state: FunctionState, line: Line) -> Instr:
    first = line.peek()
    number: int | None = None
    if first.kind == "value":
        number = value_number(line, line.next())
        line.expect("=", " after the value name")
    op_token = line.peek()
    if op_token.kind != "name":
        line.fail("an op name")
    line.next()
    op = OPS_BY_NAME.get(op_token.text)
    if op is None:
        raise error(codes.IR_UNKNOWN_OP, f"unknown op `{op_token.text}`", line.span(op_token))
    if (op is Op.STORE) != (number is None):
        message = (
            "`store` defines no value (write `store @ARRAY, %INDEX, %VALUE`)"
            if op is Op.STORE
            else f"`{op.value}` defines a value: write `%N = {op.value} ...`"
        )
        raise error(codes.IR_RESULT_MISMATCH, message, line.span(first))
    instr = _operands(state, line, op)
    instr.span = line.span_from(first)
    instr.hint = line.comment or None
    if number is not None:
        if number in state.values:
            raise error(
                codes.IR_VALUE_REDEFINED,
                f"value `%{number}` is defined twice",
                line.span(first),
                note=Note("first defined here", state.values[number].span),
            )
        state.values[number] = instr
    return instr


def _operands(state: FunctionState, line: Line, op: Op) -> Instr:
    """The text after the op name: immediates, type, array, then the value list."""
    imm: int | None = None
    symbol: str | None = None
    ty: Ty | None = result_type(op)
    if op is Op.CONST:
        if line.peek().kind == "name":
            ty = read_type(line)
        imm = read_integer(line, "the constant")
        limit = 1 if ty is Ty.BOOL else MAX_INT
        if imm > limit:
            raise error(
                codes.IR_INT_RANGE,
                f"constant {imm} does not fit in {ty.value if ty else 'w32'}",
                line.span(line.tokens[line.index - 1]),
            )
    elif op in (Op.PARAM, Op.HASH):
        imm = read_integer(line, "an index")
    elif op is Op.META:
        symbol = line.expect_kind("name", "a metadata field name").text
    elif op in (Op.PHI, Op.SELECT):
        ty = read_type(line)
    elif op in MEMORY_OPS:
        symbol = line.expect_kind("global", "an array name `@NAME`").text[1:]
    # `param 0`, `hash 1, %2`, `load @a, %3`: the values follow a comma
    if (op in (Op.PARAM, Op.HASH) or op in MEMORY_OPS) and line.peek().kind != "end":
        line.expect(",")
    if op is Op.PHI:
        return _phi(state, line, ty)
    start = line.peek()
    args = _value_list(state, line)
    line.done()
    expected = ARITY[op]
    if len(args) != expected:
        span = line.span_from(start) if args else line.span(start)
        raise error(
            codes.IR_OPERAND_COUNT,
            f"`{op.value}` takes {_count(expected)}, found {len(args)}",
            span,
        )
    if op in (Op.AND, Op.OR, Op.XOR):
        ty = args[0].ty
    return Instr(op, args, ty, imm, symbol)


def _phi(state: FunctionState, line: Line, ty: Ty | None) -> Instr:
    refs: list[tuple[int, Span]] = []
    labels: list[str] = []
    while True:
        if not line.at("["):
            if not refs:
                raise error(
                    codes.IR_OPERAND_COUNT,
                    "`phi` takes one `[%VALUE, LABEL]` pair per predecessor, found none",
                    line.span(line.peek()),
                )
            line.fail("`[`")
        line.next()
        token = line.expect_kind("value", "a value `%N`")
        refs.append((value_number(line, token), line.span(token)))
        line.expect(",")
        labels.append(line.expect_kind("name", "a block label").text)
        line.expect("]")
        if not line.accept(","):
            break
    line.done()
    phi = Instr(Op.PHI, [], ty, incoming=labels)
    state.phi_args.append((phi, refs))
    return phi


def _value_list(state: FunctionState, line: Line) -> list[Instr]:
    if line.peek().kind != "value":
        return []
    values = [_value(state, line)]
    while line.accept(","):
        values.append(_value(state, line))
    return values


def _value(state: FunctionState, line: Line) -> Instr:
    token = line.expect_kind("value", "a value `%N`")
    number = value_number(line, token)
    instr = state.values.get(number)
    if instr is not None:
        return instr
    if _defined_later(line.source.text, token.end, number):
        raise error(
            codes.IR_FORWARD_REFERENCE,
            f"value `%{number}` is used before its definition "
            "(only `phi` arguments may refer to later lines)",
            line.span(token),
        )
    raise error(codes.IR_UNDEFINED_VALUE, f"value `%{number}` is never defined", line.span(token))


def _defined_later(text: str, offset: int, number: int) -> bool:
    """Whether ``%number =`` starts a later line of the same function (for the message)."""
    end = re.compile(r"^[ \t]*}", re.M).search(text, offset)
    limit = end.start() if end else len(text)
    pattern = re.compile(rf"^[ \t]*%{number}[ \t]*=", re.M)
    return pattern.search(text, offset, limit) is not None


def read_terminator(state: FunctionState, line: Line) -> Terminator:
    first = line.next()
    term: Terminator
    if first.text == "br":
        cond = _value(state, line)
        line.expect(",")
        then = line.expect_kind("name", "a block label").text
        line.expect(",")
        orelse = line.expect_kind("name", "a block label").text
        term = Br(cond, then, orelse)
    elif first.text == "jmp":
        term = Jump(line.expect_kind("name", "a block label").text)
    else:
        term = _exit(state, line)
    line.done()
    term.span = line.span_from(first)
    return term


def _exit(state: FunctionState, line: Line) -> Exit:
    term = Exit()
    if line.accept("push"):
        line.expect("(")
        term.push = _value_list(state, line)
        line.expect(")", " to close `push(`")
    if line.accept("steer"):
        term.steer = line.expect_kind("name", "a steering action").text
        if line.peek().kind == "value":
            term.steer_value = _value(state, line)
    if line.accept("chain"):
        term.chain = line.expect_kind("global", "a DPF name `@NAME`").text[1:]
    term.drop_code = line.accept("drop_code")
    if line.peek().kind != "end":
        line.fail("`push(...)`, `steer`, `chain` or `drop_code` (in this order)")
    return term


def _count(n: int) -> str:
    return "no operands" if n == 0 else "1 operand" if n == 1 else f"{n} operands"
