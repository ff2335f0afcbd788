"""What the Z3 model has to consider at one EU count: value and operation domains.

Contract: :func:`compute_domains` returns, for a problem and an EU count, which values can
be in which class of register at which EU of which tree node, and which operations each
copy (tree node, EU) can run. Every restriction is implied by the machine's rules, so the
Z3 model (:mod:`dpfc.schedule.z3`) may create variables only inside these domains without losing a
schedule; the smaller the domains, the smaller and faster the model.

* **Windows.** A value can be in a register from its earliest EU (:mod:`.bounds`, per
  register class: a LOAD_IMM constant reaches an A register only by a MOV) until the last
  EU a user can still read it (:func:`.bounds.deadlines`: an epilog reads the state after
  the last EU, a branch reads its EU, an operation reads its operands in its own EU).
* **Relevance.** A node's registers need only values its subtree uses: the operands (and
  their operands, transitively) of the operations, branches and epilogs below it. A value
  only another path needs is never worth holding.
* **Candidates.** A copy (t, k) may run a pure operation owned by ``t`` or a descendant
  (speculation) and a memory operation owned by ``t``, each between its earliest EU and
  its deadline.
"""

from __future__ import annotations

from dataclasses import dataclass

from dpfc.schedule.problem.bounds import Bounds, deadlines
from dpfc.schedule.problem.tree import Branch, Exit, Kind, Operation, Problem

STEERING_IMMEDIATE_MAX = 0xFFFF


def exit_values(problem: Problem, exit_: Exit) -> list[int]:
    """The values an epilog reads from registers: its pushes and a steering value that is
    not a 16-bit immediate (distinct, in order)."""
    values = list(exit_.push)
    if exit_.steer_value is not None:
        op = problem.ops[exit_.steer_value]
        if not (op.kind is Kind.CONST and op.value <= STEERING_IMMEDIATE_MAX):
            values.append(exit_.steer_value)
    return list(dict.fromkeys(values))


@dataclass(frozen=True)
class Domains:
    eus: int
    deadline: dict[int, int]  # ALU/HASH/MEM op -> the latest EU it can usefully run in
    useful_until: dict[int, int]  # value -> the last EU (entry index) a user reads it
    relevant: dict[int, frozenset[int]]  # tree node -> values its subtree may need
    subtree: dict[int, frozenset[int]]  # tree node -> itself and its descendants
    bounds: Bounds

    def in_register(self, node: int, k: int, value: int, cls_a: bool) -> bool:
        """Can ``value`` usefully be in an A (``cls_a``) or B register at EU ``k``'s entry
        (``k == eus``: after the last EU) on paths through ``node``?"""
        if value not in self.relevant[node]:
            return False
        earliest = (self.bounds.entry_a if cls_a else self.bounds.entry_b)[value]
        return earliest <= k <= self.useful_until.get(value, -1)

    def selected(self, node: int, k: int, value: int, cls_a: bool) -> bool:
        """... in an A or B register after EU ``k``'s selectors."""
        if value not in self.relevant[node]:
            return False
        earliest = (self.bounds.sel_a if cls_a else self.bounds.sel_b)[value]
        return earliest <= k <= self.useful_until.get(value, -1)

    def runs(self, op: Operation, k: int) -> bool:
        """Can ``op`` (ALU, HASH or MEM) run in EU ``k``?"""
        return self.bounds.run[op.id] <= k <= self.deadline[op.id]

    def pure_candidates(self, problem: Problem, node: int, k: int, kind: Kind) -> list[Operation]:
        below = self.subtree[node]
        return [o for o in problem.ops if o.kind is kind and o.owner in below and self.runs(o, k)]

    def memory_candidates(self, problem: Problem, node: int, k: int) -> list[Operation]:
        return [
            o for o in problem.ops if o.kind is Kind.MEM and o.owner == node and self.runs(o, k)
        ]


def compute_domains(problem: Problem, bounds: Bounds, eus: int) -> Domains:
    ops = problem.ops
    deadline = deadlines(problem, eus)
    useful: dict[int, int] = {}

    def read(value: int, until: int) -> None:
        useful[value] = max(useful.get(value, -1), until)

    made = problem.same_word  # operations computing a constant's word (.materialise)
    for op in ops:
        if op.id in deadline and op.id not in made:
            for operand in op.operands:
                read(operand, deadline[op.id])
    uses: dict[int, set[int]] = {}  # node -> values read directly in it (branch, epilog)
    for node in problem.nodes:
        direct: set[int] = set()
        if isinstance(node.end, Branch):
            for operand in (node.end.x, node.end.y):
                read(operand, eus - 1)
                direct.add(operand)
        else:
            for value in exit_values(problem, node.end):
                read(value, eus)
                direct.add(value)
        for op_id in node.ops:
            if ops[op_id].kind in (Kind.ALU, Kind.HASH, Kind.MEM) and op_id not in made:
                direct.add(op_id)
        uses[node.id] = direct
    # An operation computing a constant is of use until the constant's last reader; its
    # result is in A one EU after it runs. (A constant may feed another such operation:
    # settle them together.)
    settled = False
    while not settled:
        settled = True
        for op_id, word in made.items():
            # An ALU result is in A one EU later; a HASH selects the word in its own EU.
            late = 0 if ops[op_id].kind is Kind.HASH else 1
            until = min(deadline[op_id], useful.get(word, -1) - late)
            if until != deadline[op_id]:
                deadline[op_id], settled = until, False
            for operand in ops[op_id].operands:
                if useful.get(operand, -1) < until:
                    read(operand, until)
                    settled = False
    subtree: dict[int, frozenset[int]] = {}
    relevant: dict[int, frozenset[int]] = {}
    for node in reversed(problem.nodes):  # children before parents (preorder reversed)
        below = {node.id}
        needed = set(uses[node.id])
        for child in node.children:
            below |= subtree[child]
            needed |= relevant[child]
        subtree[node.id] = frozenset(below)
        relevant[node.id] = frozenset(_closure(problem, needed))
    return Domains(eus, deadline, useful, relevant, subtree, bounds)


def _operands(problem: Problem, op: Operation) -> list[int]:
    """What ``op`` reads, and for a constant, the operands of the operations that may
    compute its word (:mod:`.materialise`)."""
    if op.kind is not Kind.CONST:
        return list(op.operands)
    made = [m for m, word in problem.same_word.items() if word == op.id]
    return [x for m in made for x in problem.ops[m].operands]


def _closure(problem: Problem, values: set[int]) -> set[int]:
    out = set(values)
    stack = list(values)
    while stack:
        for operand in _operands(problem, problem.ops[stack.pop()]):
            if operand not in out:
                out.add(operand)
                stack.append(operand)
    return out
