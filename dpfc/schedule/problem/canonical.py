"""The canonical numbering of a problem's operations: the order of statements is not input.

Contract: :func:`canonical_order` returns the same :class:`~.tree.Problem` with its
operations renumbered in an order that depends only on the dataflow graph, the operations
and the tree, never on where the source wrote them or on the IR's value numbering. Two
problems that differ only in the order of independent statements (two pure ``let``
statements, a ``let`` and an access of another array, two accesses of different arrays)
and in names and spans become equal but for those names and spans. (Two conditions used
as words and built as branches still give trees of other shapes, since each splits the
tree where it stands; ``rand()`` words are numbered in the order they are drawn.) The
schedulers, the bounds, the checker and the cache key read the problem through its ids,
so their answers depend on the statements' order no more than the problem does: the
greedy list scheduler takes the first candidate that fits (its tie-breaks are ids), and
the Z3 model creates its terms in id order (which Z3's search depends on).

The order keeps operands before their users and each node's operations after its
ancestors' (:mod:`.bounds` and the greedy heights read them in one pass):

1. the inputs and constants, shared by every path: parameters by stack position, the
   ``PEEK`` word, metadata by field index, random words by draw, constants by value;
2. then the tree nodes in preorder (their ids follow the branches' shape), each node's own
   operations in the order a program computing each value just before its use would write
   them: a depth-first walk from the operations no other operation of the node uses (the
   highest *level* first: 1 + the highest level of the operands, inputs and constants 0),
   each operation after its operands, the operands of a commutative operation the highest
   level first. Among equal levels a memory access comes in the order its array is
   declared in, after the pure operations; remaining ties are broken by a digest of the
   operation's operand DAG (kind, ALU or memory operation, array, hash lane, owner node,
   and the operands' digests — in order, or sorted for a commutative operation), and equal
   digests (identical operations, which the builder does not make) by the old order.

A commutative operation's operands are put in a canonical order too (constants last, then
by their new ids): CSE keeps the operands of the first of ``x + y`` and ``y + x`` as
written, so which one it keeps depends on the statements' order. The optional operations of
:mod:`.materialise` are added after this, as a function of the canonical problem. Names and
spans travel with their operations; nothing else of the problem changes.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import replace

from dpfc.schedule.problem.tree import Branch, Exit, Kind, Operation, Problem, TreeNode

# Inputs and constants first, in this order of kinds (then by index or value).
SHARED_KINDS = (Kind.PARAM, Kind.PEEK, Kind.META, Kind.RAND, Kind.CONST)


def canonical_order(problem: Problem) -> Problem:
    """``problem`` with its operations renumbered canonically (see the module docstring)."""
    assert not problem.same_word, "canonical_order runs before .materialise"
    digests, levels = _digests_and_levels(problem)

    def shared_key(op: Operation) -> tuple[int, int, int]:
        number = op.value if op.kind is Kind.CONST else op.index
        return (SHARED_KINDS.index(op.kind), number, op.id)

    shared = sorted((o for o in problem.ops if o.kind in SHARED_KINDS), key=shared_key)
    order = [o.id for o in shared]
    for node in problem.nodes:
        order += _walk(problem, node.ops, digests, levels)
    assert sorted(order) == list(range(len(problem.ops))), "an operation no node owns"
    new = {old: position for position, old in enumerate(order)}
    ops = tuple(
        replace(
            problem.ops[old],
            id=new[old],
            operands=_operands(problem.ops[old], new.__getitem__, problem),
        )
        for old in order
    )
    nodes = tuple(
        TreeNode(n.id, n.parent, tuple(sorted(new[x] for x in n.ops)), _end(n.end, new), n.label)
        for n in problem.nodes
    )
    return replace(problem, ops=ops, nodes=nodes)


def _digests_and_levels(problem: Problem) -> tuple[dict[int, bytes], dict[int, int]]:
    """Each operation's digest (what it computes from what, independent of ids) and level.
    Operands come before their users in ``problem.ops``, so one pass settles both."""
    digests: dict[int, bytes] = {}
    levels: dict[int, int] = {}
    for op in problem.ops:
        parts = (
            op.kind.value,
            op.index,
            op.value,
            op.alu.value if op.alu is not None else "",
            op.lane,
            op.mem.value if op.mem is not None else "",
            op.array,
            op.owner,
        )
        hasher = hashlib.sha256(repr(parts).encode())
        operands = [digests[x] for x in op.operands]
        for operand in sorted(operands) if op.commutative else operands:
            hasher.update(operand)
        digests[op.id] = hasher.digest()
        levels[op.id] = 1 + max((levels[x] for x in op.operands), default=-1)
    return digests, levels


def _walk(
    problem: Problem, owned: tuple[int, ...], digests: dict[int, bytes], levels: dict[int, int]
) -> list[int]:
    """A node's own operations, each after its operands (see the module docstring)."""

    declared = {name: rank for rank, name in enumerate(problem.arrays)}

    def key(x: int) -> tuple[int, int, bytes, int]:
        array = problem.ops[x].array
        return (-levels[x], -1 if array is None else declared.get(array, -1), digests[x], x)

    mine = set(owned)
    used = {x for o in owned for x in problem.ops[o].operands}
    out: list[int] = []
    seen: set[int] = set()
    for root in sorted((x for x in owned if x not in used), key=key):
        # Depth first, iteratively: (operation, its operands left to visit).
        stack = [(root, _visit_order(problem.ops[root], key))]
        seen.add(root)
        while stack:
            op_id, pending = stack[-1]
            while pending and (pending[0] not in mine or pending[0] in seen):
                pending.pop(0)
            if not pending:
                stack.pop()
                out.append(op_id)
                continue
            operand = pending.pop(0)
            seen.add(operand)
            stack.append((operand, _visit_order(problem.ops[operand], key)))
    return out


def _visit_order(op: Operation, key: Callable[[int], tuple[int, int, bytes, int]]) -> list[int]:
    operands = list(op.operands)
    if op.commutative:
        operands.sort(key=key)
    return operands


def _operands(op: Operation, new: Callable[[int], int], problem: Problem) -> tuple[int, ...]:
    """``op``'s operands renumbered; a commutative operation's constants last, the others
    by their new ids."""
    operands = tuple(new(x) for x in op.operands)
    if not op.commutative:
        return operands
    kinds = {new(x): problem.ops[x].kind for x in op.operands}
    return tuple(sorted(operands, key=lambda x: (kinds[x] is Kind.CONST, x)))


def _end(end: Branch | Exit, new: dict[int, int]) -> Branch | Exit:
    if isinstance(end, Branch):
        return replace(end, x=new[end.x], y=new[end.y])
    steer = new[end.steer_value] if end.steer_value is not None else None
    return replace(end, push=tuple(new[v] for v in end.push), steer_value=steer)
