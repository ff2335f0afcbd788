"""The register states of the Z3 encoding: what each copy's units need and what they explain.

Constraint families of :mod:`.model` over an :class:`~dpfc.schedule.z3.encoding.Encoding`
(see its docstring for the literals): the state literals (a register's value at an EU's
entry, and after the EU's selectors), the units of every copy (t, k) -- a selector choice
per register, an ALU operation per lane and whether its operands are crossed, a memory
operation per lane -- with the states each needs, and the *support* constraints that
explain every claim about a register by the previous state and the copy's units. The
functions add their constraints in the order the model calls them (Z3's search depends on
the order terms are created in).

Not here: the tree shape, array bindings, the prolog, branches, exits and per-bundle
limits (:mod:`.program`), the Z3 API and solving (:mod:`.adapter`, the only module
importing z3), reading a schedule back (:mod:`.read`).
"""

from __future__ import annotations

from dpfc.isa import AluOp, MemOp
from dpfc.schedule.problem.tree import Kind
from dpfc.schedule.z3.adapter import Lit
from dpfc.schedule.z3.encoding import Choice, Encoding, Lits, States
from dpfc.target import BranchOperands, MemoryAddress


def add_state_variables(encoding: Encoding) -> None:
    """The literals of ``entry_states`` and ``selected_states``, only inside the domains (a
    missing literal is false); a register holds at most one value."""
    formula, problem = encoding.formula, encoding.problem
    eus, registers = encoding.eus, encoding.register_count
    domains, is_a = encoding.domains, encoding.is_a_register
    entry_states: States = []
    selected_states: States = []
    values = [o.id for o in problem.ops if o.has_result]
    for node in problem.nodes:
        t = node.id
        entry = [
            [
                {
                    v: formula.variable(f"X_{t}_{k}_{r}_{v}")
                    for v in values
                    if domains.in_register(t, k, v, is_a(r))
                }
                for r in range(registers)
            ]
            for k in range(eus + 1)
        ]
        selected = [
            [
                {
                    v: formula.variable(f"S_{t}_{k}_{r}_{v}")
                    for v in values
                    if encoding.copy_possible[t][k] and domains.selected(t, k, v, is_a(r))
                }
                for r in range(registers)
            ]
            for k in range(eus)
        ]
        entry_states.append(entry)
        selected_states.append(selected)
        for row in [*entry, *selected]:
            for lits in row:
                formula.add_at_most(None, lits.values(), 1)
    encoding.entry_states, encoding.selected_states = entry_states, selected_states


def add_copy(encoding: Encoding, t: int, k: int) -> None:
    """Selectors, ALU and memory of copy (t, k): what each needs of the states."""
    formula, problem = encoding.formula, encoding.problem
    registers, lanes = encoding.register_count, encoding.lanes
    own = encoding.owns(t, k)
    entry, selected = encoding.entry_states[t][k], encoding.selected_states[t][k]
    consts = [o.id for o in encoding.operations if o.kind is Kind.CONST]
    hashes = encoding.domains.pure_candidates(problem, t, k, Kind.HASH)
    same_word = problem.same_word  # a HASH may compute a constant (.materialise)
    for r in range(registers):
        choices: dict[Choice, Lit] = {
            ("mov", r2): formula.variable(f"mov_{t}_{k}_{r}_{r2}")
            for r2 in range(registers)
            if r2 != r
        }
        if not encoding.is_a_register(r):
            for c in consts:
                if c in selected[r]:
                    choices["imm", c] = formula.variable(f"imm_{t}_{k}_{r}_{c}")
        else:
            for h in hashes:
                word = same_word.get(h.id, h.id)
                if h.lane == r and word in selected[r] and h.operands[0] in entry[r]:
                    lit = choices["hash", h.id] = formula.variable(f"hash_{t}_{k}_{r}_{h.id}")
                    formula.add(None, formula.implies(lit, entry[r][h.operands[0]]))
        encoding.selector_choices[t, k, r] = choices
        formula.add_at_most(None, choices.values(), 1)
        for lit in choices.values():
            formula.add(None, formula.implies(lit, own))
        unselected = formula.negation(formula.any_of(choices.values()))
        for v, sel in selected[r].items():
            reasons = [formula.all_of([unselected, entry[r][v]])] if v in entry[r] else []
            for (kind, arg), lit in choices.items():
                if kind == "mov" and v in entry[arg]:
                    reasons.append(formula.all_of([lit, entry[arg][v]]))
                elif kind != "mov" and same_word.get(arg, arg) == v:
                    reasons.append(lit)
            formula.add(None, formula.implies(sel, formula.any_of(reasons)))
    address_view = selected if encoding.profile.memory_address is MemoryAddress.SELECTED else entry
    alus = encoding.domains.pure_candidates(problem, t, k, Kind.ALU)
    mems = encoding.domains.memory_candidates(problem, t, k)
    for i in range(lanes):
        a, b = i, lanes + i
        lane_alu: Lits = {o.id: formula.variable(f"alu_{t}_{k}_{i}_{o.id}") for o in alus}
        swap = formula.variable(f"swap_{t}_{k}_{i}")
        encoding.alu_choices[t, k, i], encoding.alu_swapped[t, k, i] = lane_alu, swap
        formula.add_at_most(None, lane_alu.values(), 1)
        formula.add(None, formula.implies(swap, formula.any_of(lane_alu.values())))
        for o in alus:
            lit = lane_alu[o.id]
            formula.add(None, formula.implies(lit, own))
            if o.alu is AluOp.NEG:
                (x,) = o.operands
                formula.add(
                    None,
                    formula.implies(lit, selected[a].get(x, formula.false)),
                    formula.implies(lit, formula.negation(swap)),
                )
                continue
            x, y = o.operands
            straight = formula.all_of(
                [selected[a].get(x, formula.false), selected[b].get(y, formula.false)]
            )
            if o.commutative and x != y:
                crossed = formula.all_of(
                    [selected[a].get(y, formula.false), selected[b].get(x, formula.false)]
                )
                formula.add(
                    None,
                    formula.implies(
                        lit,
                        formula.all_of(
                            [
                                formula.implies(swap, crossed),
                                formula.implies(formula.negation(swap), straight),
                            ]
                        ),
                    ),
                )
            else:
                formula.add(
                    None,
                    formula.implies(lit, formula.all_of([straight, formula.negation(swap)])),
                )
        lane_mem: Lits = {o.id: formula.variable(f"mem_{t}_{k}_{i}_{o.id}") for o in mems}
        encoding.memory_choices[t, k, i] = lane_mem
        formula.add_at_most(None, lane_mem.values(), 1)
        for o in mems:
            assert o.array is not None
            address = address_view[a].get(o.operands[0], formula.false)
            need = [own, encoding.array_places[o.array][k, i], address]
            if o.mem is not MemOp.LOAD:
                need.append(selected[b].get(o.operands[1], formula.false))
            formula.add(None, formula.implies(lane_mem[o.id], formula.all_of(need)))


