"""Windows on the in-packet code in the P4 program: reading it with constant slices.

Contract: the parser left every code data byte, in order, right-aligned in the wide field
``meta.code``. :func:`align` moves byte 0 to the top; a *window* is a copy of that field
shifted so that the next byte to read is at its top, read with constant slices
(:func:`top`, :func:`field_at`, :func:`bits`) and moved on with constant shifts
(:func:`moved`, :func:`advance`). Shifts on bmv2 take at most 8-bit amounts and p4c folds
constant ones beyond 256, so a shift by a run-time number of bytes is one shift by the low
bits and 128-bit steps (:func:`shift`); reading each byte at a run-time offset instead made
p4c's compile time explode.

Every byte position, bit slice and size comes from the layout tables of
:mod:`dpfc.encoding.layouts` (a :class:`~dpfc.encoding.Field` of a
:class:`~dpfc.encoding.ByteLayout`), the tables the Python encoder and decoder use.
Not responsible for what is read: the walk (:mod:`.decode`) and the fetch (:mod:`.fetch`).
"""

from __future__ import annotations

from dpfc.backends.p4.lang import Assign, Bool, Expr, If, Lit, Stmt, n
from dpfc.backends.p4.layout import Layout
from dpfc.encoding import ByteLayout, Field

meta = n("meta")
CONDITIONAL_FIRST = 2  # ctrl ops below are JMP and HALT (no operands, no second PC)


def shift(var: str, amount: Expr, limit: int, unit: int, op: str = ">>") -> list[Stmt]:
    """``var op= unit * amount`` for amounts below ``limit``, in shifts p4c accepts (an
    8-bit amount, constants of at most 256: one shift by the low bits, then 128-bit steps)."""
    out: list[Stmt] = []
    low = 256 // unit  # amounts of one shift: unit * (amount % low) < 256
    by_low = ((amount & (low - 1)) * unit).cast(8)
    out.append(Assign(n(var), n(var) >> by_low if op == ">>" else n(var) << by_low))
    step = low
    while step < limit:
        repeats = step * unit // 128
        moved = n(var) >> 128 if op == ">>" else n(var) << 128
        out.append(If((amount & step).ne(0), [Assign(n(var), moved)] * repeats))
        step *= 2
    return out


def top(layout: Layout, window: str, first: int, count: int = 1) -> Expr:
    """Bytes first .. first+count-1 of a left-aligned window (constant positions)."""
    hi = layout.code_bits - 1 - 8 * first
    return meta.dot(window).slice(hi, hi - 8 * count + 1)


def field_at(layout: Layout, window: str, field: Field, base: int = 0) -> Expr:
    """A field of the layout that starts ``base`` bytes from the top of a window: its bytes
    when it is made of whole bytes, else a bit slice of the one byte that holds it."""
    if field.whole_bytes:
        return top(layout, window, base + field.byte, field.nbytes)
    assert field.nbytes == 1, field
    return top(layout, window, base + field.byte).slice(field.high, field.low)


def bits(value: Expr, table: ByteLayout, name: str) -> Expr:
    """Field ``name`` of a value that holds the whole of layout ``table``."""
    low = table.shift(name)
    return value.slice(low + table.field(name).width - 1, low)


def times(count: Expr, size: int) -> Expr:
    """``count * size`` for a power of two ``size``, as a shift (none for 1)."""
    assert size & (size - 1) == 0, size
    shift = size.bit_length() - 1
    return count << shift if shift else count


def moved(window: str, nbytes: int) -> Stmt:
    """Move a left-aligned window a constant ``nbytes`` bytes on."""
    return Assign(meta.dot(window), meta.dot(window) << 8 * nbytes)


def advance(window: str, nbytes: Expr, limit: int) -> list[Stmt]:
    """Move a left-aligned window ``nbytes`` (< ``limit``) bytes on."""
    return shift(f"meta.{window}", nbytes, limit, 8, "<<")


def align(layout: Layout) -> list[Stmt]:
    """Left-align the in-packet code: byte 0 at the top of meta.code."""
    m = meta.dot
    return [
        Assign(m("code_total"), m("code_len0") + m("code_len1")),
        Assign(m("w_pad"), Lit(layout.code_bits // 8, 16) - m("code_total")),
        *shift("meta.code", m("w_pad"), layout.code_bits // 8 + 1, 8, "<<"),
    ]


def takes_value(layout: Layout, action_bits: Expr) -> Expr:
    """Whether the steering action whose code is ``action_bits`` takes a value."""
    result: Expr = Bool(False)
    for steering in layout.profile.steering:
        if steering.takes_value:
            result = result.lor(action_bits.eq(steering.code))
    return result
