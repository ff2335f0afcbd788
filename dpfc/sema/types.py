"""The types of the checker: ``u32``, ``i32``, ``bool``, and the untyped integer.

An integer literal (and a ``for`` variable) is :attr:`SemType.INT` until its context gives
it a type: ``x + 1`` is ``u32`` when ``x`` is. :attr:`SemType.ERROR` marks an expression
already reported, so one mistake is not reported again by every expression around it.
"""

from __future__ import annotations

from enum import Enum

from dpfc.syntax import ast


class SemType(Enum):
    U32 = "u32"
    I32 = "i32"
    BOOL = "bool"
    INT = "integer"  # an untyped integer constant
    ERROR = "<error>"

    @property
    def is_word(self) -> bool:
        return self in (SemType.U32, SemType.I32, SemType.INT)

    def describe(self) -> str:
        return "an integer literal" if self is SemType.INT else f"`{self.value}`"


def from_ast(name: ast.TypeName) -> SemType:
    return {
        ast.TypeName.U32: SemType.U32,
        ast.TypeName.I32: SemType.I32,
        ast.TypeName.BOOL: SemType.BOOL,
    }[name]


def join_words(a: SemType, b: SemType) -> SemType | None:
    """The type of an operation on words of types ``a`` and ``b``; None if they differ."""
    if SemType.ERROR in (a, b):
        return SemType.ERROR
    if a is SemType.INT:
        return b
    if b is SemType.INT or a is b:
        return a
    return None


def assignable(value: SemType, target: SemType) -> bool:
    """Can a value of type ``value`` initialise or be stored into a ``target``?"""
    if SemType.ERROR in (value, target):
        return True
    if value is SemType.INT:
        return target in (SemType.U32, SemType.I32)
    return value is target


def concrete(value: SemType) -> SemType:
    """The type a ``let`` without annotation gives its value (integers default to u32)."""
    return SemType.U32 if value is SemType.INT else value


def is_signed(a: SemType, b: SemType = SemType.INT) -> bool:
    """Compares, min and max are signed exactly when an operand is ``i32``."""
    return SemType.I32 in (a, b)


def cast_hint(value: SemType, target: SemType) -> str | None:
    """The hint of a mistyped value: the conversion that makes a ``value`` fit a ``target``
    (None when no cast helps, or when either side is already reported)."""
    if value is SemType.ERROR or target is SemType.ERROR:
        return None
    if target is SemType.BOOL and value.is_word:
        return "compare explicitly: `x != 0`"
    if value in (SemType.U32, SemType.I32, SemType.BOOL) and target is not SemType.BOOL:
        return f"convert with `as {target.value}`"
    return None
