"""The Z3 encoding of a scheduling problem at a fixed EU count (the only module importing z3).

:class:`Z3Model` states "``problem`` runs in at most ``eus`` EUs" as a propositional
formula and reads a :class:`~dpfc.schedule.schedule.Schedule` back from a model. The EU
search (:mod:`.search`) asks it for several EU counts; the secondary objectives (bundles,
then instructions) are lowered with cardinality bounds (:meth:`Z3Model.improve`), and
:meth:`Z3Model.core` names the source constraints that conflict when nothing fits.

**Encoding** (the machine semantics of :mod:`.schedule`'s docstring). Every tree node ``t``
has a *copy* ``(t, k)`` of every EU ``k``; it is the node's own bundle when ``k`` lies
between its parent's branch EU (exclusive) and its own last EU. All variables are Booleans
("one-hot"), created only inside the domains of :mod:`.domains`:

* ``ge[t][k]``: node t's last EU (branch or end) is at least k (an order encoding);
* ``X[t][k][r][v]``: register r holds value v at the entry of EU k (``k = eus``: after the
  last EU); ``S[t][k][r][v]``: r holds v after EU k's selectors;
* per copy and register one selector choice (a MOV source, a LOAD_IMM constant, the lane's
  HASH), per lane one ALU operation (and whether a commutative one's operands are
  crossed) and one memory operation; per array its (EU, lane); per register its prolog
  stack position.

The register states are *support* constraints: a claim "r holds v" must be explained by the
previous state and the copy's units (the ALU wrote v, or no ALU ran and v was selected,
...), and a register holds at most one value; a register may also hold nothing the model
names. So every claim the model makes is true of the machine, operands and epilog values
are claims, and data dependences, register pressure and liveness follow without further
constraints. This is far easier for the SAT solver than integer-valued register contents
(measured: 5-50x fewer conflicts on the proofs and the searches of the corpus).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import z3

from dpfc.isa.bundle import RegClass, Register
from dpfc.isa.opcodes import AluOp, MemOp, SelectorKind
from dpfc.schedule.bounds import compute_bounds
from dpfc.schedule.domains import compute_domains, exit_values
from dpfc.schedule.limits import FEASIBILITY_RLIMIT, WallClockGuard
from dpfc.schedule.problem import INPUT_KINDS, Branch, Exit, Kind, Problem
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
from dpfc.target.profile import BranchOperands, MemoryAddress

PAIRWISE_MAX = 8  # at-most-one over this many literals: pairwise clauses, above: a PB constraint

Choice = tuple[str, int]  # ("mov", source register index) | ("imm", const op) | ("hash", op)
Lits = dict[int, z3.BoolRef]  # value / operation id -> literal


@dataclass(frozen=True)
class Group:
    """A named group of constraints that can be switched off to explain a failure."""

    key: str  # e.g. "pin:values0", "immediates", "exit:3"
    literal: z3.BoolRef


class Z3Model:
    """Problem + EU count -> constraints. ``solve()`` / ``decide()``; ``core()``."""

    def __init__(
        self,
        problem: Problem,
        eus: int,
        *,
        seed: int = 0,
        rlimit: int = FEASIBILITY_RLIMIT,
        guard: WallClockGuard | None = None,
    ):
        self.problem = problem
        self.profile = problem.profile
        self.eus = eus
        self.lanes = problem.profile.lanes
        self.regs = [Register.a(i) for i in range(self.lanes)]
        self.regs += [Register.b(i) for i in range(self.lanes)]
        self.nregs = len(self.regs)
        # A context of its own: Z3's search depends on the order terms were created in, so a
        # shared context would make the schedule depend on what was solved before.
        self.ctx = z3.Context()
        # Everything is Boolean: the QF_BV solver bit-blasts (here: only Tseitin) to SAT.
        self.solver = z3.SolverFor("QF_BV", ctx=self.ctx)
        self.seed = seed
        # A resource limit, never a clock: answers must not depend on the machine's speed.
        self.rlimit = rlimit
        self.guard = guard or WallClockGuard(None)
        self.reason = ""  # why the last check answered "unknown"
        self._rlimit_total = 0  # resource units this model's context has used so far
        self.solver.set("random_seed", seed)
        self.solver.set("rlimit", rlimit)
        self.groups: dict[str, Group] = {}
        self.true = z3.BoolVal(True, ctx=self.ctx)
        self.false = z3.BoolVal(False, ctx=self.ctx)
        self.ops = problem.ops
        self.bounds = compute_bounds(problem)
        self.dom = compute_domains(problem, self.bounds, eus)
        self.zero = next((o.id for o in problem.ops if o.kind is Kind.CONST and o.value == 0), None)
        self._constraints: list[z3.BoolRef] = []
        self._build()
        # One conjunction, asserted once per solver (copying thousands of assertions through
        # the Python API costs more than solving the small models).
        self.formula = self._and(self._constraints)
        self._assert_all(self.solver)

    # -- helpers -------------------------------------------------------------------------------
    def _bool(self, name: str) -> z3.BoolRef:
        return z3.Bool(name, ctx=self.ctx)

    # Constructors through Z3's C API: the Python API's coercions cost more than the
    # solving on small models (every literal is a BoolRef of this context already).
    def _wrap(self, ast: z3.Ast) -> z3.BoolRef:
        return z3.BoolRef(ast, self.ctx)

    def _nary(self, make: Callable[..., z3.Ast], terms: Sequence[z3.BoolRef]) -> z3.BoolRef:
        array = (z3.Ast * len(terms))()
        for index, term in enumerate(terms):
            array[index] = term.as_ast()
        return self._wrap(make(self.ctx.ref(), len(terms), array))

    def _or(self, terms: Iterable[z3.BoolRef]) -> z3.BoolRef:
        listed = [t for t in terms if t is not self.false]
        if not listed:
            return self.false
        return listed[0] if len(listed) == 1 else self._nary(z3.Z3_mk_or, listed)

    def _and(self, terms: Iterable[z3.BoolRef]) -> z3.BoolRef:
        listed = [t for t in terms if t is not self.true]
        if not listed:
            return self.true
        return listed[0] if len(listed) == 1 else self._nary(z3.Z3_mk_and, listed)

    def _not(self, term: z3.BoolRef) -> z3.BoolRef:
        return self._wrap(z3.Z3_mk_not(self.ctx.ref(), term.as_ast()))

    def _implies(self, premise: z3.BoolRef, conclusion: z3.BoolRef) -> z3.BoolRef:
        return self._wrap(z3.Z3_mk_implies(self.ctx.ref(), premise.as_ast(), conclusion.as_ast()))

    def _group(self, key: str) -> z3.BoolRef:
        if key not in self.groups:
            self.groups[key] = Group(key, self._bool(f"group:{key}"))
        return self.groups[key].literal

    def _add(self, key: str | None, *constraints: z3.BoolRef) -> None:
        for c in constraints:
            self._constraints.append(c if key is None else self._implies(self._group(key), c))

    def _atmost(self, terms: Sequence[z3.BoolRef], bound: int) -> z3.BoolRef:
        """At most ``bound`` of ``terms`` hold (a pseudo-Boolean constraint)."""
        return self._cardinality(z3.Z3_mk_atmost, terms, bound)

    def _atleast(self, terms: Sequence[z3.BoolRef], bound: int) -> z3.BoolRef:
        return self._cardinality(z3.Z3_mk_atleast, terms, bound)

    def _cardinality(
        self, make: Callable[..., z3.Ast], terms: Sequence[z3.BoolRef], bound: int
    ) -> z3.BoolRef:
        array = (z3.Ast * len(terms))()
        for index, term in enumerate(terms):
            array[index] = term.as_ast()
        return self._wrap(make(self.ctx.ref(), len(terms), array, bound))

    def _assert_all(self, solver: z3.Solver) -> None:
        z3.Z3_solver_assert(self.ctx.ref(), solver.solver, self.formula.as_ast())

    def _at_most(self, key: str | None, literals: Iterable[z3.BoolRef], bound: int) -> None:
        listed = [lit for lit in literals if lit is not self.false]
        if len(listed) <= bound:
            return
        if bound == 1 and len(listed) <= PAIRWISE_MAX:
            pairs = itertools.combinations(listed, 2)
            self._add(key, *(self._or([self._not(a), self._not(b)]) for a, b in pairs))
        else:
            self._add(key, self._atmost(listed, bound))

    def _is_a(self, r: int) -> bool:
        return self.regs[r].cls is RegClass.A

    # -- tree shape ----------------------------------------------------------------------------
    def ge(self, t: int, k: int) -> z3.BoolRef:
        """Node t's last EU is at least k."""
        return self._ge[t][k] if k < self.eus else self.false

    def own(self, t: int, k: int) -> z3.BoolRef:
        """The copy (t, k) is a bundle of node t."""
        parent = self.problem.nodes[t].parent
        if not self._possible[t][k]:
            return self.false
        if parent is None:
            return self.ge(t, k)
        return self._and([self._not(self.ge(parent, k)), self.ge(t, k)])

    def at(self, t: int, k: int) -> z3.BoolRef:
        """Node t's last EU is k."""
        return self._and([self.ge(t, k), self._not(self.ge(t, k + 1))])

    def _shape(self) -> None:
        p, K = self.problem, self.eus
        full = self.profile.num_eus
        self._ge = [[self._bool(f"ge_{n.id}_{k}") for k in range(K)] for n in p.nodes]
        # A copy can be a bundle of its node only from the node's earliest start on.
        self._possible = [[self.bounds.start[n.id] <= k for k in range(K)] for n in p.nodes]
        for node in p.nodes:
            t = node.id
            self._add(None, self.ge(t, 0))
            for k in range(1, K):
                self._add(None, self._implies(self.ge(t, k), self.ge(t, k - 1)))
            for k in range(min(self.bounds.last[t] + 1, K)):
                self._add(None, self.ge(t, k))
            if self.bounds.last[t] >= K:
                self._add(None, self.false)
            if isinstance(node.end, Branch) and full > K:
                # A branch before the profile's last EU selects bundles of the next EU,
                # which must exist within the EU budget; in the last EU it selects epilogs.
                self._add(None, self._not(self.ge(t, K - 1)))
            if node.parent is not None:
                for k in range(K):
                    # The node starts one EU after its parent's branch...
                    if k + 1 < K:
                        self._add(None, self._implies(self.ge(node.parent, k), self.ge(t, k + 1)))
                    elif isinstance(node.end, Branch):
                        self._add(None, self._not(self.ge(node.parent, k)))
                    # ... except a leaf after a branch in the profile's last EU: it owns
                    # nothing and its epilog reads what that EU left (ge(t, K-1) is then
                    # already implied by the order encoding and its parent's last EU).

    # -- construction ----------------------------------------------------------------------------
    def _build(self) -> None:
        p, K, R = self.problem, self.eus, self.nregs
        self._shape()
        dom = self.dom
        # States: only inside the domains (a missing literal is false).
        self.X: list[list[list[Lits]]] = []
        self.S: list[list[list[Lits]]] = []
        values = [o.id for o in p.ops if o.has_result]
        for node in p.nodes:
            t = node.id
            xs = [
                [
                    {
                        v: self._bool(f"X_{t}_{k}_{r}_{v}")
                        for v in values
                        if dom.in_register(t, k, v, self._is_a(r))
                    }
                    for r in range(R)
                ]
                for k in range(K + 1)
            ]
            ss = [
                [
                    {
                        v: self._bool(f"S_{t}_{k}_{r}_{v}")
                        for v in values
                        if self._possible[t][k] and dom.selected(t, k, v, self._is_a(r))
                    }
                    for r in range(R)
                ]
                for k in range(K)
            ]
            self.X.append(xs)
            self.S.append(ss)
            for row in [*xs, *ss]:
                for lits in row:
                    self._at_most(None, lits.values(), 1)
        self.choice: dict[tuple[int, int, int], dict[Choice, z3.BoolRef]] = {}
        self.alu: dict[tuple[int, int, int], Lits] = {}
        self.swap: dict[tuple[int, int, int], z3.BoolRef] = {}
        self.mem: dict[tuple[int, int, int], Lits] = {}
        self.bind: dict[str, dict[tuple[int, int], z3.BoolRef]] = {}
        self.bimm: dict[tuple[int, str], z3.BoolRef] = {}
        self._bindings()
        self._prolog()
        for node in p.nodes:
            for k in range(K):
                if self._possible[node.id][k]:
                    self._copy(node.id, k)
            for k in range(K + 1):
                self._transition(node.id, k)
            if isinstance(node.end, Branch):
                self._branch(node.id, node.end)
            else:
                self._exit(node.id, node.end)
            self._memory_once(node.id)
        self._immediates()
        if p.placement == "packet":
            for k in range(K):
                owned = [self.own(n.id, k) for n in p.nodes if self._possible[n.id][k]]
                self._at_most("packet-bundles", owned, self.profile.packet_bundles_per_stage)

    def _bindings(self) -> None:
        p, K, L = self.problem, self.eus, self.lanes
        accessed = sorted({o.array for o in p.ops if o.kind is Kind.MEM and o.array is not None})
        for name in accessed:
            places = {
                (k, i): self._bool(f"bind_{name}_{k}_{i}") for k in range(K) for i in range(L)
            }
            self.bind[name] = places
            self._add(None, self._or(places.values()))
            self._at_most(None, places.values(), 1)
            info = p.arrays.get(name)
            if info is not None and info.pin is not None:
                self._add(f"pin:{name}", places.get(info.pin, self.false))
        # One array per lane: two would share the lane's virtual address space (DPF7004).
        # Only where two arrays may meet (a pinned array binds nowhere else), so a DPF
        # whose arrays are all pinned apart gets the model it had without the rule.
        for k in range(K):
            for i in range(L):
                meet = [
                    self.bind[name][k, i]
                    for name in accessed
                    if (info := p.arrays.get(name)) is None
                    or info.pin is None
                    or info.pin == (k, i)
                ]
                if len(meet) > 1:
                    self._at_most(None, meet, 1)

    def _prolog(self) -> None:
        p, R = self.problem, self.nregs
        params = p.params
        peek = next((o.id for o in p.ops if o.kind is Kind.PEEK), None)
        positions = params + 1 if peek is not None else params
        self.pos = [{q: self._bool(f"pos_{r}_{q}") for q in range(positions)} for r in range(R)]
        for r in range(R):
            self._at_most(None, self.pos[r].values(), 1)
        # Positions are non-decreasing in register order (A0..A(L-1), B0..).
        for r in range(R):
            for q in range(1, positions):
                at_least_q = self._or(self.pos[r][j] for j in range(q, positions))
                for r2 in range(r + 1, R):
                    for j in range(q):
                        self._add(None, self._implies(self.pos[r2][j], self._not(at_least_q)))
        for q in range(params):  # every parameter is popped
            self._add(None, self._or(self.pos[r][q] for r in range(R)))
        entry = self.X[0][0]
        self.prolog_loads: list[z3.BoolRef] = []
        for r in range(R):
            reads = self._or(self.pos[r].values())
            loads = [reads]
            for v, lit in entry[r].items():
                op = self.ops[v]
                if op.kind is Kind.PARAM:
                    self._add(None, self._implies(lit, self.pos[r].get(op.index, self.false)))
                elif op.kind is Kind.PEEK:
                    self._add(None, self._implies(lit, self.pos[r].get(params, self.false)))
                elif op.kind in (Kind.META, Kind.RAND) or v == self.zero:
                    # Loaded by LOAD_MD / RAND, or 0: a register the prolog leaves alone.
                    self._add(None, self._implies(lit, self._not(reads)))
                    if op.kind is not Kind.CONST:
                        loads.append(lit)
                else:
                    self._add(None, self._not(lit))
            self.prolog_loads.append(self._or(loads))
        for op in p.ops:  # each RAND selector draws its own word
            if op.kind is Kind.RAND:
                self._at_most(None, (entry[r][op.id] for r in range(R) if op.id in entry[r]), 1)

    def _copy(self, t: int, k: int) -> None:
        """Selectors, ALU and memory of copy (t, k): what each needs of the states."""
        R, L = self.nregs, self.lanes
        own = self.own(t, k)
        X, S = self.X[t][k], self.S[t][k]
        consts = [o.id for o in self.ops if o.kind is Kind.CONST]
        hashes = self.dom.pure_candidates(self.problem, t, k, Kind.HASH)
        same_word = self.problem.same_word  # a HASH may compute a constant (.materialise)
        for r in range(R):
            choices: dict[Choice, z3.BoolRef] = {
                ("mov", r2): self._bool(f"mov_{t}_{k}_{r}_{r2}") for r2 in range(R) if r2 != r
            }
            if not self._is_a(r):
                for c in consts:
                    if c in S[r]:
                        choices["imm", c] = self._bool(f"imm_{t}_{k}_{r}_{c}")
            else:
                for h in hashes:
                    word = same_word.get(h.id, h.id)
                    if h.lane == r and word in S[r] and h.operands[0] in X[r]:
                        lit = choices["hash", h.id] = self._bool(f"hash_{t}_{k}_{r}_{h.id}")
                        self._add(None, self._implies(lit, X[r][h.operands[0]]))
            self.choice[t, k, r] = choices
            self._at_most(None, choices.values(), 1)
            for lit in choices.values():
                self._add(None, self._implies(lit, own))
            unselected = self._not(self._or(choices.values()))
            for v, sel in S[r].items():
                reasons = [self._and([unselected, X[r][v]])] if v in X[r] else []
                for (kind, arg), lit in choices.items():
                    if kind == "mov" and v in X[arg]:
                        reasons.append(self._and([lit, X[arg][v]]))
                    elif kind != "mov" and same_word.get(arg, arg) == v:
                        reasons.append(lit)
                self._add(None, self._implies(sel, self._or(reasons)))
        address_view = S if self.profile.memory_address is MemoryAddress.SELECTED else X
        alus = self.dom.pure_candidates(self.problem, t, k, Kind.ALU)
        mems = self.dom.memory_candidates(self.problem, t, k)
        for i in range(L):
            a, b = i, L + i
            lane_alu: Lits = {o.id: self._bool(f"alu_{t}_{k}_{i}_{o.id}") for o in alus}
            swap = self._bool(f"swap_{t}_{k}_{i}")
            self.alu[t, k, i], self.swap[t, k, i] = lane_alu, swap
            self._at_most(None, lane_alu.values(), 1)
            self._add(None, self._implies(swap, self._or(lane_alu.values())))
            for o in alus:
                lit = lane_alu[o.id]
                self._add(None, self._implies(lit, own))
                if o.alu is AluOp.NEG:
                    (x,) = o.operands
                    self._add(
                        None,
                        self._implies(lit, S[a].get(x, self.false)),
                        self._implies(lit, self._not(swap)),
                    )
                    continue
                x, y = o.operands
                straight = self._and([S[a].get(x, self.false), S[b].get(y, self.false)])
                if o.commutative and x != y:
                    crossed = self._and([S[a].get(y, self.false), S[b].get(x, self.false)])
                    self._add(
                        None,
                        self._implies(
                            lit,
                            self._and(
                                [
                                    self._implies(swap, crossed),
                                    self._implies(self._not(swap), straight),
                                ]
                            ),
                        ),
                    )
                else:
                    self._add(None, self._implies(lit, self._and([straight, self._not(swap)])))
            lane_mem: Lits = {o.id: self._bool(f"mem_{t}_{k}_{i}_{o.id}") for o in mems}
            self.mem[t, k, i] = lane_mem
            self._at_most(None, lane_mem.values(), 1)
            for o in mems:
                assert o.array is not None
                address = address_view[a].get(o.operands[0], self.false)
                need = [own, self.bind[o.array][k, i], address]
                if o.mem is not MemOp.LOAD:
                    need.append(S[b].get(o.operands[1], self.false))
                self._add(None, self._implies(lane_mem[o.id], self._and(need)))

    def _loaded(self, t: int, k: int, i: int) -> Lits:
        """Memory operations of copy (t, k) lane i that write B[i] (LOAD and atomics)."""
        return {v: lit for v, lit in self.mem.get((t, k, i), {}).items() if self.ops[v].has_result}

    def _transition(self, t: int, k: int) -> None:
        """Every claim about the registers at EU k's entry is explained: by the previous
        own copy's units, by the parent's state (before the node starts), or not needed
        (after the node ended)."""
        parent = self.problem.nodes[t].parent
        for r, lits in enumerate(self.X[t][k]):
            for v, claim in lits.items():
                reasons: list[z3.BoolRef] = []
                if k == 0:
                    if parent is None:
                        continue  # the prolog's (see _prolog)
                    reasons.append(self.X[parent][0][r].get(v, self.false))
                else:
                    j = k - 1
                    if self._possible[t][j]:
                        reasons.append(self._and([self.own(t, j), self._produced(t, j, r, v)]))
                    if parent is not None:
                        inherited = self.X[parent][k][r].get(v, self.false)
                        reasons.append(self._and([self.ge(parent, j), inherited]))
                    reasons.append(self._not(self.ge(t, j)))
                self._add(None, self._implies(claim, self._or(reasons)))

    def _produced(self, t: int, k: int, r: int, v: int) -> z3.BoolRef:
        """Register r holds v after copy (t, k) ran: a stage-2 write of v, or no stage-2
        write and v selected."""
        L = self.lanes
        S = self.S[t][k][r]
        writes = self.alu.get((t, k, r), {}) if self._is_a(r) else self._loaded(t, k, r - L)
        kept = self._and([self._not(self._or(writes.values())), S[v]]) if v in S else self.false
        # An operation computing a constant's word writes that constant (.materialise).
        same_word = self.problem.same_word
        wrote_v = [lit for op, lit in writes.items() if same_word.get(op, op) == v]
        return self._or([*wrote_v, kept])

    def _branch_view(self, t: int, k: int, r: int, v: int) -> z3.BoolRef:
        mode = self.profile.branch_operands
        if mode is BranchOperands.ENTRY:
            return self.X[t][k][r].get(v, self.false)
        if mode is BranchOperands.LOADED and not self._is_a(r):
            return self._produced(t, k, r, v)
        return self.S[t][k][r].get(v, self.false) if k < self.eus else self.false

    def _branch(self, t: int, branch: Branch) -> None:
        for name, operand in (("x", branch.x), ("y", branch.y)):
            is_const = self.ops[operand].kind is Kind.CONST
            as_imm = self._bool(f"bimm_{t}_{name}") if is_const else self.false
            self.bimm[t, name] = as_imm
            for k in range(self.eus):
                if not self._possible[t][k]:
                    continue
                held = self._or(self._branch_view(t, k, r, operand) for r in range(self.nregs))
                self._add(None, self._implies(self.at(t, k), self._or([as_imm, held])))

    def _exit(self, t: int, exit_: Exit) -> None:
        needed = exit_values(self.problem, exit_)
        for k in range(self.eus):
            state = self.X[t][k + 1]
            held = [
                self._or(state[r].get(v, self.false) for r in range(self.nregs)) for v in needed
            ]
            if held:
                self._add(f"exit:{t}", self._implies(self.at(t, k), self._and(held)))
            if len(needed) > 1:
                # Redundant: as many registers as values hold one of them. A pseudo-Boolean
                # count lets the solver see register pressure at once (a pigeonhole argument
                # that clauses alone take exponentially long to refute).
                holding = [
                    self._or(state[r].get(v, self.false) for v in needed) for r in range(self.nregs)
                ]
                self._add(None, self._implies(self.at(t, k), self._atleast(holding, len(needed))))

    def _memory_once(self, t: int) -> None:
        for o in self.ops:
            if o.kind is Kind.MEM and o.owner == t:
                places = [
                    lits[o.id]
                    for (node, _, _), lits in self.mem.items()
                    if node == t and o.id in lits
                ]
                self._add(None, self._or(places))
                self._at_most(None, places, 1)

    def _immediates(self) -> None:
        limit = self.profile.immediates_per_bundle
        consts = [o.id for o in self.ops if o.kind is Kind.CONST]
        for node in self.problem.nodes:
            t = node.id
            for k in range(self.eus):
                if not self._possible[t][k]:
                    continue
                used = []
                for c in consts:
                    uses = [
                        self.choice[t, k, r].get(("imm", c), self.false)
                        for r in range(self.lanes, self.nregs)
                    ]
                    if isinstance(node.end, Branch):
                        for name, operand in (("x", node.end.x), ("y", node.end.y)):
                            if operand == c:
                                uses.append(self._and([self.at(t, k), self.bimm[t, name]]))
                    used.append(self._or(uses))
                self._at_most("immediates", used, limit)

    # -- objectives --------------------------------------------------------------------------------
    def bundle_terms(self) -> list[z3.BoolRef]:
        return [self.own(n.id, k) for n in self.problem.nodes for k in range(self.eus)]

    def instruction_terms(self) -> list[z3.BoolRef]:
        """One condition per possible prolog load, EU selector and ALU op (memory ops and
        branches are fixed by the program)."""
        terms: list[z3.BoolRef] = list(self.prolog_loads)
        for choices in self.choice.values():
            terms += choices.values()
        for lits in self.alu.values():
            terms += lits.values()
        return terms

    # -- solving -----------------------------------------------------------------------------------
    def _fresh(self, rlimit: int, logic: str = "QF_BV") -> z3.Solver:
        # A fresh, non-incremental solver: Z3's QF_BV solver bit-blasts only when it is not
        # used incrementally (push/pop), several times faster here.
        fresh = z3.SolverFor(logic, ctx=self.ctx)
        fresh.set("random_seed", self.seed)
        fresh.set("rlimit", rlimit)
        self._assert_all(fresh)
        fresh.add(self._literals())
        return fresh

    def _run(self, check: Callable[[], z3.CheckSatResult], reason: Callable[[], str]) -> str:
        """``check`` under the wall-clock guard; "sat", "unsat" or "unknown" (``self.reason``
        says why: the resource limit, normally)."""
        with self.guard.watch(self.ctx.interrupt):
            result = check()
        self.reason = "" if result != z3.unknown else _reason(reason())
        return str(result)

    def solve(self) -> tuple[str, Schedule | None]:
        """("sat", schedule), ("unsat", None) or ("unknown", None) (resource limit), with
        every constraint group on (as assumptions, so that :meth:`core` can follow)."""
        result = self._run(lambda: self.solver.check(*self._literals()), self.solver.reason_unknown)
        return result, (self._read(self.solver.model()) if result == "sat" else None)

    def decide(self, logic: str, rlimit: int) -> tuple[str, Schedule | None, int]:
        """ "Does the DPF fit in this many EUs?" on a fresh solver of configuration
        ``logic`` ("QF_BV" or "QF_FD") limited to ``rlimit`` units: the answer, the
        schedule (sat) and the resource units spent."""
        fresh = self._fresh(rlimit, logic)
        result = self._run(fresh.check, fresh.reason_unknown)
        schedule = self._read(fresh.model()) if result == "sat" else None
        return result, schedule, self._spent(fresh)

    def placement(self, schedule: Schedule) -> list[z3.BoolRef]:
        """Constraints that fix where ``schedule`` runs every ALU, HASH and memory operation
        and where each node's EUs end, leaving the registers, moves and constants free: the
        neighbourhood :meth:`improve` searches to tidy a schedule's register traffic. A
        placement outside this model's domains (a copy of an operation too late to be of
        use) is left free."""
        fixed: list[z3.BoolRef] = []
        for span in schedule.spans:
            fixed += [
                self.ge(span.node, k) if k <= span.last_eu else self._not(self.ge(span.node, k))
                for k in range(self.eus)
            ]
        for step in schedule.steps:
            t, k = step.node, step.eu
            for units, ops in ((self.alu, step.alu), (self.mem, step.mem)):
                for lane in range(self.lanes):
                    lits = units.get((t, k, lane), {})
                    placed = next((lo.op for lo in ops if lo.lane == lane), None)
                    if placed is not None and placed not in lits:
                        continue
                    fixed += [lit if v == placed else self._not(lit) for v, lit in lits.items()]
            for sel in step.selectors:
                if sel.kind is SelectorKind.HASH and sel.op is not None:
                    lit = self.choice.get((t, k, self.regs.index(sel.dest)), {}).get(
                        ("hash", sel.op)
                    )
                    if lit is not None:
                        fixed.append(lit)
        return fixed

    def optimise(
        self, rlimit: int, fixed: Sequence[z3.BoolRef] = ()
    ) -> tuple[str, Schedule | None, int]:
        """The fewest bundles, then the fewest instructions, at this EU count: Z3's MaxSAT
        (core-guided: every answer it gives is optimal) over the soft constraints "this copy
        is no bundle" and "this instruction is not used", lexicographically, limited to
        ``rlimit`` units. ``fixed`` constraints restrict it (a neighbourhood: then the
        optimum is one within it). Returns "sat" with the optimal schedule, or "unknown"
        / "unsat" with None; and the units spent."""
        opt = z3.Optimize(ctx=self.ctx)
        opt.set("random_seed", self.seed)
        opt.set("rlimit", rlimit)
        opt.add(self.formula, *self._literals(), *fixed)
        for term in self.bundle_terms():
            opt.add_soft(self._not(term), 1, "bundles")
        for term in self.instruction_terms():
            opt.add_soft(self._not(term), 1, "instructions")
        result = self._run(opt.check, opt.reason_unknown)
        schedule = self._read(opt.model()) if result == "sat" else None
        return result, schedule, self._spent(opt)

    def _spent(self, solver: z3.Solver | z3.Optimize) -> int:
        """The resource units used since the last call (Z3's deterministic step count,
        cumulative over this model's context)."""
        try:
            total = int(solver.statistics().get_key_value("rlimit count"))
        except z3.Z3Exception:
            return 0
        spent, self._rlimit_total = total - self._rlimit_total, total
        return spent

    def _literals(self) -> list[z3.BoolRef]:
        return [g.literal for g in self.groups.values()]

    def core(self) -> list[str] | None:
        """After an unsat ``solve()``: the keys of a minimal set of conflicting groups (None
        if the core could not be computed within the resource limit)."""
        self.solver.set("core.minimize", True)
        literals = {str(g.literal): g.key for g in self.groups.values()}
        result = self._run(lambda: self.solver.check(*self._literals()), self.solver.reason_unknown)
        if result != "unsat":
            return None
        return sorted(
            literals[str(lit)] for lit in self.solver.unsat_core() if str(lit) in literals
        )

    # -- reading a model ---------------------------------------------------------------------------
    def _read(self, model: z3.ModelRef) -> Schedule:
        def true(expr: z3.BoolRef) -> bool:
            return bool(z3.is_true(model.eval(expr, model_completion=True)))

        p, K, L = self.problem, self.eus, self.lanes
        spans: list[NodeSpan] = []
        for node in p.nodes:
            last = max(k for k in range(K) if true(self.ge(node.id, k)))
            first = 0 if node.parent is None else spans[node.parent].last_eu + 1
            spans.append(NodeSpan(node.id, first, last))
        steps: list[Step] = []
        for node in p.nodes:
            t = node.id
            span = spans[t]
            for k in span.eus():
                selectors: list[SelectorAssign] = []
                for r, reg in enumerate(self.regs):
                    for (kind, arg), lit in self.choice[t, k, r].items():
                        if not true(lit):
                            continue
                        if kind == "mov":
                            selectors.append(
                                SelectorAssign(reg, SelectorKind.MOV, source=self.regs[arg])
                            )
                        elif kind == "imm":
                            selectors.append(SelectorAssign(reg, SelectorKind.LOAD_IMM, op=arg))
                        else:
                            selectors.append(SelectorAssign(reg, SelectorKind.HASH, op=arg))
                alus = [
                    LaneOp(i, v, swapped=true(self.swap[t, k, i]))
                    for i in range(L)
                    for v, lit in self.alu[t, k, i].items()
                    if true(lit)
                ]
                mems = [
                    LaneOp(i, v)
                    for i in range(L)
                    for v, lit in self.mem[t, k, i].items()
                    if true(lit)
                ]
                branch = None
                if isinstance(node.end, Branch) and k == span.last_eu:
                    sources = []
                    for name, operand in (("x", node.end.x), ("y", node.end.y)):
                        held = [
                            self.regs[r]
                            for r in range(self.nregs)
                            if true(self._branch_view(t, k, r, operand))
                        ]
                        immediate = true(self.bimm[t, name])
                        sources.append(operand if immediate or not held else held[0])
                    branch = BranchUse(sources[0], sources[1])
                steps.append(Step(t, k, tuple(selectors), tuple(alus), tuple(mems), branch))
        exits: list[ExitUse] = []
        for node in p.nodes:
            if not isinstance(node.end, Exit):
                continue
            state = self.X[node.id][spans[node.id].last_eu + 1]

            def register(v: int, state: list[Lits] = state) -> Register:
                return next(
                    self.regs[r] for r in range(self.nregs) if true(state[r].get(v, self.false))
                )

            push = tuple(register(v) for v in node.end.push)
            steer: Source | None = None
            if node.end.steer_value is not None:
                v = node.end.steer_value
                steer = register(v) if v in exit_values(p, node.end) else v
            exits.append(ExitUse(node.id, push, steer))
        bindings = {
            name: next(where for where, lit in places.items() if true(lit))
            for name, places in self.bind.items()
        }
        return Schedule(
            p, self._read_prolog(true), tuple(spans), tuple(steps), tuple(exits), bindings, "z3"
        )

    def _read_prolog(self, true: Callable[[z3.BoolRef], bool]) -> tuple[PrologLoad, ...]:
        p = self.problem
        position: dict[int, int] = {}
        for r in range(self.nregs):
            for q, lit in self.pos[r].items():
                if true(lit):
                    position[r] = q
        last_reader = {q: r for r, q in sorted(position.items())}
        words = {o.index: o.id for o in p.ops if o.kind is Kind.PARAM}
        peek = next((o.id for o in p.ops if o.kind is Kind.PEEK), None)
        loads: list[PrologLoad] = []
        for r, reg in enumerate(self.regs):
            if r in position:
                q = position[r]
                popped = q < p.params and last_reader[q] == r
                word = words.get(q) if q < p.params else peek
                kind = SelectorKind.POP if popped else SelectorKind.PEEK
                loads.append(PrologLoad(reg, kind, word))
                continue
            for v, lit in self.X[0][0][r].items():
                op = self.ops[v]
                if op.kind in INPUT_KINDS and true(lit):
                    kind = SelectorKind.LOAD_MD if op.kind is Kind.META else SelectorKind.RAND
                    loads.append(PrologLoad(reg, kind, v))
        return tuple(loads)


def solver_version() -> str:
    """The z3 version: schedules depend on it (the schedule cache keys on it)."""
    return str(z3.get_version_string())


def _reason(text: str) -> str:
    """Z3's reason for "unknown", in the words the reports use."""
    if "resource" in text or "rlimit" in text:
        return "resource limit"
    if "cancel" in text or "interrupt" in text:
        return "interrupted"
    return text or "unknown"
