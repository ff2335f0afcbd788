"""The chain of steps behind an earliest-EU bound: operations, branches and path ends.

Contract: :func:`critical_path` follows the reasons :func:`~.bounds.compute_bounds`
recorded back from the tree node whose last EU is latest (``Bounds.min_eus - 1``) to the
first EU, and returns the steps in that order (latest first). Each :class:`Link` is one
step at the EU the bound gives it:

* ``"operation"``: an ALU, HASH or memory operation runs in EU ``eu`` at the earliest
  (its operand that set the bound is the next link; a memory access that waits for its
  node's first EU is followed by that node's ``"follows"`` link);
* ``"branch"``: tree node ``node`` decides its branch in EU ``eu`` at the earliest
  (``operand`` is the operand that set it; the next link explains that operand);
* ``"exit"``: the path ending in leaf ``node`` needs ``operand`` in a register after EU
  ``eu``;
* ``"follows"``: tree node ``node`` starts in EU ``eu`` because its parent's branch is
  decided in EU ``eu - 1`` (the next link is that branch);
* ``"end"``: the path ending in ``node`` starts after the profile's last EU.

So the first link's EU is ``min_eus - 1`` and every link's EU is at least the next one's:
the chain a diagnostic shows ends where the bound it claims does. Inputs and constants end
the chain (the prolog loads them before EU0). The chain names problem entities only;
:mod:`dpfc.schedule.source_terms` says them in the source's words.
"""

from __future__ import annotations

from dataclasses import dataclass

from dpfc.schedule.problem.bounds import Bounds
from dpfc.schedule.problem.tree import INPUT_KINDS, Kind, Problem


@dataclass(frozen=True)
class Link:
    kind: str  # "operation" | "branch" | "exit" | "follows" | "end"
    eu: int
    node: int | None = None  # the tree node of a branch, exit, follows or end link
    operand: int | None = None  # the operation of an operation link; a branch's / exit's value


def critical_path(problem: Problem, bounds: Bounds) -> list[Link]:
    """The steps behind ``bounds.min_eus``, latest first (see the module docstring)."""
    if not problem.nodes:
        return []
    latest = max(problem.nodes, key=lambda n: (bounds.last[n.id], -n.id))
    return _follow(problem, bounds, ("node", latest.id))


def operand_path(problem: Problem, bounds: Bounds, op_id: int) -> list[Link]:
    """The steps behind the bound of ``op_id``'s operands (what it waits for), latest
    first: a pinned access that cannot be ready in its EU is explained by them."""
    why = bounds.reason.get(op_id)
    if why is None:
        waiting = bounds.waits.get(op_id)
        parent = problem.nodes[waiting].parent if waiting is not None else None
        if waiting is None or parent is None:
            return []
        follows = Link("follows", bounds.start[waiting], waiting)
        return [follows, *_follow(problem, bounds, ("node", parent))]
    start = _value(problem, why)
    return [] if start is None else _follow(problem, bounds, start)


def _follow(problem: Problem, bounds: Bounds, first: tuple[str, int]) -> list[Link]:
    links: list[Link] = []
    pending: tuple[str, int] | None = first
    seen: set[tuple[str, int]] = set()
    while pending is not None and pending not in seen:
        seen.add(pending)
        what, which = pending
        pending = None
        if what == "node":
            pending = _node_link(problem, bounds, which, links)
        else:
            pending = _operation_link(problem, bounds, which, links)
    return links


def _node_link(
    problem: Problem, bounds: Bounds, node: int, links: list[Link]
) -> tuple[str, int] | None:
    kind, operand = bounds.node_reason.get(node, ("start", None))
    last = bounds.last[node]
    parent = problem.nodes[node].parent
    if kind == "memory" and operand is not None:
        if problem.nodes[node].children:  # the branch comes after the node's own access
            links.append(Link("branch", last, node))
        return ("operation", operand)
    if kind in ("branch", "exit") and operand is not None:
        links.append(Link(kind, last, node, operand))
        return _value(problem, operand)
    if kind == "end":
        links.append(Link("end", last, node))
        return None
    if parent is None:  # the root at EU0: nothing before it
        if problem.nodes[node].children:
            links.append(Link("branch", last, node))
        return None
    if problem.nodes[node].children:
        links.append(Link("branch", last, node))
    links.append(Link("follows", bounds.start[node], node))
    return ("node", parent)


def _operation_link(
    problem: Problem, bounds: Bounds, op_id: int, links: list[Link]
) -> tuple[str, int] | None:
    op = problem.ops[op_id]
    links.append(Link("operation", bounds.run[op_id], operand=op_id))
    why = bounds.reason.get(op_id)
    if why is not None:
        return _value(problem, why)
    waiting = bounds.waits.get(op_id)
    if waiting is not None and op.kind is Kind.MEM:
        node = problem.nodes[waiting]
        links.append(Link("follows", bounds.start[waiting], waiting))
        return ("node", node.parent) if node.parent is not None else None
    return None


def _value(problem: Problem, op_id: int) -> tuple[str, int] | None:
    """The next step after a value: the operation computing it (inputs and constants
    end the chain)."""
    op = problem.ops[op_id]
    if op.kind in INPUT_KINDS or op.kind is Kind.CONST:
        return None
    return ("operation", op_id)
