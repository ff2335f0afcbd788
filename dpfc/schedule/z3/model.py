"""The Z3 model of a scheduling problem at a fixed EU count: build, solve, read back.

:class:`Z3Model` states "``problem`` runs in at most ``eus`` EUs" as a propositional
formula and reads a :class:`~dpfc.schedule.schedule.Schedule` back from a model. The EU
search (:mod:`.eu_search`) asks it for several EU counts; the secondary objectives
(bundles, then instructions) are minimised by Z3's MaxSAT (:meth:`Z3Model.optimise`), and
:meth:`Z3Model.core` names the source constraints that conflict when nothing fits.

It composes the pieces: a :class:`~dpfc.schedule.z3.adapter.Formula` (the Z3 context, the
term constructors, the groups and the solvers; the only module importing z3), an
:class:`~dpfc.schedule.z3.encoding.Encoding` (the literals; its docstring states the
encoding), the constraint families :mod:`.program` (tree shape, arrays, prolog, branches,
exits, per-bundle limits) and :mod:`.states` (register states and each copy's units), added
by :func:`encode` in one fixed order, and :mod:`.read` (model -> schedule).

The register states are *support* constraints: a claim "r holds v" must be explained by the
previous state and the copy's units (the ALU wrote v, or no ALU ran and v was selected,
...), and a register holds at most one value; a register may also hold nothing the model
names. So every claim the model makes is true of the machine, operands and epilog values
are claims, and data dependences, register pressure and liveness follow without further
constraints. This is far easier for the SAT solver than integer-valued register contents
(measured: 5-50x fewer conflicts on the proofs and the searches of the corpus).
"""

from __future__ import annotations

from collections.abc import Sequence

from dpfc.schedule.problem.bounds import compute_bounds
from dpfc.schedule.problem.domains import compute_domains
from dpfc.schedule.problem.tree import Branch, Problem
from dpfc.schedule.schedule import Schedule
from dpfc.schedule.z3.adapter import Formula, Lit, Valuation
from dpfc.schedule.z3.encoding import Encoding
from dpfc.schedule.z3.limits import FEASIBILITY_RLIMIT, WallClockGuard
from dpfc.schedule.z3.program import (
    add_bindings,
    add_branch,
    add_exit,
    add_immediates,
    add_memory_once,
    add_packet_bundles,
    add_prolog,
    add_shape,
)
from dpfc.schedule.z3.read import placement_literals, read_schedule
from dpfc.schedule.z3.states import add_copy, add_state_variables, add_transition


def encode(encoding: Encoding) -> None:
    """Every constraint of ``encoding``'s problem, in the one order Z3 sees them in."""
    formula, problem, eus = encoding.formula, encoding.problem, encoding.eus
    encoding.last_eu_literals = [
        [formula.variable(f"ge_{n.id}_{k}") for k in range(eus)] for n in problem.nodes
    ]
    encoding.copy_possible = [
        [encoding.bounds.start[n.id] <= k for k in range(eus)] for n in problem.nodes
    ]
    add_shape(encoding)
    add_state_variables(encoding)
    add_bindings(encoding)
    add_prolog(encoding)
    for node in problem.nodes:
        for k in range(eus):
            if encoding.copy_possible[node.id][k]:
                add_copy(encoding, node.id, k)
        for k in range(eus + 1):
            add_transition(encoding, node.id, k)
        if isinstance(node.end, Branch):
            add_branch(encoding, node.id, node.end)
        else:
            add_exit(encoding, node.id, node.end)
        add_memory_once(encoding, node.id)
    add_immediates(encoding)
    if problem.placement == "packet":
        add_packet_bundles(encoding)


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
        explaining: bool = False,
    ):
        self.problem = problem
        self.eus = eus
        # A formula of its own (and a Z3 context of its own): Z3's search depends on the
        # order terms were created in, so a shared context would make the schedule depend
        # on what was solved before.
        self.formula = Formula(seed=seed, rlimit=rlimit, guard=guard or WallClockGuard(None))
        bounds = compute_bounds(problem)
        self.encoding = Encoding(
            problem, eus, self.formula, bounds, compute_domains(problem, bounds, eus)
        )
        # ``explaining``: a model built to name the constraints of an unsat core, whose
        # redundant constraints are grouped too (see Encoding.explaining).
        self.encoding.explaining = explaining
        encode(self.encoding)
        self.formula.close()

    @property
    def reason(self) -> str:
        """Why the last question answered "unknown"."""
        return self.formula.reason

    def _read(self, true: Valuation) -> Schedule:
        return read_schedule(self.encoding, true)

    def solve(self) -> tuple[str, Schedule | None]:
        """("sat", schedule), ("unsat", None) or ("unknown", None) (resource limit), with
        every constraint group on (as assumptions, so that :meth:`core` can follow)."""
        return self.formula.solve(self._read)

    def decide(self, logic: str, rlimit: int) -> tuple[str, Schedule | None, int]:
        """ "Does the DPF fit in this many EUs?" on a fresh solver of configuration
        ``logic`` ("QF_BV" or "QF_FD") limited to ``rlimit`` units: the answer, the
        schedule (sat) and the resource units spent."""
        return self.formula.decide(logic, rlimit, self._read)

    def placement(self, schedule: Schedule) -> list[Lit]:
        """Constraints that fix where ``schedule`` runs every ALU, HASH and memory operation
        and where each node's EUs end, leaving the registers, moves and constants free: the
        neighbourhood :meth:`optimise` searches (as its ``fixed``) to tidy a schedule's
        register traffic. A placement outside this model's domains (a copy of an operation
        too late to be of use) is left free."""
        return placement_literals(self.encoding, schedule)

    def optimise(self, rlimit: int, fixed: Sequence[Lit] = ()) -> tuple[str, Schedule | None, int]:
        """The fewest bundles, then the fewest instructions, at this EU count: Z3's MaxSAT
        (core-guided: every answer it gives is optimal) over the soft constraints "this copy
        is no bundle" and "this instruction is not used", lexicographically, limited to
        ``rlimit`` units. ``fixed`` constraints restrict it (a neighbourhood: then the
        optimum is one within it). Returns "sat" with the optimal schedule, or "unknown"
        / "unsat" with None; and the units spent."""
        optimisation = self.formula.optimisation(rlimit, fixed)
        for term in self.encoding.bundle_terms():
            optimisation.prefer_false(term, "bundles")
        for term in self.encoding.instruction_terms():
            optimisation.prefer_false(term, "instructions")
        return optimisation.check(self._read)

    def core(self) -> list[str] | None:
        """After an unsat ``solve()``: the keys of a minimal set of conflicting groups (None
        if the core could not be computed within the resource limit)."""
        return self.formula.core()
