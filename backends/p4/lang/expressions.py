"""P4-16 expressions for the structured emitter: one frozen node per form, rendered inline.

Contract: every node is an immutable, hashable value whose :meth:`Expr.p4` returns its P4
text on one line, deterministically; compound forms are fully parenthesised so that the
text never depends on P4's operator precedence. Expressions overload Python's arithmetic
and bitwise operators (``a + b``, ``a & b``, ``a << 3``); comparisons are methods
(``a.eq(b)``, ``a.lt(b)``) so that ``==`` keeps its value meaning and nodes stay hashable.
A plain ``int`` where an expression is expected becomes a literal (:func:`lit`).

Not responsible for: statements, declarations, indentation or whole programs (the
line-based nodes and :func:`render` in :mod:`.statements`), nor for checking that an
expression is well typed P4.
"""

from __future__ import annotations

from dataclasses import dataclass


class Expr:
    """A P4 expression (rendered by :meth:`p4`)."""

    def p4(self) -> str:
        raise NotImplementedError

    # -- operators -----------------------------------------------------------------------------
    def _bin(self, op: str, other: Expr | int) -> Expr:
        return Bin(op, self, lit(other))

    def __add__(self, other: Expr | int) -> Expr:
        return self._bin("+", other)

    def __sub__(self, other: Expr | int) -> Expr:
        return self._bin("-", other)

    def __mul__(self, other: Expr | int) -> Expr:
        return self._bin("*", other)

    def __radd__(self, other: int) -> Expr:
        return Bin("+", lit(other), self)

    def __and__(self, other: Expr | int) -> Expr:
        return self._bin("&", other)

    def __or__(self, other: Expr | int) -> Expr:
        return self._bin("|", other)

    def __xor__(self, other: Expr | int) -> Expr:
        return self._bin("^", other)

    def __lshift__(self, other: Expr | int) -> Expr:
        return self._bin("<<", other)

    def __rshift__(self, other: Expr | int) -> Expr:
        return self._bin(">>", other)

    def __invert__(self) -> Expr:
        return Un("~", self)

    def eq(self, other: Expr | int) -> Expr:
        return self._bin("==", other)

    def ne(self, other: Expr | int) -> Expr:
        return self._bin("!=", other)

    def lt(self, other: Expr | int) -> Expr:
        return self._bin("<", other)

    def le(self, other: Expr | int) -> Expr:
        return self._bin("<=", other)

    def gt(self, other: Expr | int) -> Expr:
        return self._bin(">", other)

    def ge(self, other: Expr | int) -> Expr:
        return self._bin(">=", other)

    def land(self, other: Expr) -> Expr:
        return Bin("&&", self, other)

    def lor(self, other: Expr) -> Expr:
        return Bin("||", self, other)

    def lnot(self) -> Expr:
        return Un("!", self)

    def cast(self, width: int) -> Expr:
        return Cast(f"bit<{width}>", self)

    def signed(self, width: int) -> Expr:
        return Cast(f"int<{width}>", self)

    def slice(self, hi: int, lo: int) -> Expr:
        return Slice(self, hi, lo)

    def concat(self, other: Expr) -> Expr:
        return Bin("++", self, other)

    def dot(self, member: str) -> Expr:
        return Name(f"{self.p4()}.{member}")

    def at(self, index: int) -> Expr:
        return Name(f"{self.p4()}[{index}]")

    def call(self, *args: Expr | int) -> Expr:
        return Call(self, tuple(lit(a) for a in args))


@dataclass(frozen=True)
class Name(Expr):
    """A name or member path (``meta.r0``, ``hdr.sv.gas``, ``pkt.extract``)."""

    path: str

    def p4(self) -> str:
        return self.path


@dataclass(frozen=True)
class Lit(Expr):
    value: int
    width: int | None = None

    def p4(self) -> str:
        text = str(self.value) if self.value < 10 else f"0x{self.value:x}"
        return text if self.width is None else f"{self.width}w{text}"


@dataclass(frozen=True)
class Bool(Expr):
    value: bool

    def p4(self) -> str:
        return "true" if self.value else "false"


@dataclass(frozen=True)
class Bin(Expr):
    op: str
    left: Expr
    right: Expr

    def p4(self) -> str:
        return f"({self.left.p4()} {self.op} {self.right.p4()})"


@dataclass(frozen=True)
class Un(Expr):
    op: str
    operand: Expr

    def p4(self) -> str:
        return f"{self.op}({self.operand.p4()})"


@dataclass(frozen=True)
class Cast(Expr):
    type: str
    operand: Expr

    def p4(self) -> str:
        return f"(({self.type})({self.operand.p4()}))"


@dataclass(frozen=True)
class Slice(Expr):
    operand: Expr
    hi: int
    lo: int

    def p4(self) -> str:
        return f"{self.operand.p4()}[{self.hi}:{self.lo}]"


@dataclass(frozen=True)
class Mux(Expr):
    cond: Expr
    then: Expr
    other: Expr

    def p4(self) -> str:
        return f"({self.cond.p4()} ? {self.then.p4()} : {self.other.p4()})"


@dataclass(frozen=True)
class Call(Expr):
    target: Expr
    args: tuple[Expr, ...] = ()

    def p4(self) -> str:
        return f"{self.target.p4()}({', '.join(a.p4() for a in self.args)})"


@dataclass(frozen=True)
class Tuple(Expr):
    items: tuple[Expr, ...]

    def p4(self) -> str:
        return "{ " + ", ".join(i.p4() for i in self.items) + " }"


@dataclass(frozen=True)
class DefaultInit(Expr):
    """``{ ... }``: every field of a struct set to its type's default (zero, invalid)."""

    def p4(self) -> str:
        return "{ ... }"


def lit(value: Expr | int, width: int | None = None) -> Expr:
    return value if isinstance(value, Expr) else Lit(value, width)


def n(path: str) -> Name:
    return Name(path)


def mux(cond: Expr, then: Expr | int, other: Expr | int) -> Expr:
    return Mux(cond, lit(then), lit(other))
