"""Symbolic conditions while building a problem, what a path knows, and branching on them.

Contract: a condition (:data:`Cond`) is kept symbolic — a :class:`Compare` of two operation
ids, a :class:`BoolOp` (``and``/``or``/``xor``/``select``) of conditions, or a constant —
until something needs it. :class:`Walk` is one tree node's view while walking: the IR
values, the pure operations it can reuse, and the relations the ancestors' branches decided
on this path (so a condition already decided is not branched on again).
:func:`branch_on` ends a node with the decision tree of a condition (``≤ ≥ ≠`` are the
strict compares with the targets swapped, docs/isa.md item 6) and runs a continuation in
each child, taken subtree first.

Not responsible for translating IR instructions (:mod:`.instructions`), conditions as 0/1
words (:mod:`.instructions` with :mod:`.boolwords`), or walking the CFG (:mod:`.build`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from dpfc.diagnostics import Span
from dpfc.ir import COMPARES, Instr, Op
from dpfc.schedule.problem.state import BuildState
from dpfc.schedule.problem.tree import Branch


@dataclass(frozen=True)
class Compare:
    op: Op
    x: int  # operation ids
    y: int
    span: Span | None


@dataclass(frozen=True)
class BoolOp:
    op: str  # "and" | "or" | "xor" | "select"
    args: tuple[Cond, ...]


Cond = bool | Compare | BoolOp
Value = int | Cond  # a word (operation id) or a condition


class Walk:
    """One tree node's view while walking: the IR values and the pure ops it can reuse."""

    def __init__(
        self,
        env: dict[int, Value],
        pure: dict[tuple[object, ...], int],
        known: dict[tuple[str, int, int], frozenset[str]] | None = None,
    ) -> None:
        self.env = env  # id(Instr) -> value
        self.pure = pure  # hash-consing key -> operation id (ops of this node and ancestors)
        # What the branches of the ancestors decided on this path about pairs of values:
        # (order, x, y) with x <= y -> the relations still possible ("lt", "eq", "gt"; order
        # "u"/"s" for unsigned/signed compares, "t" for a bit test, "set"/"clear"). A
        # condition that is then decided (``a >= b`` after ``a < b``, or ``a == b`` after
        # ``a < b`` was true) reuses the branch instead of branching again.
        self.known = known if known is not None else {}

    def copy(self) -> Walk:
        return Walk(dict(self.env), dict(self.pure), dict(self.known))

    def word(self, instr: Instr) -> int:
        """The operation id ``instr`` stands for on this path (it must be a word)."""
        value = self.env[id(instr)]
        assert isinstance(value, int) and not isinstance(value, bool), instr
        return value

    def cond(self, instr: Instr) -> Cond:
        """The condition ``instr`` stands for on this path (it must be a boolean)."""
        value = self.env[id(instr)]
        assert isinstance(value, bool | Compare | BoolOp), instr
        return value

    def outcome(self, cond: Compare) -> bool | None:
        """True/False if the path has decided ``cond``, else None."""
        for key, holds in _relations(cond):
            possible = self.known.get(key)
            if possible is not None and possible <= holds:
                return True
            if possible is not None and not possible & holds:
                return False
        return None

    def decided(self, cond: Compare, outcome: bool) -> Walk:
        """A copy that knows ``cond`` came out ``outcome``."""
        out = self.copy()
        for key, holds in _relations(cond):
            every = TEST_RELATIONS if key[0] == "t" else ORDER_RELATIONS
            possible = out.known.get(key, every)
            out.known[key] = possible & (holds if outcome else every - holds)
        return out


