"""``dpfc compile --explain`` and ``--schedule-svg``: a schedule as an EU x lane grid.

One row per (EU, tree node that owns a step there): the node is named by its path from the
root (``root``, ``root.T`` = the taken side of root's branch, ``root.F``), a column per
lane says what the lane's ALU and memory unit do, then the selectors and the branch unit.
Every operation names its result, its operands (by source name) and the source line it
came from (``L12``). The prolog comes first and each epilog last. The SVG picture draws the
same grid: EUs left to right, one band per path node, a cell per lane, coloured by unit.
"""

from __future__ import annotations

from html import escape

from dpfc.isa.opcodes import SelectorKind
from dpfc.schedule.driver import ScheduleResult
from dpfc.schedule.problem import Branch, Exit, Kind, Operation, Problem
from dpfc.schedule.schedule import Schedule, Source, Step


def node_names(problem: Problem) -> dict[int, str]:
    names = {0: "root"}
    for node in problem.nodes:
        if isinstance(node.end, Branch):
            names[node.end.taken] = names[node.id] + ".T"
            names[node.end.not_taken] = names[node.id] + ".F"
    return names


def _line(op: Operation | Branch | Exit) -> str:
    span = op.span
    return f" L{span.line}" if span is not None else ""


def _value(problem: Problem, op_id: int) -> str:
    op = problem.ops[op_id]
    return (
        op.name
        if op.kind is not Kind.CONST
        else (str(op.value) if op.value < 256 else f"{op.value:#x}")
    )


def _source(problem: Problem, source: Source) -> str:
    return str(source) if not isinstance(source, int) else _value(problem, source)


def describe(problem: Problem, op: Operation) -> str:
    """``i = and tuple, INDEX L39`` style."""
    args = ", ".join(_value(problem, a) for a in op.operands)
    if op.kind is Kind.MEM:
        assert op.mem is not None
        addr = _value(problem, op.operands[0])
        data = f", {_value(problem, op.operands[1])}" if len(op.operands) > 1 else ""
        text = f"{op.mem.name.lower()} {op.array}[{addr}]{data}"
        return (f"{op.name} = {text}" if op.has_result else text) + _line(op)
    if op.kind is Kind.HASH:
        return f"{op.name} = hash<{op.lane}> {args}{_line(op)}"
    assert op.alu is not None
    return f"{op.name} = {op.alu.name.lower()} {args}{_line(op)}"


def _cells(problem: Problem, step: Step) -> list[str]:
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


def _selectors(problem: Problem, step: Step) -> str:
    parts = []
    for sel in step.selectors:
        if sel.kind is SelectorKind.MOV:
            parts.append(f"{sel.dest}<-{sel.source}")
        elif sel.kind is SelectorKind.LOAD_IMM and sel.op is not None:
            parts.append(f"{sel.dest}<-{_value(problem, sel.op)}")
    return " ".join(parts)


def _control(schedule: Schedule, step: Step) -> str:
    problem = schedule.problem
    node = problem.nodes[step.node]
    if step.branch is not None and isinstance(node.end, Branch):
        x, y = _source(problem, step.branch.x), _source(problem, step.branch.y)
        return f"{node.end.op.name} {x}, {y} -> T/F{_line(node.end)}"
    if node.is_leaf and step.eu == schedule.spans[node.id].last_eu:
        return "epilog" if step.eu == problem.profile.num_eus - 1 else "HALT"
    return ""


def _header(schedule: Schedule, result: ScheduleResult | None) -> str:
    p = schedule.problem
    status = ""
    if result is not None:
        greedy = (
            "none"
            if result.greedy_eus is None
            else f"{result.greedy_eus} EU" + ("s" if result.greedy_eus != 1 else "")
        )
        status = f", {result.status}; greedy: {greedy}"
    return (
        f"{p.module}.{p.name} on {p.profile.name}: {schedule.eus_used} EU"
        f"{'s' if schedule.eus_used != 1 else ''}{status}; {schedule.bundle_count()} bundles, "
        f"{schedule.selector_count()} selectors ({schedule.scheduler})"
    )


