"""The program-level constraints of the Z3 encoding: tree shape, arrays, prolog, ends, limits.

Part of :class:`~dpfc.schedule.z3model.Z3Model` (see its docstring for the encoding): the
order encoding of each node's last EU and how a node follows its parent's branch; where
each array is bound (one (EU, lane), pins, one array per lane); the prolog's stack
positions and which inputs the registers hold at entry; that a branch's operands and an
exit's values are held where they are read; that every memory operation runs once; and
the per-bundle limits (immediates, packet bundles). The functions add their constraints
to the model in the order the model calls them (Z3's search depends on the order terms
are created in); constraints that can explain a failure go into named groups
("pin:<array>", "exit:<node>", "immediates", "packet-bundles").

Not here: the register states and the units of each copy (:mod:`.z3model_states`), the
Z3 API and solving (:mod:`.z3model`, the only module importing z3), reading a schedule
back (:mod:`.z3model_read`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dpfc.schedule.domains import exit_values
from dpfc.schedule.problem import Branch, Exit, Kind
from dpfc.schedule.z3model_states import branch_view

if TYPE_CHECKING:
    from dpfc.schedule.z3model import Lit, Z3Model


def add_shape(m: Z3Model) -> None:
    """The order encoding of each node's last EU, its bounds, and a child starting one EU
    after its parent's branch (the literals ``m._ge`` exist already)."""
    p, K = m.problem, m.eus
    full = m.profile.num_eus
    for node in p.nodes:
        t = node.id
        m._add(None, m.ge(t, 0))
        for k in range(1, K):
            m._add(None, m._implies(m.ge(t, k), m.ge(t, k - 1)))
        for k in range(min(m.bounds.last[t] + 1, K)):
            m._add(None, m.ge(t, k))
        if m.bounds.last[t] >= K:
            m._add(None, m.false)
        if isinstance(node.end, Branch) and full > K:
            # A branch before the profile's last EU selects bundles of the next EU,
            # which must exist within the EU budget; in the last EU it selects epilogs.
            m._add(None, m._not(m.ge(t, K - 1)))
        if node.parent is not None:
            for k in range(K):
                # The node starts one EU after its parent's branch...
                if k + 1 < K:
                    m._add(None, m._implies(m.ge(node.parent, k), m.ge(t, k + 1)))
                elif isinstance(node.end, Branch):
                    m._add(None, m._not(m.ge(node.parent, k)))
                # ... except a leaf after a branch in the profile's last EU: it owns
                # nothing and its epilog reads what that EU left (ge(t, K-1) is then
                # already implied by the order encoding and its parent's last EU).


def add_bindings(m: Z3Model) -> None:
    p, K, L = m.problem, m.eus, m.lanes
    accessed = sorted({o.array for o in p.ops if o.kind is Kind.MEM and o.array is not None})
    for name in accessed:
        places = {(k, i): m._bool(f"bind_{name}_{k}_{i}") for k in range(K) for i in range(L)}
        m.bind[name] = places
        m._add(None, m._or(places.values()))
        m._at_most(None, places.values(), 1)
        info = p.arrays.get(name)
        if info is not None and info.pin is not None:
            m._add(f"pin:{name}", places.get(info.pin, m.false))
    # One array per lane: two would share the lane's virtual address space (DPF7004).
    # Only where two arrays may meet (a pinned array binds nowhere else), so a DPF
    # whose arrays are all pinned apart gets the model it had without the rule.
    for k in range(K):
        for i in range(L):
            meet = [
                m.bind[name][k, i]
                for name in accessed
                if (info := p.arrays.get(name)) is None or info.pin is None or info.pin == (k, i)
            ]
            if len(meet) > 1:
                m._at_most(None, meet, 1)


