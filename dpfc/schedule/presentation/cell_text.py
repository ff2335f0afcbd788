"""What each cell of the schedule picture says, and in which colour (no geometry).

:func:`picture_text` turns a :class:`~dpfc.schedule.schedule.Schedule` into one
:class:`Band` per tree node (preorder, as ``--explain`` lists them) and the legend; the
layout (:mod:`.picture`) decides where each piece goes and wraps its paragraphs. Rows of a
band: 0 the EU's selectors, ``1 .. lanes`` the lanes (hash selector, ALU and memory
operation of that lane, one paragraph each), ``lanes + 1`` the branch unit. The texts come
from :mod:`.grid`, so the picture and the ``--explain`` grid say the same things.

Every EU a node owns gets a cell in every row (white when idle): the band shows where the
path runs. A memory access takes its array's colour; an operation on the critical chain
(ids in ``chain``) marks its cell ``critical``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from dpfc.isa import SelectorKind
from dpfc.schedule.presentation.grid import (
    control_text,
    describe,
    epilog_parts,
    line_suffix,
    node_names,
    prolog_loads,
    selector_text,
)
from dpfc.schedule.problem.tree import Branch, Exit, Kind, Operation
from dpfc.schedule.schedule import Schedule, Step

COLOURS = {
    "alu": "#cfe2ff",
    "sel": "#d3f9d8",
    "ctrl": "#e9ecef",
    "prolog": "#fff3bf",
    "epilog": "#e5dbff",
    "idle": "#ffffff",
    "band": "#f1f3f5",
}
# One background per array, in the order of their names (warm hues, never an ALU's blue);
# a DPF with more arrays than colours reuses them, the legend still names each placement.
ARRAY_COLOURS = ("#ffd8a8", "#fcc2d7", "#ffec99", "#c3fae8", "#eebefa", "#d8f5a2", "#ffc9c9")


@dataclass(frozen=True)
class CellText:
    """The paragraphs of one cell, its SVG class (``kind``) and its background."""

    paragraphs: tuple[str, ...]
    kind: str
    fill: str | None
    critical: bool = False


@dataclass(frozen=True)
class Band:
    """One tree node: ``cells[(row, eu)]`` for the EUs it owns, ``prolog[row]`` (root
    only), ``epilog`` (leaves only) and the EU after which its path ends (``last_eu``,
    None for a leaf that owns no EU: its parent branched in the profile's last EU)."""

    node: int
    title: str
    cells: dict[tuple[int, int], CellText] = field(default_factory=dict)
    prolog: dict[int, CellText] = field(default_factory=dict)
    epilog: CellText | None = None
    last_eu: int | None = None


@dataclass(frozen=True)
class PictureText:
    eus: int
    row_labels: tuple[str, ...]
    bands: tuple[Band, ...]
    legend: tuple[CellText, ...]


def picture_text(schedule: Schedule, chain: set[int]) -> PictureText:
    """The text of every cell of ``schedule``'s picture; ``chain``: critical operation ids."""
    problem = schedule.problem
    lanes = problem.profile.lanes
    names = node_names(problem)
    arrays = {
        name: ARRAY_COLOURS[i % len(ARRAY_COLOURS)]
        for i, name in enumerate(sorted(schedule.bindings))
    }
    bands = []
    for node in problem.nodes:
        span = schedule.spans[node.id]
        cells: dict[tuple[int, int], CellText] = {}
        for eu in span.eus():
            cells.update(_step_cells(schedule, schedule.step(node.id, eu), chain, arrays))
        epilog, last_eu = None, None
        if isinstance(node.end, Exit):
            parts = epilog_parts(schedule, schedule.exit(node.id)) or ["pass"]
            where = line_suffix(node.end).strip()
            if where:
                parts.append(f"({where})")
            epilog = CellText(tuple(parts), "epilog", COLOURS["epilog"])
            last_eu = span.last_eu if span.first_eu <= span.last_eu else None
        prolog = _prolog_cells(schedule) if node.id == 0 else {}
        title = _band_title(schedule, node.id, names)
        bands.append(Band(node.id, title, cells, prolog, epilog, last_eu))
    labels = ("selectors", *(f"lane {i}" for i in range(lanes)), "control")
    return PictureText(schedule.eus_used, labels, tuple(bands), _legend(schedule, chain, arrays))


def _band_title(schedule: Schedule, node: int, names: dict[int, str]) -> str:
    problem = schedule.problem
    span = schedule.spans[node]
    parent = problem.nodes[node].parent
    if parent is None:
        what = "every path starts here" if len(problem.nodes) > 1 else "the DPF's only path"
    else:
        end = problem.nodes[parent].end
        assert isinstance(end, Branch)
        side = "taken" if end.taken == node else "not-taken"
        what = f"the {side} side of {names[parent]}'s branch{line_suffix(end)}"
    if span.first_eu > span.last_eu:
        where = f"owns no EU; its epilog reads the registers EU{span.last_eu} left"
    elif span.first_eu == span.last_eu:
        where = f"EU{span.first_eu}"
    else:
        where = f"EU{span.first_eu}-EU{span.last_eu}"
    return f"{names[node]}: {what} ({where})"


def _step_cells(
    schedule: Schedule, step: Step, chain: set[int], arrays: dict[str, str]
) -> dict[tuple[int, int], CellText]:
    problem = schedule.problem
    lanes = problem.profile.lanes
    lane_ops: list[list[int]] = [[] for _ in range(lanes)]
    for sel in step.selectors:
        if sel.kind is SelectorKind.HASH and sel.op is not None:
            lane_ops[sel.dest.lane].append(sel.op)
    for lane_op in (*step.alu, *step.mem):
        lane_ops[lane_op.lane].append(lane_op.op)
    cells = {}
    selectors = selector_text(problem, step)
    cells[0, step.eu] = CellText(
        (selectors,),
        "sel" if selectors else "idle",
        COLOURS["sel"] if selectors else COLOURS["idle"],
    )
    for lane, ops in enumerate(lane_ops):
        fill, kind = COLOURS["idle"], "idle"
        for op_id in ops:
            op = problem.ops[op_id]
            if op.kind is Kind.MEM and op.array is not None:
                fill, kind = arrays.get(op.array, COLOURS["idle"]), "mem"
            elif kind == "idle":
                fill, kind = COLOURS["alu"], "alu"
        paragraphs = tuple(describe(problem, problem.ops[op_id]) for op_id in ops)
        critical = any(op_id in chain for op_id in ops)
        cells[1 + lane, step.eu] = CellText(paragraphs or ("",), kind, fill, critical)
    control = control_text(schedule, step)
    cells[lanes + 1, step.eu] = CellText(
        (control,), "ctrl" if control else "idle", COLOURS["ctrl"] if control else COLOURS["idle"]
    )
    return cells


def _prolog_cells(schedule: Schedule) -> dict[int, CellText]:
    by_lane: dict[int, list[str]] = {}
    for lane, text in prolog_loads(schedule):
        by_lane.setdefault(lane, []).append(text)
    if not by_lane:
        return {1: CellText(("nothing loaded",), "prolog", COLOURS["prolog"])}
    return {
        1 + lane: CellText(tuple(texts), "prolog", COLOURS["prolog"])
        for lane, texts in sorted(by_lane.items())
    }


def _legend(schedule: Schedule, chain: set[int], arrays: dict[str, str]) -> tuple[CellText, ...]:
    problem = schedule.problem
    entries = [
        CellText(("prolog: inputs into registers",), "prolog", COLOURS["prolog"]),
        CellText(("selectors",), "sel", COLOURS["sel"]),
        CellText(("ALU / hash",), "alu", COLOURS["alu"]),
        CellText(("branch unit",), "ctrl", COLOURS["ctrl"]),
        CellText(("epilog: push, steer, chain",), "epilog", COLOURS["epilog"]),
    ]
    for name, colour in arrays.items():
        eu, lane = schedule.bindings[name]
        entries.append(CellText((f"array {name}: EU{eu} lane {lane}",), "mem", colour))
    # Operation ids follow program order (operands first): ascending ids walk the chain.
    steps = [
        _chain_label(problem.ops[op_id])
        for op_id in sorted(chain)
        if problem.ops[op_id].kind in (Kind.ALU, Kind.HASH, Kind.MEM)
    ]
    if steps:
        path = " -> ".join(steps)
        entries.append(CellText((f"critical path: {path}",), "critical", None, critical=True))
    return tuple(entries)


def _chain_label(op: Operation) -> str:
    """An operation of the critical path in the legend: its source name, or what it does
    when it has none (``%5`` says nothing; ``store values`` does)."""
    if not op.name.startswith("%"):
        return op.name
    if op.kind is Kind.MEM and op.mem is not None:
        return f"{op.mem.name.lower()} {op.array}"
    if op.kind is Kind.HASH:
        return f"hash<{op.lane}> {op.name}"
    return f"{op.alu.name.lower()} {op.name}" if op.alu is not None else op.name
