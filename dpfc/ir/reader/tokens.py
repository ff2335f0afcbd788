"""The IR text reader's tokens: one line's tokenizer and cursor, and its error value.

Contract: :class:`Line` splits one line of IR text (its ``; comment`` already cut off by
the caller) into :class:`Token` s and walks them with ``peek``/``next``/``accept``/``expect``;
every "expected X, found Y" message (DPF5300) comes from :meth:`Line.fail`, so all syntax
errors read alike. :func:`read_integer`, :func:`read_type` and :func:`value_number` read
the tokens whose text needs checking (word range, type names, ``%N`` numbers). Errors are
raised as :class:`ParseFailure` (one :class:`~dpfc.diagnostics.Diagnostic`, made by
:func:`error`), which :func:`dpfc.ir.reader.module.parse_ir` turns into a
:class:`~dpfc.diagnostics.DiagnosticError`.

Not responsible for: what a line means (the module and block structure is
:mod:`.module`'s, instructions and terminators are :mod:`.instructions`').
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from dpfc.catalog import codes
from dpfc.diagnostics import Diagnostic, Note, SourceFile, Span
from dpfc.ir.core import WORD_MASK, Ty

TYPES_BY_NAME: dict[str, Ty] = {ty.value: ty for ty in Ty}

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
MAX_INT = WORD_MASK


@dataclass(frozen=True)
class Token:
    kind: str  # value | global | int | name | punct | end
    text: str
    start: int
    end: int

    def describe(self) -> str:
        return "end of line" if self.kind == "end" else f"`{self.text}`"


class Line:
    """The tokens of one line (comment removed) and a cursor over them."""

    def __init__(self, source: SourceFile, start: int, code: str, comment: str | None) -> None:
        self.source = source
        self.comment = comment
        self.tokens: list[Token] = []
        pos = 0
        while pos < len(code):
            match = _TOKEN.match(code, pos)
            if match is None:
                span = source.span(start + pos)
                raise error(codes.IR_SYNTAX, f"unexpected character `{code[pos]}`", span)
            kind = match.lastgroup
            assert kind is not None
            if kind != "ws":
                self.tokens.append(Token(kind, match.group(), start + pos, start + match.end()))
            pos = match.end()
        end = start + len(code.rstrip())
        self.tokens.append(Token("end", "", end, end))
        self.index = 0

    @property
    def empty(self) -> bool:
        return len(self.tokens) == 1

    def peek(self, ahead: int = 0) -> Token:
        return self.tokens[min(self.index + ahead, len(self.tokens) - 1)]

    def next(self) -> Token:
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

    def expect(self, text: str, context: str = "") -> Token:
        if not self.at(text):
            self.fail(f"`{text}`" + context)
        return self.next()

    def expect_kind(self, kind: str, what: str) -> Token:
        if self.peek().kind != kind:
            self.fail(what)
        return self.next()

    def fail(self, expected: str) -> None:
        token = self.peek()
        raise error(
            codes.IR_SYNTAX, f"expected {expected}, found {token.describe()}", self.span(token)
        )

    def done(self) -> None:
        if self.peek().kind != "end":
            self.fail("end of line")

    def span(self, token: Token) -> Span:
        return Span(self.source, token.start, max(token.end, token.start + 1))

    def span_from(self, first: Token) -> Span:
        last = self.tokens[max(self.index - 1, 0)]
        return Span(self.source, first.start, max(last.end, first.start + 1))


class ParseFailure(Exception):
    def __init__(self, diagnostic: Diagnostic) -> None:
        self.diagnostic = diagnostic


def error(code: str, message: str, span: Span | None, *, note: Note | None = None) -> ParseFailure:
    return ParseFailure(Diagnostic(code, message, span, notes=(note,) if note else ()))


def read_type(line: Line) -> Ty:
    token = line.peek()
    if token.kind != "name":
        line.fail("a type (`w32` or `i1`)")
    ty = TYPES_BY_NAME.get(token.text)
    if ty is None:
        raise error(
            codes.IR_UNKNOWN_TYPE,
            f"unknown type `{token.text}` (expected `w32` or `i1`)",
            line.span(token),
        )
    line.next()
    return ty


def read_integer(line: Line, what: str) -> int:
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
        value = MAX_INT + 1  # too many digits to be a word
    else:
        raise error(codes.IR_SYNTAX, f"malformed integer `{text}`", line.span(token))
    if value > MAX_INT:
        raise error(
            codes.IR_INT_RANGE, f"integer `{text}` does not fit in 32 bits", line.span(token)
        )
    return value


def value_number(line: Line, token: Token) -> int:
    digits = token.text[1:]
    if len(digits) > 9:
        raise error(
            codes.IR_INT_RANGE, f"value number `{token.text}` is too large", line.span(token)
        )
    return int(digits)
