"""Between schedules and the Z3 encoding's variables: reading a model, fixing a placement.

Part of :class:`~dpfc.schedule.z3model.Z3Model`: :func:`read_schedule` turns a valuation of
the model's literals (``true``: is this literal true in the model Z3 found) into a
:class:`~dpfc.schedule.schedule.Schedule`; :func:`placement_literals` is the converse for
the operations' places: the literals that fix where a schedule runs its ALU, HASH and
memory operations and where its nodes end (the neighbourhood the secondary objectives
search).

Not here: evaluating literals in a Z3 model and solving (:mod:`.z3model`, the only module
importing z3), the constraints (:mod:`.z3model_program`, :mod:`.z3model_states`).
Whether a schedule read back is correct is the independent checker's (:mod:`.check`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from dpfc.isa.bundle import Register
from dpfc.isa.opcodes import SelectorKind
from dpfc.schedule.domains import exit_values
from dpfc.schedule.problem import INPUT_KINDS, Branch, Exit, Kind
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
from dpfc.schedule.z3model_states import branch_view

if TYPE_CHECKING:
    from dpfc.schedule.z3model import Lit, Lits, Z3Model


def read_schedule(m: Z3Model, true: Callable[[Lit], bool]) -> Schedule:
    """The schedule whose bundles, units, exits and bindings are the true literals."""
    p, K, L = m.problem, m.eus, m.lanes
    spans: list[NodeSpan] = []
    for node in p.nodes:
        last = max(k for k in range(K) if true(m.ge(node.id, k)))
        first = 0 if node.parent is None else spans[node.parent].last_eu + 1
        spans.append(NodeSpan(node.id, first, last))
    steps: list[Step] = []
    for node in p.nodes:
        t = node.id
        span = spans[t]
        for k in span.eus():
            selectors: list[SelectorAssign] = []
            for r, reg in enumerate(m.regs):
                for (kind, arg), lit in m.choice[t, k, r].items():
                    if not true(lit):
                        continue
                    if kind == "mov":
                        selectors.append(SelectorAssign(reg, SelectorKind.MOV, source=m.regs[arg]))
                    elif kind == "imm":
                        selectors.append(SelectorAssign(reg, SelectorKind.LOAD_IMM, op=arg))
                    else:
                        selectors.append(SelectorAssign(reg, SelectorKind.HASH, op=arg))
            alus = [
                LaneOp(i, v, swapped=true(m.swap[t, k, i]))
                for i in range(L)
                for v, lit in m.alu[t, k, i].items()
                if true(lit)
            ]
            mems = [
                LaneOp(i, v) for i in range(L) for v, lit in m.mem[t, k, i].items() if true(lit)
            ]
            branch = None
            if isinstance(node.end, Branch) and k == span.last_eu:
                sources = []
                for name, operand in (("x", node.end.x), ("y", node.end.y)):
                    held = [
                        m.regs[r] for r in range(m.nregs) if true(branch_view(m, t, k, r, operand))
                    ]
                    immediate = true(m.bimm[t, name])
                    sources.append(operand if immediate or not held else held[0])
                branch = BranchUse(sources[0], sources[1])
            steps.append(Step(t, k, tuple(selectors), tuple(alus), tuple(mems), branch))
    exits: list[ExitUse] = []
    for node in p.nodes:
        if not isinstance(node.end, Exit):
            continue
        state = m.X[node.id][spans[node.id].last_eu + 1]

        def register(v: int, state: list[Lits] = state) -> Register:
            return next(m.regs[r] for r in range(m.nregs) if true(state[r].get(v, m.false)))

        push = tuple(register(v) for v in node.end.push)
        steer: Source | None = None
        if node.end.steer_value is not None:
            v = node.end.steer_value
            steer = register(v) if v in exit_values(p, node.end) else v
        exits.append(ExitUse(node.id, push, steer))
    bindings = {
        name: next(where for where, lit in places.items() if true(lit))
        for name, places in m.bind.items()
    }
    return Schedule(
        p, read_prolog(m, true), tuple(spans), tuple(steps), tuple(exits), bindings, "z3"
    )


def read_prolog(m: Z3Model, true: Callable[[Lit], bool]) -> tuple[PrologLoad, ...]:
    """The prolog loads: POP / PEEK by stack position, LOAD_MD / RAND by entry value."""
    p = m.problem
    position: dict[int, int] = {}
    for r in range(m.nregs):
        for q, lit in m.pos[r].items():
            if true(lit):
                position[r] = q
    last_reader = {q: r for r, q in sorted(position.items())}
    words = {o.index: o.id for o in p.ops if o.kind is Kind.PARAM}
    peek = next((o.id for o in p.ops if o.kind is Kind.PEEK), None)
    loads: list[PrologLoad] = []
    for r, reg in enumerate(m.regs):
        if r in position:
            q = position[r]
            popped = q < p.params and last_reader[q] == r
            word = words.get(q) if q < p.params else peek
            kind = SelectorKind.POP if popped else SelectorKind.PEEK
            loads.append(PrologLoad(reg, kind, word))
            continue
        for v, lit in m.X[0][0][r].items():
            op = m.ops[v]
            if op.kind in INPUT_KINDS and true(lit):
                kind = SelectorKind.LOAD_MD if op.kind is Kind.META else SelectorKind.RAND
                loads.append(PrologLoad(reg, kind, v))
    return tuple(loads)


def placement_literals(m: Z3Model, schedule: Schedule) -> list[Lit]:
    """The literals of :meth:`~dpfc.schedule.z3model.Z3Model.placement`: each node's last EU
    and every ALU, HASH and memory operation where ``schedule`` has it, where the model
    has a literal for that place."""
    fixed: list[Lit] = []
    for span in schedule.spans:
        fixed += [
            m.ge(span.node, k) if k <= span.last_eu else m._not(m.ge(span.node, k))
            for k in range(m.eus)
        ]
    for step in schedule.steps:
        t, k = step.node, step.eu
        for units, ops in ((m.alu, step.alu), (m.mem, step.mem)):
            for lane in range(m.lanes):
                lits = units.get((t, k, lane), {})
                placed = next((lo.op for lo in ops if lo.lane == lane), None)
                if placed is not None and placed not in lits:
                    continue
                fixed += [lit if v == placed else m._not(lit) for v, lit in lits.items()]
        for sel in step.selectors:
            if sel.kind is SelectorKind.HASH and sel.op is not None:
                lit = m.choice.get((t, k, m.regs.index(sel.dest)), {}).get(("hash", sel.op))
                if lit is not None:
                    fixed.append(lit)
    return fixed
