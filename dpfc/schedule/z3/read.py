"""Between schedules and the Z3 encoding's literals: reading a model, fixing a placement.

:func:`read_schedule` turns a valuation of an :class:`~dpfc.schedule.z3.encoding.Encoding`'s
literals (whether each is true in the model Z3 found) into a
:class:`~dpfc.schedule.schedule.Schedule`; :func:`placement_literals` is the converse for
the operations' places: the literals that fix where a schedule runs its ALU, HASH and
memory operations and where its nodes end (the neighbourhood the secondary objectives
search).

Not here: evaluating literals in a Z3 model and solving (:mod:`.adapter`, the only module
importing z3), the constraints (:mod:`.program`, :mod:`.states`). Whether a schedule read
back is correct is the independent checker's (:mod:`dpfc.schedule.check`).
"""

from __future__ import annotations

from dpfc.isa import Register, SelectorKind
from dpfc.schedule.problem.domains import exit_values
from dpfc.schedule.problem.tree import INPUT_KINDS, Branch, Exit, Kind
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
from dpfc.schedule.z3.adapter import Lit, Valuation
from dpfc.schedule.z3.encoding import Encoding, Lits
from dpfc.schedule.z3.states import branch_view


def read_schedule(encoding: Encoding, true: Valuation) -> Schedule:
    """The schedule whose bundles, units, exits and bindings are the true literals."""
    problem, eus, lanes = encoding.problem, encoding.eus, encoding.lanes
    registers = encoding.registers
    false = encoding.formula.false
    spans: list[NodeSpan] = []
    for node in problem.nodes:
        last = max(k for k in range(eus) if true(encoding.last_eu_at_least(node.id, k)))
        first = 0 if node.parent is None else spans[node.parent].last_eu + 1
        spans.append(NodeSpan(node.id, first, last))
    steps: list[Step] = []
    for node in problem.nodes:
        t = node.id
        span = spans[t]
        for k in span.eus():
            selectors: list[SelectorAssign] = []
            for r, reg in enumerate(registers):
                for (kind, arg), lit in encoding.selector_choices[t, k, r].items():
                    if not true(lit):
                        continue
                    if kind == "mov":
                        selectors.append(
                            SelectorAssign(reg, SelectorKind.MOV, source=registers[arg])
                        )
                    elif kind == "imm":
                        selectors.append(SelectorAssign(reg, SelectorKind.LOAD_IMM, op=arg))
                    else:
                        selectors.append(SelectorAssign(reg, SelectorKind.HASH, op=arg))
            alus = [
                LaneOp(i, v, swapped=true(encoding.alu_swapped[t, k, i]))
                for i in range(lanes)
                for v, lit in encoding.alu_choices[t, k, i].items()
                if true(lit)
            ]
            mems = [
                LaneOp(i, v)
                for i in range(lanes)
                for v, lit in encoding.memory_choices[t, k, i].items()
                if true(lit)
            ]
            branch = None
            if isinstance(node.end, Branch) and k == span.last_eu:
                sources = []
                for name, operand in (("x", node.end.x), ("y", node.end.y)):
                    held = [
                        registers[r]
                        for r in range(encoding.register_count)
                        if true(branch_view(encoding, t, k, r, operand))
                    ]
                    immediate = true(encoding.branch_immediates[t, name])
                    sources.append(operand if immediate or not held else held[0])
                branch = BranchUse(sources[0], sources[1])
            steps.append(Step(t, k, tuple(selectors), tuple(alus), tuple(mems), branch))
    exits: list[ExitUse] = []
    for node in problem.nodes:
        if not isinstance(node.end, Exit):
            continue
        state = encoding.entry_states[node.id][spans[node.id].last_eu + 1]

        def register(v: int, state: list[Lits] = state) -> Register:
            return next(
                registers[r] for r in range(encoding.register_count) if true(state[r].get(v, false))
            )

        push = tuple(register(v) for v in node.end.push)
        steer: Source | None = None
        if node.end.steer_value is not None:
            v = node.end.steer_value
            steer = register(v) if v in exit_values(problem, node.end) else v
        exits.append(ExitUse(node.id, push, steer))
    bindings = {
        name: next(where for where, lit in places.items() if true(lit))
        for name, places in encoding.array_places.items()
    }
    prolog = read_prolog(encoding, true)
    return Schedule(problem, prolog, tuple(spans), tuple(steps), tuple(exits), bindings, "z3")


def read_prolog(encoding: Encoding, true: Valuation) -> tuple[PrologLoad, ...]:
    """The prolog loads: POP / PEEK by stack position, LOAD_MD / RAND by entry value."""
    problem = encoding.problem
    position: dict[int, int] = {}
    for r in range(encoding.register_count):
        for q, lit in encoding.prolog_positions[r].items():
            if true(lit):
                position[r] = q
    last_reader = {q: r for r, q in sorted(position.items())}
    words = {o.index: o.id for o in problem.ops if o.kind is Kind.PARAM}
    peek = next((o.id for o in problem.ops if o.kind is Kind.PEEK), None)
    loads: list[PrologLoad] = []
    for r, reg in enumerate(encoding.registers):
        if r in position:
            q = position[r]
            popped = q < problem.params and last_reader[q] == r
            word = words.get(q) if q < problem.params else peek
            kind = SelectorKind.POP if popped else SelectorKind.PEEK
            loads.append(PrologLoad(reg, kind, word))
            continue
        for v, lit in encoding.entry_states[0][0][r].items():
            op = encoding.operations[v]
            if op.kind in INPUT_KINDS and true(lit):
                kind = SelectorKind.LOAD_MD if op.kind is Kind.META else SelectorKind.RAND
                loads.append(PrologLoad(reg, kind, v))
    return tuple(loads)


def placement_literals(encoding: Encoding, schedule: Schedule) -> list[Lit]:
    """The literals that fix each node's last EU and every ALU, HASH and memory operation
    where ``schedule`` has it, where the encoding has a literal for that place (a placement
    outside its domains, a copy of an operation too late to be of use, is left free)."""
    formula = encoding.formula
    fixed: list[Lit] = []
    for span in schedule.spans:
        fixed += [
            encoding.last_eu_at_least(span.node, k)
            if k <= span.last_eu
            else formula.negation(encoding.last_eu_at_least(span.node, k))
            for k in range(encoding.eus)
        ]
    for step in schedule.steps:
        t, k = step.node, step.eu
        for units, ops in ((encoding.alu_choices, step.alu), (encoding.memory_choices, step.mem)):
            for lane in range(encoding.lanes):
                lits = units.get((t, k, lane), {})
                placed = next((lo.op for lo in ops if lo.lane == lane), None)
                if placed is not None and placed not in lits:
                    continue
                fixed += [lit if v == placed else formula.negation(lit) for v, lit in lits.items()]
        for sel in step.selectors:
            if sel.kind is SelectorKind.HASH and sel.op is not None:
                choices = encoding.selector_choices.get((t, k, encoding.registers.index(sel.dest)))
                lit = (choices or {}).get(("hash", sel.op))
                if lit is not None:
                    fixed.append(lit)
    return fixed
