"""The independent schedule checker: re-verifies a Schedule without Z3.

It trusts nothing the scheduler computed beyond the :class:`Schedule` itself. For every
root-to-leaf path it runs the machine rules of docs/isa.md §3 on *symbolic* registers
(register -> operation id): the prolog in register order with a stack cursor, then each EU's
step (selectors read entry values and write at once; ALU and memory read the selected
values; stage-2 writes win), checking at every use that the register holds the operation
the problem says it should, and at the end the epilog's registers. Structural rules (spans,
one step per own EU, unit and immediate limits, register classes, array bindings and pins,
in-packet limits) are checked once per step. The search (:mod:`.search`) runs it on every
schedule; a violation is a compiler bug.

Here the rules run in order: the structural rules (:mod:`.structure_rules`; a schedule
whose shape is wrong is not run further), then the symbolic run (:mod:`.symbolic_run`),
collected in one :class:`~dpfc.schedule.violations.ViolationLog` (:mod:`.violations`).

Codes: DPF6100 spans and steps; DPF6101 prolog; DPF6102 selector; DPF6103 ALU;
DPF6104 memory; DPF6105 array binding; DPF6106 branch; DPF6107 exit; DPF6108 limits
(immediates, EUs, in-packet bundles); DPF6109 a memory operation not run exactly once on a
path through its owner (or run on another path).
"""

from __future__ import annotations

from dpfc.isa import Register
from dpfc.schedule.schedule import Schedule
from dpfc.schedule.structure_rules import check_steps, check_structure
from dpfc.schedule.symbolic_run import SymbolicRun
from dpfc.schedule.violations import ScheduleViolation, ViolationLog


def check_schedule(schedule: Schedule) -> list[ScheduleViolation]:
    """Every violation of the machine rules in ``schedule`` (empty: the schedule is valid)."""
    log = ViolationLog(schedule)
    check_structure(log)
    if log.violations:
        return log.violations
    check_steps(log)
    run = SymbolicRun(log)
    prolog = run.prolog()
    for leaf in log.problem.leaves():
        run.path(leaf, prolog)
    return log.violations


def registers_on_path(schedule: Schedule, leaf: int) -> list[dict[Register, int | None]]:
    """Symbolic registers at the entry of EU0, EU1, ... on the path to ``leaf``, and last the
    registers the epilog reads (operation ids; None = nothing the DPF needs)."""
    run = SymbolicRun(ViolationLog(schedule))
    return run.path(leaf, run.prolog())
