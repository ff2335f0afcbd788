"""What the schedule checker reports, and the one list it is collected in.

Contract: a :class:`ScheduleViolation` is one broken machine rule (a DPF61xx code, a
message, the tree node and EU when known). The rule modules (:mod:`.structure_rules`,
:mod:`.symbolic_run`) record violations in a :class:`ViolationLog` in the order the rules
run, and name operations in their messages with :meth:`ViolationLog.operation_name`.
"""

from __future__ import annotations

from dataclasses import dataclass

from dpfc.schedule.problem.tree import Problem
from dpfc.schedule.schedule import Schedule


@dataclass(frozen=True)
class ScheduleViolation:
    code: str
    message: str
    node: int | None = None
    eu: int | None = None


class ViolationLog:
    """The schedule being checked, its problem and profile, and the violations found so far."""

    def __init__(self, schedule: Schedule) -> None:
        self.schedule = schedule
        self.problem: Problem = schedule.problem
        self.profile = self.problem.profile
        self.violations: list[ScheduleViolation] = []

    def fail(self, code: str, message: str, node: int | None = None, eu: int | None = None) -> None:
        self.violations.append(ScheduleViolation(code, message, node, eu))

    def operation_name(self, op: int | None) -> str:
        """How a message names operation ``op``: its IR name and id, or "nothing"."""
        return "nothing" if op is None else f"`{self.problem.ops[op].name}` (#{op})"
