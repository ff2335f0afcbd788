"""``dpfc compile --explain``: a schedule as an EU x lane grid of text.

One row per (EU, tree node that owns a step there): the node is named by its path from the
root (``root``, ``root.T`` = the taken side of root's branch, ``root.F``), a column per
lane says what the lane's ALU and memory unit do, then the selectors and the branch unit.
Every operation names its result, its operands (by source name) and the source line it
came from (``L12``). The prolog comes first and each epilog last.

The public helpers here (the text of a lane cell, of the selectors, of the prolog and of an
epilog) are also what the picture (:mod:`.picture`, ``--schedule-svg``) writes in its
cells, so the grid and the picture always say the same thing.
"""

from __future__ import annotations

from dpfc.diagnostics import Span
from dpfc.isa import SelectorKind
from dpfc.schedule.problem.tree import Branch, Exit, Kind, Operation, Problem
from dpfc.schedule.result import ScheduleResult
from dpfc.schedule.schedule import ExitUse, Schedule, Source, Step


def node_names(problem: Problem) -> dict[int, str]:
    names = {0: "root"}
    for node in problem.nodes:
        if isinstance(node.end, Branch):
            names[node.end.taken] = names[node.id] + ".T"
            names[node.end.not_taken] = names[node.id] + ".F"
    return names


def line_suffix(op: Operation | Branch | Exit) -> str:
    span = op.span
    return f" L{span.line}" if span is not None else ""


def value_name(problem: Problem, op_id: int) -> str:
    op = problem.ops[op_id]
    return (
        op.name
        if op.kind is not Kind.CONST
        else (str(op.value) if op.value < 256 else f"{op.value:#x}")
    )


def source_name(problem: Problem, source: Source) -> str:
    return str(source) if not isinstance(source, int) else value_name(problem, source)


def describe(problem: Problem, op: Operation) -> str:
    """``i = and tuple, INDEX L39`` style."""
    args = ", ".join(value_name(problem, a) for a in op.operands)
    if op.kind is Kind.MEM:
        assert op.mem is not None
        addr = value_name(problem, op.operands[0])
        data = f", {value_name(problem, op.operands[1])}" if len(op.operands) > 1 else ""
        text = f"{op.mem.name.lower()} {op.array}[{addr}]{data}"
        return (f"{op.name} = {text}" if op.has_result else text) + line_suffix(op)
    if op.kind is Kind.HASH:
        return f"{op.name} = hash<{op.lane}> {args}{line_suffix(op)}"
    assert op.alu is not None
    return f"{op.name} = {op.alu.name.lower()} {args}{line_suffix(op)}"


def lane_cells(problem: Problem, step: Step) -> list[str]:
    lanes = problem.profile.lanes
    cells = [""] * lanes
    for sel in step.selectors:
        if sel.kind is SelectorKind.HASH and sel.op is not None:
            cells[sel.dest.lane] = describe(problem, problem.ops[sel.op])
    for unit in (step.alu, step.mem):
        for lane_op in unit:
            text = describe(problem, problem.ops[lane_op.op])
            cells[lane_op.lane] = f"{cells[lane_op.lane]}; {text}" if cells[lane_op.lane] else text
    return cells


def selector_text(problem: Problem, step: Step) -> str:
    parts = []
    for sel in step.selectors:
        if sel.kind is SelectorKind.MOV:
            parts.append(f"{sel.dest}<-{sel.source}")
        elif sel.kind is SelectorKind.LOAD_IMM and sel.op is not None:
            parts.append(f"{sel.dest}<-{value_name(problem, sel.op)}")
    return " ".join(parts)


def control_text(schedule: Schedule, step: Step) -> str:
    problem = schedule.problem
    node = problem.nodes[step.node]
    if step.branch is not None and isinstance(node.end, Branch):
        x, y = source_name(problem, step.branch.x), source_name(problem, step.branch.y)
        return f"{node.end.op.name} {x}, {y} -> T/F{line_suffix(node.end)}"
    if node.is_leaf and step.eu == schedule.spans[node.id].last_eu:
        return "epilog" if step.eu == problem.profile.num_eus - 1 else "HALT"
    return ""