def add_prolog(m: Z3Model) -> tuple[list[dict[int, Lit]], list[Lit]]:
    """The prolog: each register's stack position (parameters popped in register order,
    the peeked word), what the registers hold at entry; returns the position literals
    and, per register, the condition that the prolog loads it."""
    p, R = m.problem, m.nregs
    params = p.params
    peek = next((o.id for o in p.ops if o.kind is Kind.PEEK), None)
    positions = params + 1 if peek is not None else params
    pos = [{q: m._bool(f"pos_{r}_{q}") for q in range(positions)} for r in range(R)]
    for r in range(R):
        m._at_most(None, pos[r].values(), 1)
    # Positions are non-decreasing in register order (A0..A(L-1), B0..).
    for r in range(R):
        for q in range(1, positions):
            at_least_q = m._or(pos[r][j] for j in range(q, positions))
            for r2 in range(r + 1, R):
                for j in range(q):
                    m._add(None, m._implies(pos[r2][j], m._not(at_least_q)))
    for q in range(params):  # every parameter is popped
        m._add(None, m._or(pos[r][q] for r in range(R)))
    entry = m.X[0][0]
    prolog_loads: list[Lit] = []
    for r in range(R):
        reads = m._or(pos[r].values())
        loads = [reads]
        for v, lit in entry[r].items():
            op = m.ops[v]
            if op.kind is Kind.PARAM:
                m._add(None, m._implies(lit, pos[r].get(op.index, m.false)))
            elif op.kind is Kind.PEEK:
                m._add(None, m._implies(lit, pos[r].get(params, m.false)))
            elif op.kind in (Kind.META, Kind.RAND) or v == m.zero:
                # Loaded by LOAD_MD / RAND, or 0: a register the prolog leaves alone.
                m._add(None, m._implies(lit, m._not(reads)))
                if op.kind is not Kind.CONST:
                    loads.append(lit)
            else:
                m._add(None, m._not(lit))
        prolog_loads.append(m._or(loads))
    for op in p.ops:  # each RAND selector draws its own word
        if op.kind is Kind.RAND:
            m._at_most(None, (entry[r][op.id] for r in range(R) if op.id in entry[r]), 1)
    return pos, prolog_loads


def add_branch(m: Z3Model, t: int, branch: Branch) -> None:
    for name, operand in (("x", branch.x), ("y", branch.y)):
        is_const = m.ops[operand].kind is Kind.CONST
        as_imm = m._bool(f"bimm_{t}_{name}") if is_const else m.false
        m.bimm[t, name] = as_imm
        for k in range(m.eus):
            if not m._possible[t][k]:
                continue
            held = m._or(branch_view(m, t, k, r, operand) for r in range(m.nregs))
            m._add(None, m._implies(m.at(t, k), m._or([as_imm, held])))


def add_exit(m: Z3Model, t: int, exit_: Exit) -> None:
    needed = exit_values(m.problem, exit_)
    for k in range(m.eus):
        state = m.X[t][k + 1]
        held = [m._or(state[r].get(v, m.false) for r in range(m.nregs)) for v in needed]
        if held:
            m._add(f"exit:{t}", m._implies(m.at(t, k), m._and(held)))
        if len(needed) > 1:
            # Redundant: as many registers as values hold one of them. A pseudo-Boolean
            # count lets the solver see register pressure at once (a pigeonhole argument
            # that clauses alone take exponentially long to refute).
            holding = [m._or(state[r].get(v, m.false) for v in needed) for r in range(m.nregs)]
            m._add(None, m._implies(m.at(t, k), m._atleast(holding, len(needed))))


def add_memory_once(m: Z3Model, t: int) -> None:
    for o in m.ops:
        if o.kind is Kind.MEM and o.owner == t:
            places = [
                lits[o.id] for (node, _, _), lits in m.mem.items() if node == t and o.id in lits
            ]
            m._add(None, m._or(places))
            m._at_most(None, places, 1)


def add_immediates(m: Z3Model) -> None:
    limit = m.profile.immediates_per_bundle
    consts = [o.id for o in m.ops if o.kind is Kind.CONST]
    for node in m.problem.nodes:
        t = node.id
        for k in range(m.eus):
            if not m._possible[t][k]:
                continue
            used = []
            for c in consts:
                uses = [m.choice[t, k, r].get(("imm", c), m.false) for r in range(m.lanes, m.nregs)]
                if isinstance(node.end, Branch):
                    for name, operand in (("x", node.end.x), ("y", node.end.y)):
                        if operand == c:
                            uses.append(m._and([m.at(t, k), m.bimm[t, name]]))
                used.append(m._or(uses))
            m._at_most("immediates", used, limit)


def add_packet_bundles(m: Z3Model) -> None:
    """At most the profile's packet bundles per stage (the "packet" placement)."""
    p, K = m.problem, m.eus
    for k in range(K):
        owned = [m.own(n.id, k) for n in p.nodes if m._possible[n.id][k]]
        m._at_most("packet-bundles", owned, m.profile.packet_bundles_per_stage)
