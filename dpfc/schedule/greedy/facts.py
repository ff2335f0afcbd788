"""What the greedy scheduler knows about a Problem, and the plan of one step.

:class:`Facts` holds the facts of a :class:`~dpfc.schedule.problem.Problem` that never
change during a greedy run (the registers, each node's subtree and path, operation heights,
the constants needed in an A register, the values an exit reads) and answers the liveness
questions every phase asks: which values consumers still pending below a node use
(:meth:`Facts.demand`), and which values they need through pure operations not held
anywhere (:meth:`Facts.closure`). :class:`Plan` is the set of actions chosen so far for one
step; :class:`NoFit` is how a variant gives up.

Not responsible for: choosing actions (:mod:`.step`), selectors
(:mod:`.realise`), the prolog (:mod:`.prolog`), or the array bindings made
during the walk (the scheduler of :mod:`.scheduler` owns them).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from dpfc.isa import Register
from dpfc.schedule.problem.tree import Branch, Exit, Kind, Operation, Problem

JUNK = -1  # a register whose value nothing can use
Where = str | tuple[int, ...]
STEERING_IMMEDIATE_MAX = 0xFFFF


class NoFit(Exception):
    """The current variant cannot fit (internal; never escapes ``greedy_schedule``)."""


@dataclass
class Plan:
    """The actions chosen so far for one step (registers are indices: A lanes, then B)."""

    alu: dict[int, tuple[int, bool]] = field(default_factory=dict)  # lane -> (op, swapped)
    hashes: dict[int, int] = field(default_factory=dict)  # lane -> HASH op (selector)
    mem: dict[int, int] = field(default_factory=dict)  # lane -> MEM op
    fixed: dict[int, int] = field(default_factory=dict)  # register -> its selected value
    branch: bool = False
    end: bool = False  # a leaf's exit
    extra_hard: frozenset[int] = frozenset()  # values the next state must hold
    # Staging: (value, where), where = "B" (any B register) or a tuple of A registers; each
    # want takes a register of its own.
    wants: tuple[tuple[int, Where], ...] = ()

    def copy(self) -> Plan:
        return Plan(
            dict(self.alu),
            dict(self.hashes),
            dict(self.mem),
            dict(self.fixed),
            self.branch,
            self.end,
            self.extra_hard,
            self.wants,
        )

    def require(self, reg: int, value: int) -> bool:
        """Fix the selected value of ``reg``; False if it is fixed to another value."""
        if self.fixed.get(reg, value) != value:
            return False
        self.fixed[reg] = value
        return True


class Facts:
    """The unchanging facts of ``problem`` the greedy phases share."""

    def __init__(self, problem: Problem, *, branches_first: bool = False) -> None:
        self.p = problem
        self.profile = problem.profile
        self.lanes = problem.profile.lanes
        self.nregs = 2 * self.lanes
        self.last_eu = problem.profile.num_eus - 1
        self.regs = [Register.a(i) for i in range(self.lanes)]
        self.regs += [Register.b(i) for i in range(self.lanes)]
        self.zero = next((o.id for o in problem.ops if o.kind is Kind.CONST and o.value == 0), None)
        self.subtree: dict[int, list[int]] = {}
        for node in reversed(problem.nodes):
            below = [node.id]
            for child in node.children:
                below += self.subtree[child]
            self.subtree[node.id] = below
        self.path_nodes = {n.id: set(problem.ancestors(n.id)) for n in problem.nodes}
        self.height = self._heights(branches_first)
        self.a_side_consts = self._a_side_consts()

    def op(self, op_id: int) -> Operation:
        return self.p.ops[op_id]

    def _heights(self, branches_first: bool) -> dict[int, int]:
        """Longest chain of consumers below each operation (critical path first). With
        ``branches_first``, a value a branch decides on also heads the longest chain below
        the branch (everything the children do waits for it); a node's descendants own
        operations of higher ids (:mod:`dpfc.schedule.problem.canonical`), so one pass from
        the back settles those chains before the branch's operands."""
        users: dict[int, list[int]] = {o.id: [] for o in self.p.ops}
        for o in self.p.ops:
            for x in o.operands:
                users[x].append(o.id)
        decides: dict[int, list[int]] = {}
        if branches_first:
            for node in self.p.nodes:
                if isinstance(node.end, Branch):
                    for x in {node.end.x, node.end.y}:
                        decides.setdefault(x, []).append(node.id)
        height: dict[int, int] = {}
        below: dict[int, int] = {}

        def after_branch(node: int) -> int:
            if node not in below:
                nodes = self.subtree[node][1:]
                below[node] = 1 + max(
                    (height.get(x, 0) for n in nodes for x in self.p.nodes[n].ops), default=0
                )
            return below[node]

        for o in reversed(self.p.ops):
            chains = [height.get(u, 0) for u in users[o.id]]
            chains += [after_branch(n) for n in decides.get(o.id, [])]
            height[o.id] = 1 + max(chains, default=0)
        return height

    def _a_side_consts(self) -> set[int]:
        """Constants that some operation needs in an A register (LOAD_IMM only writes B)."""
        out: set[int] = set()
        for o in self.p.ops:
            in_a = o.kind in (Kind.MEM, Kind.HASH) or (o.kind is Kind.ALU and not o.commutative)
            if in_a and self.op(o.operands[0]).kind is Kind.CONST:
                out.add(o.operands[0])
        return out

    def exit_values(self, leaf: int) -> list[int]:
        end = self.p.nodes[leaf].end
        assert isinstance(end, Exit)
        values = list(end.push)
        if end.steer_value is not None and not self.steer_immediate(end.steer_value):
            values.append(end.steer_value)
        return values

    def steer_immediate(self, op_id: int) -> bool:
        o = self.op(op_id)
        return o.kind is Kind.CONST and o.value <= STEERING_IMMEDIATE_MAX

    def mem_ops(self, node: int) -> list[int]:
        return [x for x in self.p.nodes[node].ops if self.op(x).kind is Kind.MEM]

    # -- liveness ----------------------------------------------------------------------------------
    def demand(self, t: int, placed: set[int], plan: Plan) -> set[int]:
        """Values consumers still pending after this step (in t's subtree) use directly."""
        out: set[int] = set()
        if plan.end:
            return set(self.exit_values(t))
        for n in self.subtree[t]:
            node = self.p.nodes[n]
            for m in self.mem_ops(n):
                if m not in placed:
                    out.update(self.op(m).operands)
            if isinstance(node.end, Branch):
                if not (n == t and plan.branch):
                    out.update((node.end.x, node.end.y))
            else:
                out.update(self.exit_values(n))
        return out

    def closure(self, base: Iterable[int], held: set[int]) -> set[int]:
        """Every value needed: ``base``, and the operands of needed pure values not held."""
        live: set[int] = set()
        stack = list(base)
        while stack:
            v = stack.pop()
            if v in live:
                continue
            live.add(v)
            o = self.op(v)
            if v not in held and o.is_pure:
                stack.extend(o.operands)
        return live
