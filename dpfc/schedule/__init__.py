"""Scheduling: place a DPF's operations on SwitchVM's EUs, lanes and registers.

Contract: :func:`schedule_module` schedules every DPF of an optimised IR module on one
target profile (each in every equivalent form, the best kept; arrays bound by one DPF stay
bound for the others) and :func:`schedule_problem` one problem: the greedy schedule, then
the fewest EUs Z3 can find under deterministic resource limits, then bundles and
instructions, never worse than greedy in any measure; every schedule returned passed the
independent checker (:func:`check_schedule`). A DPF that cannot fit raises
:class:`~dpfc.diagnostics.DiagnosticError` (DPF60xx) saying what was proven. The same
input, options and z3 version give the same schedule (docs/scheduling.md).

Sub-packages, in the order a DPF passes through them: :mod:`.problem` (IR -> problem,
bounds, domains), :mod:`.greedy` (the baseline), :mod:`.z3` (the Z3 encoding and the EU
search), :mod:`.presentation` (the grid and the picture). Here: :mod:`.schedule` (the
result's shape), :mod:`.check` (the checker: :mod:`.structure_rules`,
:mod:`.symbolic_run`, :mod:`.violations`), :mod:`.measures`, :mod:`.tidy`,
:mod:`.result` (options and results), :mod:`.search` (one problem), :mod:`.module` (a
module's DPFs and their forms), :mod:`.cache`, :mod:`.diagnose` (why a DPF does not fit).
"""

from dpfc.schedule.check import check_schedule, registers_on_path
from dpfc.schedule.diagnose.solver import from_core
from dpfc.schedule.greedy import greedy_schedule
from dpfc.schedule.measures import CodeBytes, Measures, measure
from dpfc.schedule.module import schedule_module
from dpfc.schedule.presentation import (
    format_grid,
    layout,
    render_png,
    render_svg,
    require_pillow,
)
from dpfc.schedule.problem import (
    ArrayInfo,
    Bounds,
    Branch,
    Exit,
    Kind,
    Operation,
    Problem,
    TreeNode,
    build_problem,
    compute_bounds,
)
from dpfc.schedule.result import DEFAULT_GUARD_S, ScheduleOptions, ScheduleResult
from dpfc.schedule.schedule import (
    BranchUse,
    ExitUse,
    LaneOp,
    NodeSpan,
    PrologLoad,
    Schedule,
    SelectorAssign,
    Source,
    Step,
)
from dpfc.schedule.search import ScheduleBug, schedule_problem
from dpfc.schedule.tidy import tidy
from dpfc.schedule.violations import ScheduleViolation
from dpfc.schedule.z3 import Budget, WallClockGuard

__all__ = [
    "DEFAULT_GUARD_S",
    "ArrayInfo",
    "Bounds",
    "Branch",
    "BranchUse",
    "Budget",
    "CodeBytes",
    "Exit",
    "ExitUse",
    "Kind",
    "LaneOp",
    "Measures",
    "NodeSpan",
    "Operation",
    "Problem",
    "PrologLoad",
    "Schedule",
    "ScheduleBug",
    "ScheduleOptions",
    "ScheduleResult",
    "ScheduleViolation",
    "SelectorAssign",
    "Source",
    "Step",
    "TreeNode",
    "WallClockGuard",
    "build_problem",
    "check_schedule",
    "compute_bounds",
    "format_grid",
    "from_core",
    "greedy_schedule",
    "layout",
    "measure",
    "registers_on_path",
    "render_png",
    "render_svg",
    "require_pillow",
    "schedule_module",
    "schedule_problem",
    "tidy",
]
