"""The state of one Z3 encoding: a problem at a fixed EU count, and its literals by meaning.

:class:`Encoding` is what the constraint families (:mod:`.program`, :mod:`.states`) fill
in and read, and what :mod:`.read` reads a schedule back from: the problem and its bounds
and domains, the :class:`~dpfc.schedule.z3.adapter.Formula` every term is built in, and
the tables of literals, each created only inside the domains (a missing literal is false).
Its helpers say what the order encoding of a node's last EU means (:meth:`owns`, ...).

**Encoding** (the machine semantics of :mod:`dpfc.schedule.schedule`'s docstring). Every
tree node ``t`` has a *copy* ``(t, k)`` of every EU ``k``; it is the node's own bundle when
``k`` lies between its parent's branch EU (exclusive) and its own last EU:

* ``last_eu_literals[t][k]``: node t's last EU (branch or end) is at least k (an order
  encoding);
* ``entry_states[t][k][r][v]``: register r holds value v at the entry of EU k (``k = eus``:
  after the last EU); ``selected_states[t][k][r][v]``: r holds v after EU k's selectors;
* per copy and register one selector choice (a MOV source, a LOAD_IMM constant, the lane's
  HASH: ``selector_choices``), per lane one ALU operation (``alu_choices``; whether a
  commutative one's operands are crossed: ``alu_swapped``) and one memory operation
  (``memory_choices``); per array its (EU, lane) (``array_places``); per register its
  prolog stack position (``prolog_positions``).

Not here: the constraints (:mod:`.program`, :mod:`.states`), building them in order and
solving (:mod:`.model`), the Z3 API (:mod:`.adapter`).
"""

from __future__ import annotations

from dpfc.isa import RegClass, Register
from dpfc.schedule.problem.bounds import Bounds
from dpfc.schedule.problem.domains import Domains
from dpfc.schedule.problem.tree import Kind, Problem
from dpfc.schedule.z3.adapter import Formula, Lit

Choice = tuple[str, int]  # ("mov", source register index) | ("imm", const op) | ("hash", op)
Lits = dict[int, Lit]  # value / operation id -> literal
States = list[list[list[Lits]]]  # [node][EU][register] -> the values it may hold
CopyUnit = tuple[int, int, int]  # (tree node, EU, register or lane)


class Encoding:
    """One problem at ``eus`` EUs, the formula its terms are built in, and its literals."""

    def __init__(
        self, problem: Problem, eus: int, formula: Formula, bounds: Bounds, domains: Domains
    ) -> None:
        self.problem = problem
        self.profile = problem.profile
        self.eus = eus
        self.lanes = problem.profile.lanes
        self.registers = [Register.a(i) for i in range(self.lanes)]
        self.registers += [Register.b(i) for i in range(self.lanes)]
        self.register_count = len(self.registers)
        self.formula = formula
        self.operations = problem.ops
        self.bounds = bounds
        self.domains = domains
        self.zero_constant = next(
            (o.id for o in problem.ops if o.kind is Kind.CONST and o.value == 0), None
        )
        # The tables, filled in by the constraint families in the order the model builds
        # them (:func:`dpfc.schedule.z3.model.encode`).
        self.last_eu_literals: list[list[Lit]] = []
        # A copy can be a bundle of its node only from the node's earliest start on.
        self.copy_possible: list[list[bool]] = []
        self.entry_states: States = []
        self.selected_states: States = []
        self.selector_choices: dict[CopyUnit, dict[Choice, Lit]] = {}
        self.alu_choices: dict[CopyUnit, Lits] = {}
        self.alu_swapped: dict[CopyUnit, Lit] = {}
        self.memory_choices: dict[CopyUnit, Lits] = {}
        self.array_places: dict[str, dict[tuple[int, int], Lit]] = {}
        self.branch_immediates: dict[tuple[int, str], Lit] = {}
        self.prolog_positions: list[dict[int, Lit]] = []
        # Per register: the prolog loads it (an instruction of the secondary objective).
        self.prolog_loads: list[Lit] = []
        # Explaining a failure: the redundant constraints join the groups they follow from,
        # so that an unsat core names them (a model built to solve leaves them always on).
        self.explaining = False

    def is_a_register(self, register: int) -> bool:
        return self.registers[register].cls is RegClass.A

    # -- the tree shape --------------------------------------------------------------------------
    def last_eu_at_least(self, node: int, eu: int) -> Lit:
        """Node ``node``'s last EU is at least ``eu``."""
        return self.last_eu_literals[node][eu] if eu < self.eus else self.formula.false

    def owns(self, node: int, eu: int) -> Lit:
        """The copy (node, eu) is a bundle of ``node``."""
        parent = self.problem.nodes[node].parent
        if not self.copy_possible[node][eu]:
            return self.formula.false
        if parent is None:
            return self.last_eu_at_least(node, eu)
        formula = self.formula
        return formula.all_of(
            [formula.negation(self.last_eu_at_least(parent, eu)), self.last_eu_at_least(node, eu)]
        )

    def last_eu_is(self, node: int, eu: int) -> Lit:
        """Node ``node``'s last EU is ``eu``."""
        formula = self.formula
        return formula.all_of(
            [self.last_eu_at_least(node, eu), formula.negation(self.last_eu_at_least(node, eu + 1))]
        )

    # -- the objectives --------------------------------------------------------------------------
    def bundle_terms(self) -> list[Lit]:
        """One condition per copy: it is a bundle (the first secondary objective)."""
        return [self.owns(n.id, k) for n in self.problem.nodes for k in range(self.eus)]

    def instruction_terms(self) -> list[Lit]:
        """One condition per possible prolog load, EU selector and ALU op (memory ops and
        branches are fixed by the program)."""
        terms: list[Lit] = list(self.prolog_loads)
        for choices in self.selector_choices.values():
            terms += choices.values()
        for lits in self.alu_choices.values():
            terms += lits.values()
        return terms
