"""shifts — every shift by an amount the target's ALU implements.

A profile's ALU may shift by a few amounts only (``TargetProfile.shift_amounts``,
docs/targets.md): LSH/RSH by any other ``B & 31`` but 0 faults the packet (docs/isa.md §6
item 4). This pass rewrites each ``shl``/``shr`` by a constant the ALU lacks into a chain of
shifts by amounts it has, whose sum is the constant's low five bits:

```
%1 = const 12           ; shift_amounts = [1, 2, 4, 8, 16, 24]
%2 = shl %0, %1                 ->      %3 = const 8
                                        %4 = shl %0, %3
                                        %5 = const 4
                                        %2 = shl %4, %5
```

Shifting left (or logically right) by ``a`` and then by ``b`` is shifting by ``a + b`` when
``a + b`` is below 32, which every partial sum of the chain is. The chain is the shortest
(ties: the larger amounts first); with {1, 2, 4, 8, 16, 24} every amount 1..31 takes at
most four shifts (31 = 24 + 4 + 2 + 1), and largest-first is the shortest.

**Requires:** the default pipeline ran (a constant amount is a ``const``: constant trees are
folded, and no ``mul`` is left whose strength reduction would add shifts).
**Ensures:** the behaviour of every function is unchanged and, without errors, the amount
of every ``shl`` and ``shr`` is a ``const`` whose low five bits are 0 or one of
``shift_amounts``; the last shift of a chain is the original instruction (its identity
and uses stay), the new ones carry its span. In a function it changed, ``cse`` then merges
equal chains and constants and ``dce`` removes the amounts no instruction reads any more.
A profile that shifts by every amount changes nothing.
**Errors** (returned, not raised; such a shift is left as it was): a constant amount no
sum of the profile's amounts makes (``SHIFT_AMOUNT_MISSING``) and a run-time amount
(``SHIFT_BY_VARIABLE``), each at the shift's span (the DPF's, for a shift the compiler made
without one).

It is not in :data:`~dpfc.passes.PASSES` (``dpfc opt`` and the pipelines do not know a
profile): the compile driver runs :func:`split_shifts` after the default pipeline, on every
form of the IR it schedules.
"""

from __future__ import annotations

from functools import cache

import dpfc.passes.cse as cse
import dpfc.passes.dce as dce
from dpfc.catalog import codes
from dpfc.diagnostics import Diagnostic, Span
from dpfc.ir import Function, Instr, Module, Op
from dpfc.passes.rewrite import const_value, make_const
from dpfc.target import TargetProfile

SHIFT_OPS = (Op.SHL, Op.SHR)


@cache
def compose(bits: int, amounts: tuple[int, ...]) -> tuple[int, ...] | None:
    """The shortest sequence of ``amounts`` summing to ``bits`` (1..31), larger amounts
    first; None when no sum makes it."""
    best: list[tuple[int, ...] | None] = [()] + [None] * bits
    for total in range(1, bits + 1):
        for amount in sorted(amounts, reverse=True):
            rest = best[total - amount] if amount <= total else None
            if rest is None:
                continue
            found = tuple(sorted((amount, *rest), reverse=True))
            current = best[total]
            if current is None or (len(found), _descending(found)) < (
                len(current),
                _descending(current),
            ):
                best[total] = found
    return best[bits]


def _descending(sequence: tuple[int, ...]) -> tuple[int, ...]:
    """A key that orders sequences of equal length larger-amounts-first."""
    return tuple(-a for a in sequence)


def split_shifts(module: Module, profile: TargetProfile) -> list[Diagnostic]:
    """Rewrite the shifts of every function of ``module`` for ``profile`` (see the module
    docstring); return the errors, in source order."""
    if not profile.shifts_restricted:
        return []
    errors: list[Diagnostic] = []
    for function in module.functions:
        errors += _split_function(function, profile)
    return errors


def _split_function(function: Function, profile: TargetProfile) -> list[Diagnostic]:
    errors: list[Diagnostic] = []
    changed = False
    for block in function.blocks:
        out: list[Instr] = []
        for instr in block.instrs:
            if instr.op in SHIFT_OPS:
                before = _split(instr, function, profile, errors)
                out.extend(before)
                changed |= bool(before)
            out.append(instr)
        block.instrs = out
    if changed:
        # one chain for equal shifts (`x << 12` and `x << 44`), one of each new constant;
        # then the amounts no shift reads any more
        cse.PASS.run_function(function)
        dce.PASS.run_function(function)
    return errors


def _split(
    shift: Instr, function: Function, profile: TargetProfile, errors: list[Diagnostic]
) -> list[Instr]:
    """Rewrite ``shift`` in place; return the instructions to insert before it."""
    value, amount = shift.args
    constant = const_value(amount)
    span = shift.span if shift.span is not None else function.span
    if constant is None:
        errors.append(_variable(profile, span, function.name))
        return []
    if profile.shifts_by(constant):
        return []
    chain = compose(constant & 31, profile.shift_amounts)
    if chain is None:
        errors.append(_missing(profile, constant, span, function.name))
        return []
    new: list[Instr] = []
    for step in chain[:-1]:
        step_amount = _const(step, span)
        value = Instr(shift.op, [value, step_amount], span=span, hint=shift.hint)
        new += [step_amount, value]
    last = _const(chain[-1], span)
    new.append(last)
    shift.args = [value, last]
    return new


def _const(value: int, span: Span | None) -> Instr:
    instr = make_const(value)
    instr.span = span
    return instr


def _amounts(profile: TargetProfile) -> str:
    return f"the ALU of `{profile.name}` shifts only by {profile.shift_text()}"


def _missing(profile: TargetProfile, amount: int, span: Span | None, dpf: str) -> Diagnostic:
    bits = amount & 31
    shown = f"{amount}" if amount == bits else f"{amount} (the amount & 31 is {bits})"
    return Diagnostic(
        codes.SHIFT_AMOUNT_MISSING,
        f"DPF `{dpf}` shifts by {shown}: {_amounts(profile)}, and no sum of those amounts "
        f"is {bits}",
        span,
        hint="shift by an amount the target has, or by a sum of them; or target a profile "
        "with more shift amounts",
    )


def _variable(profile: TargetProfile, span: Span | None, dpf: str) -> Diagnostic:
    return Diagnostic(
        codes.SHIFT_BY_VARIABLE,
        f"DPF `{dpf}` shifts by an amount known only at run time: {_amounts(profile)}, and "
        "any other amount faults the packet",
        span,
        hint="shift by a constant amount (the compiler makes any other constant from the "
        "target's amounts), or target a profile whose ALU shifts by every amount",
    )
