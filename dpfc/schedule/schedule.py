"""A schedule: where every operation of a :class:`~dpfc.schedule.problem.Problem` runs.

The result of every scheduler (Z3 or greedy) and the input of the checker
(:mod:`.check`), the code generator (:mod:`dpfc.codegen`) and the listings
(:mod:`.presentation`). It is symbolic: registers and lanes are machine resources, but code
addresses are not chosen yet and values are named by operation ids.

Shape. Tree node ``t`` owns the bundles of EUs ``spans[t].first_eu .. spans[t].last_eu``:
``first_eu`` is one past its parent's branch EU (0 for the root); a non-leaf's ``last_eu``
is the EU of its branch; a leaf's ``last_eu`` is the EU after which its path ends (its
epilog runs next: HALT, or the plain successor of the profile's last EU). A leaf whose
parent branched in the profile's last EU owns no bundle (``first_eu = num_eus``,
``last_eu = num_eus - 1``) and its epilog reads the registers that EU left. Every EU of a
node's range has exactly one :class:`Step` (possibly empty).

Machine rules the schedule obeys (docs/isa.md §3; the checker is the executable form):
the prolog fills registers in register order (A0.., then B0..), a POP advancing the stack;
registers it leaves alone hold 0. In an EU, selectors read the EU-entry registers and all
write at once; ALU lane i computes on the selected A[i], B[i] and writes A[i]; memory lane
i takes the address from A[i] (entry or selected: ``profile.memory_address``) and the data
from the selected B[i], and LOAD/atomics write B[i]; these stage-2 writes win over selector
writes; the branch compares entry / selected / selected+loaded values
(``profile.branch_operands``). The registers at the next EU's entry are the result.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from dpfc.isa import Register, SelectorKind
from dpfc.schedule.problem.tree import Problem


@dataclass(frozen=True)
class PrologLoad:
    """A prolog selector: ``dest`` gets the input operation ``op`` (POP/PEEK of a PARAM or
    PEEK, LOAD_MD of a META, RAND). ``op`` is None for a POP whose word nothing uses (the
    prolog must still pop every parameter)."""

    dest: Register
    kind: SelectorKind
    op: int | None


@dataclass(frozen=True)
class SelectorAssign:
    """An EU selector: MOV ``dest``, ``source`` / LOAD_IMM ``dest``, the CONST ``op`` /
    HASH ``dest`` computing the HASH ``op`` (of the EU-entry value of ``dest``)."""

    dest: Register
    kind: SelectorKind
    source: Register | None = None
    op: int | None = None


@dataclass(frozen=True)
class LaneOp:
    """ALU or memory operation ``op`` on ``lane``. ``swapped`` (commutative ALU ops only):
    A holds the second operand and B the first."""

    lane: int
    op: int
    swapped: bool = False


Source = Register | int  # a register, or a CONST operation id used as an immediate


@dataclass(frozen=True)
class BranchUse:
    """Where the node's :class:`~dpfc.schedule.problem.Branch` finds its operands."""

    x: Source
    y: Source


@dataclass(frozen=True)
class Step:
    """The bundle tree node ``node`` runs in EU ``eu``."""

    node: int
    eu: int
    selectors: tuple[SelectorAssign, ...] = ()  # sorted by dest (register order)
    alu: tuple[LaneOp, ...] = ()  # sorted by lane
    mem: tuple[LaneOp, ...] = ()  # sorted by lane
    branch: BranchUse | None = None  # set in the node's branch EU only

    def is_empty(self) -> bool:
        return not (self.selectors or self.alu or self.mem or self.branch)


@dataclass(frozen=True)
class NodeSpan:
    node: int
    first_eu: int
    last_eu: int

    def eus(self) -> range:
        return range(self.first_eu, self.last_eu + 1)


@dataclass(frozen=True)
class ExitUse:
    """Where leaf ``node``'s epilog finds its values (registers after its last EU)."""

    node: int
    push: tuple[Register, ...] = ()
    steer_value: Source | None = None


@dataclass(frozen=True)
class Schedule:
    problem: Problem
    prolog: tuple[PrologLoad, ...]  # in register order
    spans: tuple[NodeSpan, ...]  # indexed by tree node id
    steps: tuple[Step, ...]  # sorted by (node, eu)
    exits: tuple[ExitUse, ...]  # one per leaf, sorted by node
    bindings: dict[str, tuple[int, int]] = field(default_factory=dict)  # array -> (EU, lane)
    scheduler: str = "z3"  # which scheduler produced it: "z3" | "greedy"

    @property
    def eus_used(self) -> int:
        """EUs the longest path passes through (the quantity the scheduler minimises)."""
        return max((s.last_eu + 1 for s in self.spans), default=1)

    def step(self, node: int, eu: int) -> Step:
        for step in self.steps:
            if step.node == node and step.eu == eu:
                return step
        raise KeyError((node, eu))

    def step_on_path(self, leaf: int, eu: int) -> Step | None:
        """The step the path to ``leaf`` runs in EU ``eu`` (None once it has ended)."""
        for node in self.problem.path(leaf):
            if eu in self.spans[node].eus():
                return self.step(node, eu)
        return None

    def exit(self, leaf: int) -> ExitUse:
        for use in self.exits:
            if use.node == leaf:
                return use
        raise KeyError(leaf)

    def selector_count(self) -> int:
        """MOVs and LOAD_IMMs, counted once per step (the third objective)."""
        return sum(len(step.selectors) for step in self.steps)

    def bundle_count(self) -> int:
        """EU bundles before identical ones are shared (the second objective)."""
        return len(self.steps)