def format_grid(schedule: Schedule, *, result: ScheduleResult | None = None) -> str:
    p = schedule.problem
    names = node_names(p)
    lanes = p.profile.lanes
    out = [_header(schedule, result)]
    prolog = []
    for load in schedule.prolog:
        what = _value(p, load.op) if load.op is not None else "(unused)"
        prolog.append(f"{load.dest}<-{what} ({load.kind.name})")
    out.append("prolog: " + (", ".join(prolog) or "(nothing)"))
    header = ["EU", "path", *(f"lane {i}" for i in range(lanes)), "selectors", "control"]
    rows = [header]
    for step in sorted(schedule.steps, key=lambda s: (s.eu, s.node)):
        rows.append(
            [
                f"EU{step.eu}",
                names[step.node],
                *_cells(p, step),
                _selectors(p, step),
                _control(schedule, step),
            ]
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    for row in rows:
        out.append("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())
    for use in schedule.exits:
        end = p.nodes[use.node].end
        assert isinstance(end, Exit)
        parts = []
        if end.push:
            pushed = ", ".join(
                f"{_value(p, v)}({r})" for v, r in zip(end.push, use.push, strict=True)
            )
            parts.append(f"push {pushed}")
        if end.steer != "pass" or end.steer_value is not None:
            value = f" {_source(p, use.steer_value)}" if use.steer_value is not None else ""
            parts.append(f"{end.steer}{value}")
        if end.chain:
            parts.append(f"chain {end.chain}")
        if end.drop_code:
            parts.append("drop_code")
        out.append(f"epilog {names[use.node]}: {'; '.join(parts) or 'pass'}{_line(end)}")
    if schedule.bindings:
        bound = ", ".join(
            f"{a} EU{e} lane {ln}" for a, (e, ln) in sorted(schedule.bindings.items())
        )
        out.append(f"arrays: {bound}")
    return "\n".join(out) + "\n"


COLOURS = {
    "alu": "#cfe2ff",
    "mem": "#ffe5b4",
    "both": "#e2d4f0",
    "sel": "#e8f5e9",
    "ctrl": "#fde2e4",
}


def render_svg(schedule: Schedule, *, result: ScheduleResult | None = None) -> str:
    """The grid as an SVG picture (EUs as columns, one band of lane rows per path node)."""
    p = schedule.problem
    names = node_names(p)
    lanes = p.profile.lanes
    cell_w, cell_h, label_w, top = 230, 22, 90, 50
    by_eu: dict[int, list[Step]] = {}
    for step in schedule.steps:
        by_eu.setdefault(step.eu, []).append(step)
    node_order = [n.id for n in p.nodes]
    band_rows = lanes + 2  # lanes, selectors, control
    bands = {node: i for i, node in enumerate(node_order)}
    width = label_w + cell_w * max(1, schedule.eus_used) + 20
    height = top + len(node_order) * (band_rows * cell_h + 12) + 20
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        'font-family="monospace" font-size="11">',
        f'<text x="10" y="20" font-size="13">{escape(_header(schedule, result))}</text>',
    ]
    for eu in range(schedule.eus_used):
        x = label_w + eu * cell_w
        out.append(f'<text x="{x + 4}" y="{top - 8}" font-weight="bold">EU{eu}</text>')
    for node, band in bands.items():
        y0 = top + band * (band_rows * cell_h + 12)
        out.append(f'<text x="6" y="{y0 + 14}" font-weight="bold">{escape(names[node])}</text>')
        for i in range(lanes):
            out.append(f'<text x="6" y="{y0 + (i + 1) * cell_h + 14}">lane {i}</text>')
        for eu, steps in sorted(by_eu.items()):
            for step in steps:
                if step.node != node:
                    continue
                x = label_w + eu * cell_w
                cells = _cells(p, step)
                texts = [("", "sel"), *((c, "alu") for c in cells)]
                texts[0] = (_selectors(p, step), "sel")
                texts.append((_control(schedule, step), "ctrl"))
                for row, (text, unit) in enumerate(texts):
                    if row and row <= lanes:
                        lane_ops = {lo.lane for lo in step.mem}, {lo.lane for lo in step.alu}
                        lane = row - 1
                        unit = (
                            "both"
                            if lane in lane_ops[0] and lane in lane_ops[1]
                            else "mem"
                            if lane in lane_ops[0]
                            else "alu"
                        )
                    y = y0 + row * cell_h
                    fill = COLOURS[unit] if text else "#ffffff"
                    out.append(
                        f'<rect x="{x}" y="{y}" width="{cell_w - 4}" height="{cell_h - 2}" '
                        f'fill="{fill}" stroke="#999999"/>'
                    )
                    if text:
                        out.append(f'<text x="{x + 3}" y="{y + 14}">{escape(text[:36])}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"
