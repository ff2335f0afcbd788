"""The register states of the Z3 encoding: what each copy's units need and what they explain.

Part of :class:`~dpfc.schedule.z3model.Z3Model` (see its docstring for the encoding): the
state literals ``X`` (a register's value at an EU's entry) and ``S`` (after the EU's
selectors), the units of every copy (t, k) -- a selector choice per register, an ALU
operation per lane and whether its operands are crossed, a memory operation per lane --
with the states each needs, and the *support* constraints that explain every claim about
a register by the previous state and the copy's units. The functions add their
constraints to the model in the order the model calls them (Z3's search depends on the
order terms are created in).

Not here: the tree shape, array bindings, the prolog, branches, exits and per-bundle
limits (:mod:`.z3model_program`), the Z3 API and solving (:mod:`.z3model`, the only
module importing z3), reading a schedule back (:mod:`.z3model_read`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dpfc.isa.opcodes import AluOp, MemOp
from dpfc.schedule.problem import Kind
from dpfc.target.profile import BranchOperands, MemoryAddress

if TYPE_CHECKING:
    from dpfc.schedule.z3model import Choice, Lit, Lits, Z3Model


def state_variables(m: Z3Model) -> tuple[list[list[list[Lits]]], list[list[list[Lits]]]]:
    """The literals X[t][k][r][v] and S[t][k][r][v], only inside the domains (a missing
    literal is false); a register holds at most one value."""
    p, K, R = m.problem, m.eus, m.nregs
    dom = m.dom
    X: list[list[list[Lits]]] = []
    S: list[list[list[Lits]]] = []
    values = [o.id for o in p.ops if o.has_result]
    for node in p.nodes:
        t = node.id
        xs = [
            [
                {
                    v: m._bool(f"X_{t}_{k}_{r}_{v}")
                    for v in values
                    if dom.in_register(t, k, v, m._is_a(r))
                }
                for r in range(R)
            ]
            for k in range(K + 1)
        ]
        ss = [
            [
                {
                    v: m._bool(f"S_{t}_{k}_{r}_{v}")
                    for v in values
                    if m._possible[t][k] and dom.selected(t, k, v, m._is_a(r))
                }
                for r in range(R)
            ]
            for k in range(K)
        ]
        X.append(xs)
        S.append(ss)
        for row in [*xs, *ss]:
            for lits in row:
                m._at_most(None, lits.values(), 1)
    return X, S


def add_copy(m: Z3Model, t: int, k: int) -> None:
    """Selectors, ALU and memory of copy (t, k): what each needs of the states."""
    R, L = m.nregs, m.lanes
    own = m.own(t, k)
    X, S = m.X[t][k], m.S[t][k]
    consts = [o.id for o in m.ops if o.kind is Kind.CONST]
    hashes = m.dom.pure_candidates(m.problem, t, k, Kind.HASH)
    same_word = m.problem.same_word  # a HASH may compute a constant (.materialise)
    for r in range(R):
        choices: dict[Choice, Lit] = {
            ("mov", r2): m._bool(f"mov_{t}_{k}_{r}_{r2}") for r2 in range(R) if r2 != r
        }
        if not m._is_a(r):
            for c in consts:
                if c in S[r]:
                    choices["imm", c] = m._bool(f"imm_{t}_{k}_{r}_{c}")
        else:
            for h in hashes:
                word = same_word.get(h.id, h.id)
                if h.lane == r and word in S[r] and h.operands[0] in X[r]:
                    lit = choices["hash", h.id] = m._bool(f"hash_{t}_{k}_{r}_{h.id}")
                    m._add(None, m._implies(lit, X[r][h.operands[0]]))
        m.choice[t, k, r] = choices
        m._at_most(None, choices.values(), 1)
        for lit in choices.values():
            m._add(None, m._implies(lit, own))
        unselected = m._not(m._or(choices.values()))
        for v, sel in S[r].items():
            reasons = [m._and([unselected, X[r][v]])] if v in X[r] else []
            for (kind, arg), lit in choices.items():
                if kind == "mov" and v in X[arg]:
                    reasons.append(m._and([lit, X[arg][v]]))
                elif kind != "mov" and same_word.get(arg, arg) == v:
                    reasons.append(lit)
            m._add(None, m._implies(sel, m._or(reasons)))
    address_view = S if m.profile.memory_address is MemoryAddress.SELECTED else X
    alus = m.dom.pure_candidates(m.problem, t, k, Kind.ALU)
    mems = m.dom.memory_candidates(m.problem, t, k)
    for i in range(L):
        a, b = i, L + i
        lane_alu: Lits = {o.id: m._bool(f"alu_{t}_{k}_{i}_{o.id}") for o in alus}
        swap = m._bool(f"swap_{t}_{k}_{i}")
        m.alu[t, k, i], m.swap[t, k, i] = lane_alu, swap
        m._at_most(None, lane_alu.values(), 1)
        m._add(None, m._implies(swap, m._or(lane_alu.values())))
        for o in alus:
            lit = lane_alu[o.id]
            m._add(None, m._implies(lit, own))
            if o.alu is AluOp.NEG:
                (x,) = o.operands
                m._add(
                    None,
                    m._implies(lit, S[a].get(x, m.false)),
                    m._implies(lit, m._not(swap)),
                )
                continue
            x, y = o.operands
            straight = m._and([S[a].get(x, m.false), S[b].get(y, m.false)])
            if o.commutative and x != y:
                crossed = m._and([S[a].get(y, m.false), S[b].get(x, m.false)])
                m._add(
                    None,
                    m._implies(
                        lit,
                        m._and(
                            [
                                m._implies(swap, crossed),
                                m._implies(m._not(swap), straight),
                            ]
                        ),
                    ),
                )
            else:
                m._add(None, m._implies(lit, m._and([straight, m._not(swap)])))
        lane_mem: Lits = {o.id: m._bool(f"mem_{t}_{k}_{i}_{o.id}") for o in mems}
        m.mem[t, k, i] = lane_mem
        m._at_most(None, lane_mem.values(), 1)
        for o in mems:
            assert o.array is not None
            address = address_view[a].get(o.operands[0], m.false)
            need = [own, m.bind[o.array][k, i], address]
            if o.mem is not MemOp.LOAD:
                need.append(S[b].get(o.operands[1], m.false))
            m._add(None, m._implies(lane_mem[o.id], m._and(need)))


def loaded(m: Z3Model, t: int, k: int, i: int) -> Lits:
    """Memory operations of copy (t, k) lane i that write B[i] (LOAD and atomics)."""
    return {v: lit for v, lit in m.mem.get((t, k, i), {}).items() if m.ops[v].has_result}


def add_transition(m: Z3Model, t: int, k: int) -> None:
    """Every claim about the registers at EU k's entry is explained: by the previous
    own copy's units, by the parent's state (before the node starts), or not needed
    (after the node ended)."""
    parent = m.problem.nodes[t].parent
    for r, lits in enumerate(m.X[t][k]):
        for v, claim in lits.items():
            reasons: list[Lit] = []
            if k == 0:
                if parent is None:
                    continue  # the prolog's (see add_prolog)
                reasons.append(m.X[parent][0][r].get(v, m.false))
            else:
                j = k - 1
                if m._possible[t][j]:
                    reasons.append(m._and([m.own(t, j), produced(m, t, j, r, v)]))
                if parent is not None:
                    inherited = m.X[parent][k][r].get(v, m.false)
                    reasons.append(m._and([m.ge(parent, j), inherited]))
                reasons.append(m._not(m.ge(t, j)))
            m._add(None, m._implies(claim, m._or(reasons)))


def produced(m: Z3Model, t: int, k: int, r: int, v: int) -> Lit:
    """Register r holds v after copy (t, k) ran: a stage-2 write of v, or no stage-2
    write and v selected."""
    L = m.lanes
    S = m.S[t][k][r]
    writes = m.alu.get((t, k, r), {}) if m._is_a(r) else loaded(m, t, k, r - L)
    kept = m._and([m._not(m._or(writes.values())), S[v]]) if v in S else m.false
    # An operation computing a constant's word writes that constant (.materialise).
    same_word = m.problem.same_word
    wrote_v = [lit for op, lit in writes.items() if same_word.get(op, op) == v]
    return m._or([*wrote_v, kept])


def branch_view(m: Z3Model, t: int, k: int, r: int, v: int) -> Lit:
    """Register r holds v where the profile's branch reads its operands in copy (t, k)."""
    mode = m.profile.branch_operands
    if mode is BranchOperands.ENTRY:
        return m.X[t][k][r].get(v, m.false)
    if mode is BranchOperands.LOADED and not m._is_a(r):
        return produced(m, t, k, r, v)
    return m.S[t][k][r].get(v, m.false) if k < m.eus else m.false
