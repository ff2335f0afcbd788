"""Earliest-EU bounds: a sound relaxation of the scheduling problem, without a solver.

For every operation, the earliest EU in which it can run and the earliest EU at whose
entry its result can be in a register, from the machine's latencies alone (docs/isa.md §3):
a selector result is visible to the ALU and memory data of its own EU; ALU results and
loaded values from the next EU on; a memory address is read at EU entry
(``memory_address = entry``); a HASH reads its lane's entry A register; a constant enters a
B register by LOAD_IMM in any EU, and an A register only by a MOV one EU later. Then the
tree: a node's memory operations run after its parent's branch and no later than its own
branch; a branch needs its operands (per ``branch_operands``); a path's epilog needs its
values. Pinned arrays fix their accesses' EU.

Every bound is a lower bound on *every* schedule, so:

* ``min_eus`` is a lower bound on the optimal EU count; if it exceeds the profile's EUs the
  DPF cannot fit, and :func:`critical_chain` names the dependence chain that proves it;
* the Z3 model adds the bounds as redundant constraints (an operation cannot run, and a
  value cannot be in a register, before its bound), which prunes its search without
  changing its solutions.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from dpfc.isa import AluOp, MemOp
from dpfc.schedule.problem.tree import INPUT_KINDS, Branch, Exit, Kind, Operation, Problem
from dpfc.target import BranchOperands, MemoryAddress

INFEASIBLE = 1 << 20  # a bound no schedule can meet (a pinned access that comes too late)


@dataclass(frozen=True)
class Bounds:
    run: dict[int, int]  # operation id -> earliest EU it can run in (inputs/consts: 0)
    entry: dict[int, int]  # operation id -> earliest EU at whose entry it can be in a register
    entry_a: dict[int, int]  # ... in an A register
    entry_b: dict[int, int]  # ... in a B register
    sel_a: dict[int, int]  # ... in a selected A register
    sel_b: dict[int, int]  # ... in a selected B register
    start: dict[int, int]  # tree node -> earliest first EU of its own
    last: dict[int, int]  # tree node -> earliest branch EU (non-leaf) / end EU (leaf)
    reason: dict[int, int | None]  # operation -> the operand (or None) that set its bound
    min_eus: int  # a lower bound on the EUs of any schedule
    late_pins: tuple[tuple[Operation, int], ...] = ()  # pinned accesses whose operands come later
    # tree node -> what set ``last``: ("start", None) its first EU (after its parent's
    # branch), ("memory", op) a memory access, ("branch", operand) a branch operand,
    # ("exit", value) a value its epilog reads, ("end", None) a path beyond the profile's EUs
    node_reason: dict[int, tuple[str, int | None]] = field(default_factory=dict)
    # memory access -> the tree node whose first EU set its bound (it waits for the branch)
    waits: dict[int, int] = field(default_factory=dict)


def compute_bounds(problem: Problem) -> Bounds:
    profile = problem.profile
    ops = problem.ops
    run: dict[int, int] = {}
    entry: dict[int, int] = {}
    sel_a: dict[int, int] = {}
    sel_b: dict[int, int] = {}
    reason: dict[int, int | None] = {}
    start: dict[int, int] = {}
    last: dict[int, int] = {}
    late: list[tuple[Operation, int]] = []
    node_reason: dict[int, tuple[str, int | None]] = {}
    waits: dict[int, int] = {}
    pins = {name: info.pin for name, info in problem.arrays.items() if info.pin is not None}

    entry_a: dict[int, int] = {}  # earliest entry in an A register (HASH inputs, addresses)
    entry_b: dict[int, int] = {}

    def set_value(op_id: int, in_a: int, in_b: int, selected_a: int, selected_b: int) -> None:
        entry_a[op_id] = in_a
        entry_b[op_id] = in_b
        entry[op_id] = min(in_a, in_b)
        # A selector can MOV any register's entry value into a register of either class.
        sel_a[op_id] = min(selected_a, entry[op_id])
        sel_b[op_id] = min(selected_b, entry[op_id])

    def result(op: Operation, at: int, why: int | None) -> None:
        """An ALU result lands in A at the next entry; a loaded value in B."""
        run[op.id] = at
        reason[op.id] = why
        if op.kind is Kind.MEM:
            set_value(op.id, at + 2, at + 1, at + 1, at + 1)
        else:
            set_value(op.id, at + 1, at + 2, at + 1, at + 1)

    def latest(*pairs: tuple[int, int | None]) -> tuple[int, int | None]:
        return max(pairs, key=lambda p: p[0])

    # Operations are built in program order along the tree (operands first); nodes in
    # preorder (parents first), so one pass over the nodes suffices.
    for op in ops:
        if op.kind in INPUT_KINDS or (op.kind is Kind.CONST and op.value == 0):
            run[op.id], reason[op.id] = 0, None
            set_value(op.id, 0, 0, 0, 0)
        elif op.kind is Kind.CONST:
            # LOAD_IMM writes B only: selected B in EU0, entry B at EU1, A via a MOV in EU1.
            run[op.id], reason[op.id] = 0, None
            set_value(op.id, 2, 1, 1, 0)
    for made, word in problem.same_word.items():
        # An ALU operation computing the constant's word from constants (.materialise)
        # puts it in A one EU after the operation can run (ADD 0, c: EU1's entry).
        op = ops[made]
        if op.kind is Kind.HASH:
            # A HASH of a constant in its lane's entry A selects the word in its own EU.
            at = entry_a[op.operands[0]]
            set_value(
                word,
                min(entry_a[word], at + 1),
                min(entry_b[word], at + 2),
                min(sel_a[word], at),
                min(sel_b[word], at + 1),
            )
            continue
        x, y = op.operands
        at = min(max(sel_a[x], sel_b[y]), max(sel_a[y], sel_b[x]))
        set_value(
            word,
            min(entry_a[word], at + 1),
            entry_b[word],
            min(sel_a[word], at + 1),
            sel_b[word],
        )
    for node in problem.nodes:
        parent = node.parent
        node_start = 0 if parent is None else last[parent] + 1
        start[node.id] = node_start
        node_last = node_start
        why: tuple[str, int | None] = ("start", None)
        for op_id in node.ops:
            op = ops[op_id]
            if op.kind is Kind.HASH:
                (x,) = op.operands
                at = entry_a[x]  # HASH reads its lane's EU-entry A register
                run[op.id], reason[op.id] = at, x
                set_value(op.id, at + 1, at + 2, at, at + 1)
            elif op.kind is Kind.ALU:
                if op.alu is AluOp.NEG:
                    (x,) = op.operands
                    result(op, sel_a[x], x)
                else:
                    x, y = op.operands
                    straight = latest((sel_a[x], x), (sel_b[y], y))
                    if op.commutative:
                        crossed = latest((sel_a[y], y), (sel_b[x], x))
                        straight = min(straight, crossed, key=lambda p: p[0])
                    result(op, *straight)
            elif op.kind is Kind.MEM:
                address = op.operands[0]
                address_ready = (
                    sel_a[address]
                    if profile.memory_address is MemoryAddress.SELECTED
                    else entry_a[address]
                )
                pairs: list[tuple[int, int | None]] = [(address_ready, address), (node_start, None)]
                if op.mem is not MemOp.LOAD:
                    pairs.append((sel_b[op.operands[1]], op.operands[1]))
                at, operand = latest(*pairs)
                if operand is None and at == node_start:
                    waits[op.id] = node.id
                pin = pins.get(op.array or "")
                if pin is not None:
                    if at > pin[0]:
                        late.append((op, at))
                    at = pin[0] if at <= pin[0] else INFEASIBLE
                result(op, at, operand)
                if at > node_last or why == ("start", None):  # at >= node_start
                    node_last, why = at, ("memory", op.id)
        if isinstance(node.end, Branch):
            for operand in (node.end.x, node.end.y):
                if ops[operand].kind is Kind.CONST:
                    continue  # an immediate
                seen = _visible_to_branch(problem, operand, run, entry, sel_a, sel_b)
                if seen > node_last:
                    node_last, why = seen, ("branch", operand)
        else:
            for value in _exit_values(node.end, problem):
                needed = entry[value] - 1
                if needed > node_last or (needed == node_last and why == ("start", None)):
                    node_last, why = needed, ("exit", value)
            if node_start >= profile.num_eus and why == ("start", None):
                # A path with nothing of its own ends with its parent's branch in the
                # last EU (the epilog follows); work of its own needs an EU after it.
                node_last, why = profile.num_eus - 1, ("end", None)
        last[node.id] = node_last
        node_reason[node.id] = why
    min_eus = max([1, *(v + 1 for v in last.values())])
    return Bounds(
        run,
        entry,
        entry_a,
        entry_b,
        sel_a,
        sel_b,
        start,
        last,
        reason,
        min_eus,
        tuple(late),
        node_reason,
        waits,
    )


def _visible_to_branch(
    problem: Problem,
    operand: int,
    run: dict[int, int],
    entry: dict[int, int],
    sel_a: dict[int, int],
    sel_b: dict[int, int],
) -> int:
    mode = problem.profile.branch_operands
    if mode is BranchOperands.ENTRY:
        return entry[operand]
    selected = min(sel_a[operand], sel_b[operand])
    op = problem.ops[operand]
    if mode is BranchOperands.LOADED and op.kind is Kind.MEM and op.has_result:
        return min(selected, run[operand])
    return selected


def _exit_values(exit_: Exit, problem: Problem) -> list[int]:
    values = list(exit_.push)
    if exit_.steer_value is not None:
        op = problem.ops[exit_.steer_value]
        if not (op.kind is Kind.CONST and op.value <= 0xFFFF):
            values.append(exit_.steer_value)
    return values


def critical_chain(problem: Problem, bounds: Bounds) -> list[Operation]:
    """The dependence chain behind ``bounds.min_eus``: last operation first."""
    # The operation with the latest bound, then the operands that set each bound.
    candidates = [o for o in problem.ops if o.kind in (Kind.ALU, Kind.HASH, Kind.MEM)]
    if not candidates:
        return []
    current: Operation | None = max(candidates, key=lambda o: (bounds.run[o.id], -o.id))
    chain: list[Operation] = []
    while current is not None and current.id not in {o.id for o in chain}:
        chain.append(current)
        why = bounds.reason.get(current.id)
        current = problem.ops[why] if why is not None else None
    return [o for o in chain if o.kind not in INPUT_KINDS]


def deadlines(problem: Problem, eus: int) -> dict[int, int]:
    """The latest EU each ALU, HASH and memory operation can usefully run in, in a schedule
    of ``eus`` EUs: the mirror image of :func:`compute_bounds`.

    Every EU after the last one is gone, so a value an epilog pushes must be computed by
    EU ``eus - 1``, a branch operand be visible in the branch's EU (at most ``eus - 1``),
    and an operand be ready when its user runs at the latest: an ALU result or a loaded
    word is selected one EU after it is computed and at an EU's entry one EU after that
    (a loaded word reaches an A register by a MOV), a HASH result is selected in its own
    EU. A copy of a pure operation computed later than this reaches nothing in time, and a
    memory operation must run on its path, so the Z3 model may forbid both (a redundant
    constraint: every schedule of ``eus`` EUs obeys it)."""
    ops = problem.ops
    profile = problem.profile
    last = eus - 1
    deadline: dict[int, int] = {
        o.id: last for o in ops if o.kind in (Kind.ALU, Kind.HASH, Kind.MEM)
    }

    def selected_delay(x: Operation, in_b: bool) -> int:
        # ALU results and loads are selected the EU after; a HASH result in its own EU in
        # A (HASH writes A's selected value), a MOV later in B.
        return 1 if x.kind is not Kind.HASH or in_b else 0

    def entry_a_delay(x: Operation) -> int:
        return 2 if x.kind is Kind.MEM else 1

    def need(x_id: int, by: int) -> None:
        if x_id in deadline:
            deadline[x_id] = min(deadline[x_id], by)

    entry_mode = profile.memory_address is MemoryAddress.ENTRY
    for node in problem.nodes:
        if isinstance(node.end, Branch):
            for operand in (node.end.x, node.end.y):
                x = ops[operand]
                if x.kind not in (Kind.ALU, Kind.HASH, Kind.MEM):
                    continue
                mode = profile.branch_operands
                if mode is BranchOperands.ENTRY:
                    delay = 1
                elif mode is BranchOperands.LOADED and x.kind is Kind.MEM:
                    delay = 0
                else:
                    delay = selected_delay(x, in_b=False)
                need(operand, last - delay)
    # Users come after their operands in ``ops`` (program order along the tree), so one
    # pass from the back settles each user's deadline before its operands'.
    for op in reversed(ops):
        if op.id not in deadline:
            continue
        at = deadline[op.id]
        if op.kind is Kind.HASH:
            need(op.operands[0], at - entry_a_delay(ops[op.operands[0]]))
        elif op.kind is Kind.ALU:
            for position, x_id in enumerate(op.operands):
                x = ops[x_id]
                # Either operand may go to A for a commutative op: take the looser delay.
                in_b = position == 1 and not op.commutative
                need(x_id, at - selected_delay(x, in_b))
        elif op.kind is Kind.MEM:
            address = ops[op.operands[0]]
            delay = entry_a_delay(address) if entry_mode else selected_delay(address, False)
            need(address.id, at - delay)
            if op.mem is not MemOp.LOAD:
                need(op.operands[1], at - selected_delay(ops[op.operands[1]], in_b=True))
    return deadline
