"""The program-level constraints of the Z3 encoding: tree shape, arrays, prolog, ends, limits.

Constraint families of :mod:`.model` over an :class:`~dpfc.schedule.z3.encoding.Encoding`
(see its docstring for the literals): the order encoding of each node's last EU and how a
node follows its parent's branch; where each array is bound (one (EU, lane), pins, one
array per lane); the prolog's stack positions and which inputs the registers hold at
entry; that a branch's operands and an exit's values are held where they are read; that
every memory operation runs once; and the per-bundle limits (immediates, packet bundles).
The functions add their constraints in the order the model calls them (Z3's search
depends on the order terms are created in); constraints that can explain a failure go
into named groups ("pin:<array>", "exit:<node>", "immediates", "packet-bundles").

Not here: the register states and the units of each copy (:mod:`.states`), the Z3 API and
solving (:mod:`.adapter`, the only module importing z3), reading a schedule back
(:mod:`.read`).
"""

from __future__ import annotations

from dpfc.schedule.problem.domains import exit_values
from dpfc.schedule.problem.tree import Branch, Exit, Kind
from dpfc.schedule.z3.adapter import Lit
from dpfc.schedule.z3.encoding import Encoding
from dpfc.schedule.z3.states import branch_view


def add_shape(encoding: Encoding) -> None:
    """The order encoding of each node's last EU, its bounds, and a child starting one EU
    after its parent's branch (the literals ``encoding.last_eu_literals`` exist already)."""
    formula, problem, eus = encoding.formula, encoding.problem, encoding.eus
    at_least = encoding.last_eu_at_least
    full = encoding.profile.num_eus
    for node in problem.nodes:
        t = node.id
        formula.add(None, at_least(t, 0))
        for k in range(1, eus):
            formula.add(None, formula.implies(at_least(t, k), at_least(t, k - 1)))
        for k in range(min(encoding.bounds.last[t] + 1, eus)):
            formula.add(None, at_least(t, k))
        if encoding.bounds.last[t] >= eus:
            formula.add(None, formula.false)
        if isinstance(node.end, Branch) and full > eus:
            # A branch before the profile's last EU selects bundles of the next EU,
            # which must exist within the EU budget; in the last EU it selects epilogs.
            formula.add(None, formula.negation(at_least(t, eus - 1)))
        if node.parent is not None:
            for k in range(eus):
                # The node starts one EU after its parent's branch...
                if k + 1 < eus:
                    formula.add(None, formula.implies(at_least(node.parent, k), at_least(t, k + 1)))
                elif isinstance(node.end, Branch):
                    formula.add(None, formula.negation(at_least(node.parent, k)))
                # ... except a leaf after a branch in the profile's last EU: it owns
                # nothing and its epilog reads what that EU left (its last EU is then
                # already implied by the order encoding and its parent's last EU).


def add_bindings(encoding: Encoding) -> None:
    formula, problem = encoding.formula, encoding.problem
    eus, lanes = encoding.eus, encoding.lanes
    accessed = sorted({o.array for o in problem.ops if o.kind is Kind.MEM and o.array is not None})
    places_of = encoding.array_places
    for name in accessed:
        places = {
            (k, i): formula.variable(f"bind_{name}_{k}_{i}")
            for k in range(eus)
            for i in range(lanes)
        }
        places_of[name] = places
        formula.add(None, formula.any_of(places.values()))
        formula.add_at_most(None, places.values(), 1)
        info = problem.arrays.get(name)
        if info is not None and info.pin is not None:
            formula.add(f"pin:{name}", places.get(info.pin, formula.false))
        else:
            # Where another array of the module lives (Problem.reserved): never here too.
            for place in sorted(problem.reserved):
                if place in places:
                    formula.add("reserved", formula.negation(places[place]))
    # One array per lane: two would share the lane's virtual address space (DPF7004).
    # Only where two arrays may meet (a pinned array binds nowhere else), so a DPF
    # whose arrays are all pinned apart gets the model it had without the rule.
    for k in range(eus):
        for i in range(lanes):
            meet = [
                places_of[name][k, i]
                for name in accessed
                if (info := problem.arrays.get(name)) is None
                or info.pin is None
                or info.pin == (k, i)
            ]
            if len(meet) > 1:
                formula.add_at_most(None, meet, 1)