def header_line(schedule: Schedule, result: ScheduleResult | None) -> str:
    p = schedule.problem
    status = ""
    if result is not None:
        status = f", {result.status}; greedy: {result.greedy}"
        if result.secondary == "":  # the greedy scheduler was asked for: nothing to compare
            status = f", {result.status}"
    return (
        f"{p.module}.{p.name} on {p.profile.name}: {_count(schedule.eus_used, 'EU')}{status}; "
        f"{_count(schedule.bundle_count(), 'bundle')}, "
        f"{_count(schedule.selector_count(), 'selector')} ({schedule.scheduler})"
    )


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'s' if n != 1 else ''}"


def prolog_loads(schedule: Schedule) -> list[tuple[int, str]]:
    """Each prolog load as (lane of its register, ``A0<-key (POP)``), in register order."""
    loads = []
    for load in schedule.prolog:
        what = value_name(schedule.problem, load.op) if load.op is not None else "(unused)"
        loads.append((load.dest.lane, f"{load.dest}<-{what} ({load.kind.name})"))
    return loads


def epilog_parts(schedule: Schedule, use: ExitUse, *, lines: bool = False) -> list[str]:
    """What leaf ``use.node``'s epilog does: ``push key(A3), v0(A1)``, the steering action
    and its value, ``chain M.dpf``, ``drop_code``; empty for a plain pass. ``lines``: each
    part ends with the line of the statement that asked for it (`` L18``)."""
    p = schedule.problem
    end = p.nodes[use.node].end
    assert isinstance(end, Exit)
    actions = end.actions

    def line(span: Span | None) -> str:
        where = span or end.span
        return f" L{where.line}" if lines and where is not None else ""

    parts = []
    if end.push:
        pushed = ", ".join(
            f"{value_name(p, v)}({r})" for v, r in zip(end.push, use.push, strict=True)
        )
        parts.append(f"push {pushed}{line(actions.push)}")
    if end.steer != "pass" or end.steer_value is not None:
        value = f" {source_name(p, use.steer_value)}" if use.steer_value is not None else ""
        parts.append(f"{end.steer}{value}{line(actions.steer)}")
    if end.chain:
        parts.append(f"chain {end.chain}{line(actions.chain)}")
    if end.drop_code:
        parts.append(f"drop_code{line(actions.drop_code)}")
    return parts


def format_grid(schedule: Schedule, *, result: ScheduleResult | None = None) -> str:
    p = schedule.problem
    names = node_names(p)
    lanes = p.profile.lanes
    out = [header_line(schedule, result)]
    prolog = [text for _, text in prolog_loads(schedule)]
    out.append("prolog: " + (", ".join(prolog) or "(nothing)"))
    header = ["EU", "path", *(f"lane {i}" for i in range(lanes)), "selectors", "control"]
    rows = [header]
    for step in sorted(schedule.steps, key=lambda s: (s.eu, s.node)):
        rows.append(
            [
                f"EU{step.eu}",
                names[step.node],
                *lane_cells(p, step),
                selector_text(p, step),
                control_text(schedule, step),
            ]
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    for row in rows:
        out.append("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())
    for use in schedule.exits:
        end = p.nodes[use.node].end
        assert isinstance(end, Exit)
        # Each action with its statement's line; a plain pass with the path's end.
        parts = epilog_parts(schedule, use, lines=True)
        text = "; ".join(parts) if parts else f"pass{line_suffix(end)}"
        out.append(f"epilog {names[use.node]}: {text}")
    if schedule.bindings:
        bound = ", ".join(
            f"{a} EU{e} lane {ln}" for a, (e, ln) in sorted(schedule.bindings.items())
        )
        out.append(f"arrays: {bound}")
    return "\n".join(out) + "\n"
