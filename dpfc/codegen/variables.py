"""The source variables a DPF's registers hold, bundle by bundle: the object's debug names.

Contract: :func:`register_variables` takes a schedule the checker accepts and gives, for the
prolog, for every step (tree node, EU) and for every leaf's epilog, which registers hold the
value of a named source variable (a parameter, a ``let``, ``meta.timestamp``): after the
prolog, after the step, and when the epilog runs (the registers it reads). Registers holding
a constant, a temporary (``%N``) or nothing the DPF needs are left out. The register
contents are the schedule checker's symbolic run (:func:`dpfc.schedule.registers_on_path`),
so the names follow the machine's timing rules exactly as the checker does.

Code generation shares identical bundles between paths; a shared bundle keeps only the
names every sharer agrees on (:func:`agreed`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from dpfc.isa import Register
from dpfc.schedule import Kind, Problem, Schedule, registers_on_path

Names = dict[Register, str]


@dataclass
class RegisterVariables:
    """Register -> variable name: after the prolog, after each step, at each leaf's epilog."""

    prolog: Names = field(default_factory=dict)
    steps: dict[tuple[int, int], Names] = field(default_factory=dict)  # (node, EU)
    exits: dict[int, Names] = field(default_factory=dict)  # leaf


def register_variables(schedule: Schedule) -> RegisterVariables:
    """The variables of every bundle of ``schedule`` (see the module docstring)."""
    problem = schedule.problem
    out = RegisterVariables()
    for leaf in problem.leaves():
        states = registers_on_path(schedule, leaf)
        out.prolog = _named(problem, states[0])
        for eu in range(len(states) - 1):
            step = schedule.step_on_path(leaf, eu)
            if step is not None:
                out.steps[(step.node, eu)] = _named(problem, states[eu + 1])
        out.exits[leaf] = _named(problem, states[-1])
    return out


def _named(problem: Problem, registers: Mapping[Register, int | None]) -> Names:
    names: Names = {}
    for reg, op_id in registers.items():
        if op_id is None:
            continue
        op = problem.ops[op_id]
        if op.kind is not Kind.CONST and op.name and not op.name.startswith("%"):
            names[reg] = op.name
    return dict(sorted(names.items()))


def agreed(first: Names, other: Names) -> Names:
    """The names two sharers of one bundle agree on."""
    return {reg: name for reg, name in first.items() if other.get(reg) == name}


__all__ = ["Names", "RegisterVariables", "agreed", "register_variables"]