ORDER_RELATIONS = frozenset({"lt", "eq", "gt"})
TEST_RELATIONS = frozenset({"set", "clear"})
# Each compare: its order and the relations of (x, y) for which it is true.
_HOLDS: dict[Op, tuple[str, frozenset[str]]] = {
    Op.EQ: ("u", frozenset({"eq"})),
    Op.NE: ("u", frozenset({"lt", "gt"})),
    Op.ULT: ("u", frozenset({"lt"})),
    Op.ULE: ("u", frozenset({"lt", "eq"})),
    Op.UGT: ("u", frozenset({"gt"})),
    Op.UGE: ("u", frozenset({"gt", "eq"})),
    Op.SLT: ("s", frozenset({"lt"})),
    Op.SLE: ("s", frozenset({"lt", "eq"})),
    Op.SGT: ("s", frozenset({"gt"})),
    Op.SGE: ("s", frozenset({"gt", "eq"})),
    Op.TEST: ("t", frozenset({"set"})),
}
_MIRROR = {"lt": "gt", "gt": "lt", "eq": "eq"}


def _relations(cond: Compare) -> list[tuple[tuple[str, int, int], frozenset[str]]]:
    """The keys of ``walk.known`` that decide ``cond`` and the relations that make it
    true: operands in id order (mirrored when swapped); an equality is read in both the
    unsigned and the signed order. A bit test is not symmetric: its key keeps the order."""
    order, holds = _HOLDS[cond.op]
    x, y = cond.x, cond.y
    if order != "t" and x > y:
        x, y = y, x
        holds = frozenset(_MIRROR[r] for r in holds)
    keys = [((order, x, y), holds)]
    if cond.op in (Op.EQ, Op.NE):
        keys.append((("s", x, y), holds))
    return keys


def bool_op(op: str, a: Cond, b: Cond) -> Cond:
    """``a op b`` (``and``/``or``/``xor``), folded when either side is a constant."""
    if isinstance(a, bool) and isinstance(b, bool):
        return {"and": a and b, "or": a or b, "xor": a != b}[op]
    if isinstance(a, bool):
        a, b = b, a
    if isinstance(b, bool):
        if op == "and":
            return a if b else False
        if op == "or":
            return True if b else a
        if not b:  # xor false
            return a
    return BoolOp(op, (a, b))


# What runs in a tree node once a branch has chosen it: (node, the path's view) -> None.
Cont = Callable[[int, Walk], None]


def branch_on(
    state: BuildState,
    node: int,
    cond: Cond,
    if_true: Cont,
    if_false: Cont,
    walk: Walk,
    span: Span | None,
) -> None:
    """End ``node`` with the decision tree of ``cond``; the continuations run the rest."""
    if isinstance(cond, bool):
        (if_true if cond else if_false)(node, walk)
        return
    if isinstance(cond, Compare):
        outcome = walk.outcome(cond)
        if outcome is not None:  # decided by an ancestor's branch on this path
            (if_true if outcome else if_false)(node, walk)
            return
        kind, swap_operands, swap_targets = COMPARES[cond.op]
        x, y = (cond.y, cond.x) if swap_operands else (cond.x, cond.y)
        first, second = (if_false, if_true) if swap_targets else (if_true, if_false)
        taken = state.new_node(node, span or cond.span)
        first(taken, walk.decided(cond, not swap_targets))
        not_taken = state.new_node(node, span or cond.span)
        second(not_taken, walk.decided(cond, swap_targets))
        state.node_end[node] = Branch(kind, x, y, taken, not_taken, cond.span or span)
        return
    op, args = cond.op, cond.args
    if op == "and":
        a, b = args
        branch_on(
            state,
            node,
            a,
            lambda n, w: branch_on(state, n, b, if_true, if_false, w, span),
            if_false,
            walk,
            span,
        )
    elif op == "or":
        a, b = args
        branch_on(
            state,
            node,
            a,
            if_true,
            lambda n, w: branch_on(state, n, b, if_true, if_false, w, span),
            walk,
            span,
        )
    elif op == "xor":
        a, b = args
        branch_on(
            state,
            node,
            a,
            lambda n, w: branch_on(state, n, b, if_false, if_true, w, span),
            lambda n, w: branch_on(state, n, b, if_true, if_false, w, span),
            walk,
            span,
        )
    else:  # select
        c, a, b = args
        branch_on(
            state,
            node,
            c,
            lambda n, w: branch_on(state, n, a, if_true, if_false, w, span),
            lambda n, w: branch_on(state, n, b, if_true, if_false, w, span),
            walk,
            span,
        )