def add_prolog(encoding: Encoding) -> None:
    """The prolog: each register's stack position (parameters popped in register order,
    the peeked word), what the registers hold at entry; fills in the position literals
    and, per register, the condition that the prolog loads it."""
    formula, problem, registers = encoding.formula, encoding.problem, encoding.register_count
    params = problem.params
    peek = next((o.id for o in problem.ops if o.kind is Kind.PEEK), None)
    positions = params + 1 if peek is not None else params
    position = [
        {q: formula.variable(f"pos_{r}_{q}") for q in range(positions)} for r in range(registers)
    ]
    for r in range(registers):
        formula.add_at_most(None, position[r].values(), 1)
    # Positions are non-decreasing in register order (A0..A(L-1), B0..).
    for r in range(registers):
        for q in range(1, positions):
            at_least_q = formula.any_of(position[r][j] for j in range(q, positions))
            for r2 in range(r + 1, registers):
                for j in range(q):
                    formula.add(
                        None, formula.implies(position[r2][j], formula.negation(at_least_q))
                    )
    for q in range(params):  # every parameter is popped
        formula.add(None, formula.any_of(position[r][q] for r in range(registers)))
    entry = encoding.entry_states[0][0]
    prolog_loads: list[Lit] = []
    for r in range(registers):
        reads = formula.any_of(position[r].values())
        loads = [reads]
        for v, lit in entry[r].items():
            op = encoding.operations[v]
            if op.kind is Kind.PARAM:
                formula.add(None, formula.implies(lit, position[r].get(op.index, formula.false)))
            elif op.kind is Kind.PEEK:
                formula.add(None, formula.implies(lit, position[r].get(params, formula.false)))
            elif op.kind in (Kind.META, Kind.RAND) or v == encoding.zero_constant:
                # Loaded by LOAD_MD / RAND, or 0: a register the prolog leaves alone.
                formula.add(None, formula.implies(lit, formula.negation(reads)))
                if op.kind is not Kind.CONST:
                    loads.append(lit)
            else:
                formula.add(None, formula.negation(lit))
        prolog_loads.append(formula.any_of(loads))
    for op in problem.ops:  # each RAND selector draws its own word
        if op.kind is Kind.RAND:
            formula.add_at_most(
                None, (entry[r][op.id] for r in range(registers) if op.id in entry[r]), 1
            )
    encoding.prolog_positions, encoding.prolog_loads = position, prolog_loads


def add_branch(encoding: Encoding, t: int, branch: Branch) -> None:
    formula = encoding.formula
    for name, operand in (("x", branch.x), ("y", branch.y)):
        is_const = encoding.operations[operand].kind is Kind.CONST
        as_immediate = formula.variable(f"bimm_{t}_{name}") if is_const else formula.false
        encoding.branch_immediates[t, name] = as_immediate
        for k in range(encoding.eus):
            if not encoding.copy_possible[t][k]:
                continue
            held = formula.any_of(
                branch_view(encoding, t, k, r, operand) for r in range(encoding.register_count)
            )
            formula.add(
                None,
                formula.implies(encoding.last_eu_is(t, k), formula.any_of([as_immediate, held])),
            )


def add_exit(encoding: Encoding, t: int, exit_: Exit) -> None:
    formula, registers = encoding.formula, encoding.register_count
    needed = exit_values(encoding.problem, exit_)
    for k in range(encoding.eus):
        state = encoding.entry_states[t][k + 1]
        held = [
            formula.any_of(state[r].get(v, formula.false) for r in range(registers)) for v in needed
        ]
        if held:
            formula.add(
                f"exit:{t}", formula.implies(encoding.last_eu_is(t, k), formula.all_of(held))
            )
        if len(needed) > 1:
            # Redundant: as many registers as values hold one of them. A pseudo-Boolean
            # count lets the solver see register pressure at once (a pigeonhole argument
            # that clauses alone take exponentially long to refute).
            holding = [
                formula.any_of(state[r].get(v, formula.false) for v in needed)
                for r in range(registers)
            ]
            formula.add(
                f"exit:{t}" if encoding.explaining else None,
                formula.implies(encoding.last_eu_is(t, k), formula.at_least(holding, len(needed))),
            )


def add_memory_once(encoding: Encoding, t: int) -> None:
    formula = encoding.formula
    for o in encoding.operations:
        if o.kind is Kind.MEM and o.owner == t:
            places = [
                lits[o.id]
                for (node, _, _), lits in encoding.memory_choices.items()
                if node == t and o.id in lits
            ]
            formula.add(None, formula.any_of(places))
            formula.add_at_most(None, places, 1)


def add_immediates(encoding: Encoding) -> None:
    formula = encoding.formula
    limit = encoding.profile.immediates_per_bundle
    consts = [o.id for o in encoding.operations if o.kind is Kind.CONST]
    for node in encoding.problem.nodes:
        t = node.id
        for k in range(encoding.eus):
            if not encoding.copy_possible[t][k]:
                continue
            used = []
            for c in consts:
                uses = [
                    encoding.selector_choices[t, k, r].get(("imm", c), formula.false)
                    for r in range(encoding.lanes, encoding.register_count)
                ]
                if isinstance(node.end, Branch):
                    for name, operand in (("x", node.end.x), ("y", node.end.y)):
                        if operand == c:
                            uses.append(
                                formula.all_of(
                                    [
                                        encoding.last_eu_is(t, k),
                                        encoding.branch_immediates[t, name],
                                    ]
                                )
                            )
                used.append(formula.any_of(uses))
            formula.add_at_most("immediates", used, limit)


def add_packet_bundles(encoding: Encoding) -> None:
    """At most the profile's packet bundles per stage (the "packet" placement)."""
    for k in range(encoding.eus):
        owned = [
            encoding.owns(n.id, k)
            for n in encoding.problem.nodes
            if encoding.copy_possible[n.id][k]
        ]
        encoding.formula.add_at_most(
            "packet-bundles", owned, encoding.profile.packet_bundles_per_stage
        )
