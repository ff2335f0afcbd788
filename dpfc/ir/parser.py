"""The IR text reader: the inverse of :mod:`dpfc.ir.printer` (``dpfc opt`` and the tests).

Contract: ``parse_ir(source)`` turns the text :func:`~dpfc.ir.printer.format_module` writes
into a :class:`~dpfc.ir.core.Module` whose printed form is that same text again
(``format_module(parse_ir(text)) == text`` for printer output). Malformed text raises
:class:`~dpfc.diagnostics.DiagnosticError` with one DPF53xx diagnostic at the offending
token; nothing else escapes. The reader checks what the text alone decides (syntax, op
names, operand counts, value numbering, labels unique); the invariants of the IR itself
(types, successors, dominance, the RMT rule) are :mod:`dpfc.ir.verify`'s.

The format is line-oriented, so the reader is a hand-written tokenizer plus one small
recursive-descent routine per line kind (docs/ir.md has the grammar)::

    module NAME [app INT]
    array @NAME (direct|segment) INT [signed] [pin(INT, INT)]
    dpf @NAME(INT) [KEY=VALUE ...] {
    LABEL:
      %N = OP OPERANDS              ; hint (the source name)
      store @ARRAY, %I, %V
      br %C, LABEL, LABEL  |  jmp LABEL  |  exit [push(...)] [steer NAME [%V]] [chain @NAME] [drop_code]
    }

Values are ``%N``; a value must be defined on an earlier line of the same function, except
the arguments of a ``phi`` (they may come from blocks printed later). ``; text`` is a
comment; on an instruction line it is the instruction's hint.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from dpfc.diagnostics import Diagnostic, DiagnosticError, Note, SourceFile, Span
from dpfc.ir.core import (
    BINARY_WORD_OPS,
    COMPARE_OPS,
    FETCH_OPS,
    MEMORY_OPS,
    WORD_MASK,
    ArrayDecl,
    Block,
    Br,
    Exit,
    Function,
    Instr,
    Jump,
    Module,
    Op,
    Terminator,
    Ty,
    result_type,
)

# Codes of the reader (docs/language.md "Diagnostics"); the verifier shares 5302/5306/5307.
SYNTAX = "DPF5300"
UNKNOWN_OP = "DPF5301"
OPERAND_COUNT = "DPF5302"
UNDEFINED_VALUE = "DPF5303"
FORWARD_REFERENCE = "DPF5304"
VALUE_REDEFINED = "DPF5305"
DUPLICATE_LABEL = "DPF5306"
DUPLICATE_NAME = "DPF5307"
UNKNOWN_TYPE = "DPF5308"
INT_RANGE = "DPF5309"
RESULT_MISMATCH = "DPF5310"
BLOCK_STRUCTURE = "DPF5311"

OPS_BY_NAME: dict[str, Op] = {op.value: op for op in Op}
TYPES_BY_NAME: dict[str, Ty] = {ty.value: ty for ty in Ty}
TERMINATORS = frozenset({"br", "jmp", "exit"})

# The fixed operand count of each op (PHI: one or more, checked apart).
ARITY: dict[Op, int] = {
    Op.CONST: 0,
    Op.PARAM: 0,
    Op.PEEK: 0,
    Op.RAND: 0,
    Op.META: 0,
    Op.NEG: 1,
    Op.HASH: 1,
    Op.ZEXT: 1,
    Op.SELECT: 3,
    Op.LOAD: 1,
    Op.STORE: 2,
    **{op: 2 for op in BINARY_WORD_OPS | COMPARE_OPS | FETCH_OPS},
}

_TOKEN = re.compile(
    r"(?P<ws>[ \t\r\f\v]+)"
    r"|(?P<value>%[0-9]+)"
    r"|(?P<global>@[A-Za-z_][A-Za-z0-9_.]*)"
    r"|(?P<int>[0-9][A-Za-z0-9_]*)"
    r"|(?P<name>[A-Za-z_][A-Za-z0-9_.]*)"
    r"|(?P<punct>[(),\[\]=:{}])"
)
_DECIMAL = re.compile(r"[0-9]{1,20}")
_HEX = re.compile(r"0[xX][0-9A-Fa-f]{1,16}")
_MAX_INT = WORD_MASK


@dataclass(frozen=True)
class _Token:
    kind: str  # value | global | int | name | punct | end
    text: str
    start: int
    end: int

    def describe(self) -> str:
        return "end of line" if self.kind == "end" else f"`{self.text}`"


class _Line:
    """The tokens of one line (comment removed) and a cursor over them."""

    def __init__(self, source: SourceFile, start: int, code: str, comment: str | None) -> None:
        self.source = source
        self.comment = comment
        self.tokens: list[_Token] = []
        pos = 0
        while pos < len(code):
            match = _TOKEN.match(code, pos)
            if match is None:
                span = source.span(start + pos)
                raise _error(SYNTAX, f"unexpected character `{code[pos]}`", span)
            kind = match.lastgroup
            assert kind is not None
            if kind != "ws":
                self.tokens.append(_Token(kind, match.group(), start + pos, start + match.end()))
            pos = match.end()
        end = start + len(code.rstrip())
        self.tokens.append(_Token("end", "", end, end))
        self.index = 0

    @property
    def empty(self) -> bool:
        return len(self.tokens) == 1

    def peek(self, ahead: int = 0) -> _Token:
        return self.tokens[min(self.index + ahead, len(self.tokens) - 1)]

    def next(self) -> _Token:
        token = self.peek()
        self.index = min(self.index + 1, len(self.tokens) - 1)
        return token

    def at(self, text: str) -> bool:
        token = self.peek()
        return token.kind in ("punct", "name") and token.text == text

    def accept(self, text: str) -> bool:
        if self.at(text):
            self.next()
            return True
        return False

    def expect(self, text: str, context: str = "") -> _Token:
        if not self.at(text):
            self.fail(f"`{text}`" + context)
        return self.next()

    def expect_kind(self, kind: str, what: str) -> _Token:
        if self.peek().kind != kind:
            self.fail(what)
        return self.next()

    def fail(self, expected: str) -> None:
        token = self.peek()
        raise _error(SYNTAX, f"expected {expected}, found {token.describe()}", self.span(token))

    def done(self) -> None:
        if self.peek().kind != "end":
            self.fail("end of line")

    def span(self, token: _Token) -> Span:
        return Span(self.source, token.start, max(token.end, token.start + 1))

    def span_from(self, first: _Token) -> Span:
        last = self.tokens[max(self.index - 1, 0)]
        return Span(self.source, first.start, max(last.end, first.start + 1))


class _Failure(Exception):
    def __init__(self, diagnostic: Diagnostic) -> None:
        self.diagnostic = diagnostic


def _error(code: str, message: str, span: Span | None, *, note: Note | None = None) -> _Failure:
    return _Failure(Diagnostic(code, message, span, notes=(note,) if note else ()))


def parse_ir(source: SourceFile) -> Module:
    """Read a module in the printer's text format; raises DiagnosticError (DPF53xx)."""
    try:
        return _Reader(source).module()
    except _Failure as failure:
        raise DiagnosticError([failure.diagnostic]) from None


