"""Words, values and machine state of the AST evaluator (:mod:`.run`).

Contract: a :class:`Value` is a word in ``[0, 2**32)`` (a bool is 0/1) with just enough of a
type to tell signed from unsigned (``None``: an untyped literal or loop variable, which
adapts to the other operand, :func:`join_types`). :func:`arith` wraps ``+ - *`` and shifts by
the right operand & 31 (``>>`` logical); :data:`COMPARE` and :data:`FETCH` are the comparison
and fetch-op tables. :class:`State` is what one run reads and leaves behind (stack, memory
as array -> {index: word} with absent words 0, metadata, rand stream, and the outputs);
:func:`read_cell` / :func:`write_cell` apply the bounds rule of a :class:`Memory` (an index
at or beyond the declared size reads 0 and writes nothing). :class:`EvalError` is the one
error of the oracle: the input is not a program the checker accepts.

Not responsible for signedness of comparisons (the caller converts with
:func:`dpfc.isa.semantics.to_signed` first), resolving names (:mod:`.program`), walking
the tree (:mod:`.frame`), or turning :class:`~dpfc.ir.interp.Inputs` into a state and
the state into an :class:`~dpfc.ir.interp.Outcome` (:mod:`.run`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field

from dpfc.syntax import ast

WORD_MASK = 0xFFFF_FFFF


class EvalError(Exception):
    """The program is not one the checker accepts (the oracle assumes checked input)."""


# -- types ------------------------------------------------------------------------------------

# The evaluator only needs to know whether a value is signed: None stands for an untyped
# integer (a literal, a loop variable), which takes the type of the other operand.
ValueType = ast.TypeName | None


def join_types(a: ValueType, b: ValueType) -> ValueType:
    if ast.TypeName.I32 in (a, b):
        return ast.TypeName.I32
    if ast.TypeName.U32 in (a, b):
        return ast.TypeName.U32
    if ast.TypeName.BOOL in (a, b):
        return ast.TypeName.BOOL
    return None


@dataclass
class Value:
    """A word and whether it is signed (its type; ``None`` for an untyped integer)."""

    word: int
    type: ValueType


def arith(op: ast.BinaryOp, a: int, b: int) -> int:
    if op is ast.BinaryOp.ADD:
        return (a + b) & WORD_MASK
    if op is ast.BinaryOp.SUB:
        return (a - b) & WORD_MASK
    if op is ast.BinaryOp.MUL:
        return (a * b) & WORD_MASK
    if op is ast.BinaryOp.BIT_AND:
        return a & b
    if op is ast.BinaryOp.BIT_OR:
        return a | b
    if op is ast.BinaryOp.BIT_XOR:
        return a ^ b
    if op is ast.BinaryOp.SHL:
        return (a << (b & 31)) & WORD_MASK
    if op is ast.BinaryOp.SHR:
        return a >> (b & 31)
    raise EvalError(f"unknown operator `{op.value}`")  # pragma: no cover


COMPARE = {
    ast.BinaryOp.EQ: lambda a, b: a == b,
    ast.BinaryOp.NE: lambda a, b: a != b,
    ast.BinaryOp.LT: lambda a, b: a < b,
    ast.BinaryOp.LE: lambda a, b: a <= b,
    ast.BinaryOp.GT: lambda a, b: a > b,
    ast.BinaryOp.GE: lambda a, b: a >= b,
}


# FAMAX / FAMIN compare unsigned whatever the array's element type (docs/isa.md decision 5).
FETCH: dict[str, Callable[[int, int], int]] = {
    "fetch_add": lambda old, data: (old + data) & WORD_MASK,
    "fetch_and": lambda old, data: old & data,
    "fetch_or": lambda old, data: old | data,
    "fetch_max": max,
    "fetch_min": min,
}


# -- memory and the machine state -------------------------------------------------------------


@dataclass(frozen=True)
class Memory:
    """An array as a run sees it: its IR name, declared size and element type."""

    key: str  # the name in Inputs.memory / Outcome.memory
    size: int
    elem: ast.TypeName


@dataclass
class State:
    """The inputs one run reads and the outputs it accumulates."""

    stack: list[int]
    nparams: int
    memory: dict[str, dict[int, int]]  # array -> {index: word}; absent words are 0
    meta: Mapping[str, int]
    rand: Iterator[int]
    pushed: list[int] = field(default_factory=list)
    steer: str = "pass"
    steer_value: int | None = None
    chain: str | None = None
    drop_code: bool = False
    rand_draws: int = 0


def read_cell(state: State, mem: Memory, index: int) -> int:
    if index >= mem.size:  # unmapped: reads 0
        return 0
    return state.memory.get(mem.key, {}).get(index, 0)


def write_cell(state: State, mem: Memory, index: int, value: int) -> None:
    if index >= mem.size:  # unmapped: writes nothing
        return
    state.memory.setdefault(mem.key, {})[index] = value & WORD_MASK
