"""The Z3 encoding of a scheduling problem at a fixed EU count (the only module importing z3).

:class:`Z3Model` states "``problem`` runs in at most ``eus`` EUs" as a propositional
formula and reads a :class:`~dpfc.schedule.schedule.Schedule` back from a model. The EU
search (:mod:`.search`) asks it for several EU counts; the secondary objectives (bundles,
then instructions) are minimised by Z3's MaxSAT (:meth:`Z3Model.optimise`), and
:meth:`Z3Model.core` names the source constraints that conflict when nothing fits.

The constraints are stated by :mod:`.z3model_program` (tree shape, arrays, prolog, branches,
exits, per-bundle limits) and :mod:`.z3model_states` (register states and each copy's units),
and a model is read back by :mod:`.z3model_read`; they build every term through this
class's constructors, so this module stays the only one importing z3: the Z3 context, the
term constructors, the named groups, solving and cores are here, no constraint family.

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
from typing import TypeAlias

import z3

from dpfc.isa.bundle import RegClass, Register
from dpfc.schedule.bounds import compute_bounds
from dpfc.schedule.domains import compute_domains
from dpfc.schedule.limits import FEASIBILITY_RLIMIT, WallClockGuard
from dpfc.schedule.problem import Branch, Kind, Problem
from dpfc.schedule.schedule import Schedule
from dpfc.schedule.z3model_program import (
    add_bindings,
    add_branch,
    add_exit,
    add_immediates,
    add_memory_once,
    add_packet_bundles,
    add_prolog,
    add_shape,
)
from dpfc.schedule.z3model_read import placement_literals, read_schedule
from dpfc.schedule.z3model_states import add_copy, add_transition, state_variables

PAIRWISE_MAX = 8  # at-most-one over this many literals: pairwise clauses, above: a PB constraint

Choice = tuple[str, int]  # ("mov", source register index) | ("imm", const op) | ("hash", op)
Lits = dict[int, z3.BoolRef]  # value / operation id -> literal
Lit: TypeAlias = z3.BoolRef  # a Boolean term of a model's context


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

    # -- construction ----------------------------------------------------------------------------
    def _build(self) -> None:
        p, K = self.problem, self.eus
        self._ge = [[self._bool(f"ge_{n.id}_{k}") for k in range(K)] for n in p.nodes]
        # A copy can be a bundle of its node only from the node's earliest start on.
        self._possible = [[self.bounds.start[n.id] <= k for k in range(K)] for n in p.nodes]
        add_shape(self)
        self.X, self.S = state_variables(self)
        self.choice: dict[tuple[int, int, int], dict[Choice, z3.BoolRef]] = {}
        self.alu: dict[tuple[int, int, int], Lits] = {}
        self.swap: dict[tuple[int, int, int], z3.BoolRef] = {}
        self.mem: dict[tuple[int, int, int], Lits] = {}
        self.bind: dict[str, dict[tuple[int, int], z3.BoolRef]] = {}
        self.bimm: dict[tuple[int, str], z3.BoolRef] = {}
        add_bindings(self)
        self.pos, self.prolog_loads = add_prolog(self)
        for node in p.nodes:
            for k in range(K):
                if self._possible[node.id][k]:
                    add_copy(self, node.id, k)
            for k in range(K + 1):
                add_transition(self, node.id, k)
            if isinstance(node.end, Branch):
                add_branch(self, node.id, node.end)
            else:
                add_exit(self, node.id, node.end)
            add_memory_once(self, node.id)
        add_immediates(self)
        if p.placement == "packet":
            add_packet_bundles(self)

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
        neighbourhood :meth:`optimise` searches (as its ``fixed``) to tidy a schedule's
        register traffic. A placement outside this model's domains (a copy of an operation
        too late to be of use) is left free."""
        return placement_literals(self, schedule)

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

        return read_schedule(self, true)


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