@dataclass
class _FunctionState:
    function: Function
    header: Span
    values: dict[int, Instr] = field(default_factory=dict)
    # phi -> the (value number, span) of each argument, resolved at the closing brace
    phi_args: list[tuple[Instr, list[tuple[int, Span]]]] = field(default_factory=list)
    labels: dict[str, Span] = field(default_factory=dict)
    block: Block | None = None
    terminated: bool = True


class _Reader:
    def __init__(self, source: SourceFile) -> None:
        self.source = source
        self.text = source.text

    def lines(self) -> Iterator[_Line]:
        start = 0
        for raw in self.text.split("\n"):
            cut = raw.find(";")
            code, comment = (raw, None) if cut < 0 else (raw[:cut], raw[cut + 1 :].strip())
            yield _Line(self.source, start, code, comment)
            start += len(raw) + 1

    # -- top level ------------------------------------------------------------------------

    def module(self) -> Module:
        module: Module | None = None
        state: _FunctionState | None = None
        for line in self.lines():
            if line.empty:
                continue
            if state is not None:
                if line.at("}"):
                    self.close_function(state, line)
                    line.next()
                    line.done()
                    state = None
                else:
                    self.function_line(state, line)
                continue
            if module is None:
                module = self.module_line(line)
            elif line.at("array"):
                self.array_line(module, line)
            elif line.at("dpf"):
                state = self.dpf_line(module, line)
            else:
                line.fail("`array`, `dpf` or a comment")
        if module is None:
            end = self.source.span(len(self.text))
            raise _error(SYNTAX, "expected `module NAME` (the IR text is empty)", end)
        if state is not None:
            end = self.source.span(len(self.text.rstrip()))
            raise _error(
                BLOCK_STRUCTURE,
                f"expected `}}` to close `@{state.function.name}` before the end of the text",
                end,
                note=Note("the function starts here", state.header),
            )
        return module

    def module_line(self, line: _Line) -> Module:
        line.expect("module", " (the IR text starts with `module NAME`)")
        name = line.expect_kind("name", "a module name").text
        app_id = None
        if line.accept("app"):
            app_id = self.integer(line, "the app id")
        line.done()
        return Module(name, app_id)

    def array_line(self, module: Module, line: _Line) -> None:
        first = line.next()
        token = line.expect_kind("global", "an array name `@NAME`")
        name = token.text[1:]
        if name in module.arrays:
            raise _error(DUPLICATE_NAME, f"array `@{name}` is declared twice", line.span(token))
        mapping = line.peek()
        if not (line.accept("direct") or line.accept("segment")):
            line.fail("`direct` or `segment`")
        size = self.integer(line, "the array size")
        signed = line.accept("signed")
        pin = None
        if line.accept("pin"):
            line.expect("(")
            eu = self.integer(line, "an EU number")
            line.expect(",")
            lane = self.integer(line, "a lane number")
            line.expect(")")
            pin = (eu, lane)
        line.done()
        module.arrays[name] = ArrayDecl(
            name, mapping.text, size, pin, signed, line.span_from(first)
        )

    def dpf_line(self, module: Module, line: _Line) -> _FunctionState:
        first = line.next()
        token = line.expect_kind("global", "a DPF name `@NAME`")
        name = token.text[1:]
        if any(f.name == name for f in module.functions):
            raise _error(DUPLICATE_NAME, f"DPF `@{name}` is defined twice", line.span(token))
        line.expect("(")
        params = self.integer(line, "the parameter count")
        line.expect(")")
        attrs: dict[str, str] = {}
        while line.peek().kind == "name":
            key = line.next()
            if key.text in attrs:
                raise _error(
                    DUPLICATE_NAME, f"attribute `{key.text}` is given twice", line.span(key)
                )
            line.expect("=")
            value = line.peek()
            if value.kind not in ("name", "int"):
                line.fail("an attribute value (a name or an integer)")
            attrs[key.text] = line.next().text
        line.expect("{", " to open the DPF body")
        line.done()
        span = line.span_from(first)
        function = Function(name, params, [], attrs, span)
        module.functions.append(function)
        return _FunctionState(function, span)

    def close_function(self, state: _FunctionState, line: _Line) -> None:
        self.finish_block(state, line)
        for phi, refs in state.phi_args:
            for number, span in refs:
                if number not in state.values:
                    raise _error(UNDEFINED_VALUE, f"value `%{number}` is never defined", span)
            phi.args = [state.values[number] for number, _ in refs]

    # -- inside a function ----------------------------------------------------------------

    def function_line(self, state: _FunctionState, line: _Line) -> None:
        head = line.peek()
        if head.kind == "name" and line.peek(1).text == ":" and line.peek(1).kind == "punct":
            self.label_line(state, line)
            return
        if state.block is None or state.terminated:
            where = (
                "before the first block label"
                if state.block is None
                else f"after the terminator of block `{state.block.label}`"
            )
            raise _error(
                BLOCK_STRUCTURE,
                f"{head.describe()} {where} (expected a label `NAME:` or `}}`)",
                line.span(head),
            )
        if head.kind == "name" and head.text in TERMINATORS:
            state.block.term = self.terminator(state, line)
            state.terminated = True
            return
        state.block.instrs.append(self.instr(state, line))

    def label_line(self, state: _FunctionState, line: _Line) -> None:
        self.finish_block(state, line)
        label = line.next()
        line.next()
        line.done()
        previous = state.labels.get(label.text)
        if previous is not None:
            raise _error(
                DUPLICATE_LABEL,
                f"block label `{label.text}` is used twice in `@{state.function.name}`",
                line.span(label),
                note=Note("first used here", previous),
            )
        state.labels[label.text] = line.span(label)
        state.block = Block(label.text, [], Exit())
        state.function.blocks.append(state.block)
        state.terminated = False

    def finish_block(self, state: _FunctionState, line: _Line) -> None:
        if state.block is not None and not state.terminated:
            raise _error(
                BLOCK_STRUCTURE,
                f"block `{state.block.label}` has no terminator (`br`, `jmp` or `exit`)",
                line.span(line.peek()),
                note=Note("the block starts here", state.labels[state.block.label]),
            )

    def instr(self, state: _FunctionState, line: _Line) -> Instr:
        first = line.peek()
        number: int | None = None
        if first.kind == "value":
            number = _value_number(line, line.next())
            line.expect("=", " after the value name")
        op_token = line.peek()
        if op_token.kind != "name":
            line.fail("an op name")
        line.next()
        op = OPS_BY_NAME.get(op_token.text)
        if op is None:
            raise _error(UNKNOWN_OP, f"unknown op `{op_token.text}`", line.span(op_token))
        if (op is Op.STORE) != (number is None):
            message = (
                "`store` defines no value (write `store @ARRAY, %INDEX, %VALUE`)"
                if op is Op.STORE
                else f"`{op.value}` defines a value: write `%N = {op.value} ...`"
            )
            raise _error(RESULT_MISMATCH, message, line.span(first))
        instr = self.operands(state, line, op)
        instr.span = line.span_from(first)
        instr.hint = line.comment or None
        if number is not None:
            if number in state.values:
                raise _error(
                    VALUE_REDEFINED,
                    f"value `%{number}` is defined twice",
                    line.span(first),
                    note=Note("first defined here", state.values[number].span),
                )
            state.values[number] = instr
        return instr

    def operands(self, state: _FunctionState, line: _Line, op: Op) -> Instr:
        """The text after the op name: immediates, type, array, then the value list."""
        imm: int | None = None
        symbol: str | None = None
        ty: Ty | None = result_type(op)
        if op is Op.CONST:
            if line.peek().kind == "name":
                ty = self.type_name(line)
            imm = self.integer(line, "the constant")
            limit = 1 if ty is Ty.BOOL else _MAX_INT
            if imm > limit:
                raise _error(
                    INT_RANGE,
                    f"constant {imm} does not fit in {ty.value if ty else 'w32'}",
                    line.span(line.tokens[line.index - 1]),
                )
        elif op in (Op.PARAM, Op.HASH):
            imm = self.integer(line, "an index")
        elif op is Op.META:
            symbol = line.expect_kind("name", "a metadata field name").text
        elif op in (Op.PHI, Op.SELECT):
            ty = self.type_name(line)
        elif op in MEMORY_OPS:
            symbol = line.expect_kind("global", "an array name `@NAME`").text[1:]
        # `param 0`, `hash 1, %2`, `load @a, %3`: the values follow a comma
        if (op in (Op.PARAM, Op.HASH) or op in MEMORY_OPS) and line.peek().kind != "end":
            line.expect(",")
        if op is Op.PHI:
            return self.phi(state, line, ty)
        start = line.peek()
        args = self.value_list(state, line)
        line.done()
        expected = ARITY[op]
        if len(args) != expected:
            span = line.span_from(start) if args else line.span(start)
            raise _error(
                OPERAND_COUNT,
                f"`{op.value}` takes {_count(expected)}, found {len(args)}",
                span,
            )
        if op in (Op.AND, Op.OR, Op.XOR):
            ty = args[0].ty
        return Instr(op, args, ty, imm, symbol)

    def phi(self, state: _FunctionState, line: _Line, ty: Ty | None) -> Instr:
        refs: list[tuple[int, Span]] = []
        labels: list[str] = []
        while True:
            if not line.at("["):
                if not refs:
                    raise _error(
                        OPERAND_COUNT,
                        "`phi` takes one `[%VALUE, LABEL]` pair per predecessor, found none",
                        line.span(line.peek()),
                    )
                line.fail("`[`")
            line.next()
            token = line.expect_kind("value", "a value `%N`")
            refs.append((_value_number(line, token), line.span(token)))
            line.expect(",")
            labels.append(line.expect_kind("name", "a block label").text)
            line.expect("]")
            if not line.accept(","):
                break
        line.done()
        phi = Instr(Op.PHI, [], ty, incoming=labels)
        state.phi_args.append((phi, refs))
        return phi

    def value_list(self, state: _FunctionState, line: _Line) -> list[Instr]:
        if line.peek().kind != "value":
            return []
        values = [self.value(state, line)]
        while line.accept(","):
            values.append(self.value(state, line))
        return values

    def value(self, state: _FunctionState, line: _Line) -> Instr:
        token = line.expect_kind("value", "a value `%N`")
        number = _value_number(line, token)
        instr = state.values.get(number)
        if instr is not None:
            return instr
        if self.defined_later(token.end, number):
            raise _error(
                FORWARD_REFERENCE,
                f"value `%{number}` is used before its definition "
                "(only `phi` arguments may refer to later lines)",
                line.span(token),
            )
        raise _error(UNDEFINED_VALUE, f"value `%{number}` is never defined", line.span(token))

    def defined_later(self, offset: int, number: int) -> bool:
        """Whether ``%number =`` starts a later line of the same function (for the message)."""
        end = re.compile(r"^[ \t]*}", re.M).search(self.text, offset)
        limit = end.start() if end else len(self.text)
        pattern = re.compile(rf"^[ \t]*%{number}[ \t]*=", re.M)
        return pattern.search(self.text, offset, limit) is not None

    def terminator(self, state: _FunctionState, line: _Line) -> Terminator:
        first = line.next()
        term: Terminator
        if first.text == "br":
            cond = self.value(state, line)
            line.expect(",")
            then = line.expect_kind("name", "a block label").text
            line.expect(",")
            orelse = line.expect_kind("name", "a block label").text
            term = Br(cond, then, orelse)
        elif first.text == "jmp":
            term = Jump(line.expect_kind("name", "a block label").text)
        else:
            term = self.exit(state, line)
        line.done()
        term.span = line.span_from(first)
        return term

    def exit(self, state: _FunctionState, line: _Line) -> Exit:
        term = Exit()
        if line.accept("push"):
            line.expect("(")
            term.push = self.value_list(state, line)
            line.expect(")", " to close `push(`")
        if line.accept("steer"):
            term.steer = line.expect_kind("name", "a steering action").text
            if line.peek().kind == "value":
                term.steer_value = self.value(state, line)
        if line.accept("chain"):
            term.chain = line.expect_kind("global", "a DPF name `@NAME`").text[1:]
        term.drop_code = line.accept("drop_code")
        if line.peek().kind != "end":
            line.fail("`push(...)`, `steer`, `chain` or `drop_code` (in this order)")
        return term

    # -- tokens ---------------------------------------------------------------------------

    def type_name(self, line: _Line) -> Ty:
        token = line.peek()
        if token.kind != "name":
            line.fail("a type (`w32` or `i1`)")
        ty = TYPES_BY_NAME.get(token.text)
        if ty is None:
            raise _error(
                UNKNOWN_TYPE,
                f"unknown type `{token.text}` (expected `w32` or `i1`)",
                line.span(token),
            )
        line.next()
        return ty

    def integer(self, line: _Line, what: str) -> int:
        token = line.peek()
        if token.kind != "int":
            line.fail(what)
        line.next()
        text = token.text
        if _HEX.fullmatch(text):
            value = int(text, 16)
        elif _DECIMAL.fullmatch(text):
            value = int(text)
        elif re.fullmatch(r"0[xX][0-9A-Fa-f]+|[0-9]+", text):
            value = _MAX_INT + 1  # too many digits to be a word
        else:
            raise _error(SYNTAX, f"malformed integer `{text}`", line.span(token))
        if value > _MAX_INT:
            raise _error(INT_RANGE, f"integer `{text}` does not fit in 32 bits", line.span(token))
        return value


def _value_number(line: _Line, token: _Token) -> int:
    digits = token.text[1:]
    if len(digits) > 9:
        raise _error(INT_RANGE, f"value number `{token.text}` is too large", line.span(token))
    return int(digits)


def _count(n: int) -> str:
    return "no operands" if n == 0 else "1 operand" if n == 1 else f"{n} operands"
