"""Remove dead and redundant moves from a schedule, keeping it correct.

Contract: :func:`tidy` returns a schedule whose selectors and ALU operations are a subset of
the input's, which the independent checker (:mod:`.check`) accepts whenever it accepts the
input. A schedule that stopped at the secondary objective's resource limit can carry work
nothing needs: a MOV whose register is overwritten before it is read, a speculative copy
of an ALU operation whose value is also computed elsewhere, a register shuffle
(``MOV A0, A1; MOV A2, A1; ...``) that only moves values back and forth.

Method: try removing each selector and each ALU operation in a fixed order (steps in
schedule order, then register or lane order) and keep a removal when the checker still
accepts the schedule. The checker re-executes every path symbolically and checks every use
and every epilog value, so its acceptance is exactly the correctness every schedule is held
to. A check costs well under a millisecond; the fixed order makes the result deterministic.
"""

from __future__ import annotations

from dataclasses import replace

from dpfc.schedule.check import check_schedule
from dpfc.schedule.schedule import Schedule, Step


def _without(schedule: Schedule, index: int, step: Step) -> Schedule:
    steps = list(schedule.steps)
    steps[index] = step
    return replace(schedule, steps=tuple(steps))


def tidy(schedule: Schedule) -> Schedule:
    """See the module docstring."""
    if check_schedule(schedule):
        return schedule  # not ours to repair: the search's checker will report it
    current = schedule
    for index in range(len(current.steps)):
        for unit in ("selectors", "alu"):
            position = 0
            while position < len(getattr(current.steps[index], unit)):
                step = current.steps[index]
                items = getattr(step, unit)
                kept = items[:position] + items[position + 1 :]
                candidate = _without(current, index, replace(step, **{unit: kept}))
                if check_schedule(candidate):
                    position += 1  # needed: keep it
                else:
                    current = candidate
    return current