def loaded(encoding: Encoding, t: int, k: int, i: int) -> Lits:
    """Memory operations of copy (t, k) lane i that write B[i] (LOAD and atomics)."""
    return {
        v: lit
        for v, lit in encoding.memory_choices.get((t, k, i), {}).items()
        if encoding.operations[v].has_result
    }


def add_transition(encoding: Encoding, t: int, k: int) -> None:
    """Every claim about the registers at EU k's entry is explained: by the previous
    own copy's units, by the parent's state (before the node starts), or not needed
    (after the node ended)."""
    formula = encoding.formula
    parent = encoding.problem.nodes[t].parent
    for r, lits in enumerate(encoding.entry_states[t][k]):
        for v, claim in lits.items():
            reasons: list[Lit] = []
            if k == 0:
                if parent is None:
                    continue  # the prolog's (see add_prolog)
                reasons.append(encoding.entry_states[parent][0][r].get(v, formula.false))
            else:
                j = k - 1
                if encoding.copy_possible[t][j]:
                    reasons.append(
                        formula.all_of([encoding.owns(t, j), produced(encoding, t, j, r, v)])
                    )
                if parent is not None:
                    inherited = encoding.entry_states[parent][k][r].get(v, formula.false)
                    reasons.append(
                        formula.all_of([encoding.last_eu_at_least(parent, j), inherited])
                    )
                reasons.append(formula.negation(encoding.last_eu_at_least(t, j)))
            formula.add(None, formula.implies(claim, formula.any_of(reasons)))


def produced(encoding: Encoding, t: int, k: int, r: int, v: int) -> Lit:
    """Register r holds v after copy (t, k) ran: a stage-2 write of v, or no stage-2
    write and v selected."""
    formula = encoding.formula
    selected = encoding.selected_states[t][k][r]
    if encoding.is_a_register(r):
        writes = encoding.alu_choices.get((t, k, r), {})
    else:
        writes = loaded(encoding, t, k, r - encoding.lanes)
    kept = (
        formula.all_of([formula.negation(formula.any_of(writes.values())), selected[v]])
        if v in selected
        else formula.false
    )
    # An operation computing a constant's word writes that constant (.materialise).
    same_word = encoding.problem.same_word
    wrote_v = [lit for op, lit in writes.items() if same_word.get(op, op) == v]
    return formula.any_of([*wrote_v, kept])


def branch_view(encoding: Encoding, t: int, k: int, r: int, v: int) -> Lit:
    """Register r holds v where the profile's branch reads its operands in copy (t, k)."""
    mode = encoding.profile.branch_operands
    false = encoding.formula.false
    if mode is BranchOperands.ENTRY:
        return encoding.entry_states[t][k][r].get(v, false)
    if mode is BranchOperands.LOADED and not encoding.is_a_register(r):
        return produced(encoding, t, k, r, v)
    return encoding.selected_states[t][k][r].get(v, false) if k < encoding.eus else false
