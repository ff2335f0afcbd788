"""Sinking: a pure value is computed in the arm that uses it, not where the source wrote it.

Example (``slack`` is written before the branch but read only in one arm)::

    entry:                                  entry:
      %0 = param 0                            %0 = param 0
      %1 = param 1                            %1 = param 1
      %2 = sub %0, %1                         %3 = const 46
      %3 = const 46                           %4 = uge %1, %3
      %4 = uge %1, %3                         br %4, hot, cold
      br %4, hot, cold                      hot:
    hot:                                      %2 = sub %0, %1
      exit push(%2)                           exit push(%2)
    cold:                                   cold:
      exit push(%0)                           exit push(%0)

A pure instruction (anything but a memory op, ``rand``, ``phi`` and ``param``: constants and
metadata reads move too) that no instruction or terminator of its own block reads moves
down the dominator tree towards its uses (a φ reads its value at the end of the
predecessor it names): to the nearest common dominator of the blocks that read it, or the
deepest block on the way there that a single path leads to from where it stood (every
block on the way has one predecessor; a join is where paths meet, and each path through
it would need the value anyway). When the uses lie in two or more arms of its own block
(children in the dominator tree, each with the block as its only predecessor), the
instruction is **duplicated**: one copy per arm, each sunk in turn. No path visits two
arms, so no path computes a value more often than before, and a path that does not need it
no longer computes it. Users are placed before their operands, so a whole expression moves
with the value it computes.

Why: the scheduler (docs/scheduling.md) places an operation in the tree node of the block
it stands in or, speculatively, in an ancestor's bundle, never below: a value written
before a branch but used in one arm had to be computed before the branch was decided, which
can cost an EU. ``reassociate`` sees a chain whole only within one block, and ``ifconvert``
decides by what an arm holds. After this pass (the pipeline runs it before both) they see
the same IR whether the source writes such a ``let`` before the branch or in the arm that
uses it, so the EU count, and the earliest-EU bounds the diagnostics quote, do not depend
on it. (Parameters stay: the prolog loads them, wherever they are read.)

Each block's instructions are put in the order they had in the function (a copy takes its
original's place), φs first and every instruction after its operands; moved instructions
come from earlier blocks, so they go ahead of the ones already there. A ``let`` written at
the top of the arm that uses it and the same ``let`` written before the branch give the
same instructions in that arm (tests/test_schedule_layout.py), except that a constant the
rest of the DPF also uses may stand elsewhere (the scheduling problem shares constants by
value).

Requires: a well-formed, acyclic function. Ensures: the same behaviour on every input;
no path computes a pure value more often than before; run again, it changes nothing.
"""

from __future__ import annotations

from dataclasses import replace

from dpfc.ir import (
    MEMORY_OPS,
    SIDE_EFFECT_OPS,
    Br,
    Exit,
    Function,
    Instr,
    Op,
    dominator_tree_preorder,
    immediate_dominators,
    predecessors,
)
from dpfc.passes.base import FunctionPass
from dpfc.passes.rewrite import terminator_values

NOT_MOVED = MEMORY_OPS | SIDE_EFFECT_OPS | {Op.PHI, Op.PARAM, Op.RAND}


class _Use:
    """One read of a value: by an instruction (``user``; a φ reads at the end of the
    predecessor ``block``) or by the terminator of ``block``, as its ``index``-th value."""

    __slots__ = ("block", "index", "user")

    def __init__(self, user: Instr | None, block: str, index: int) -> None:
        self.user, self.block, self.index = user, block, index


class _Sinker:
    """One run over a function: where every instruction goes, then the blocks rebuilt."""

    def __init__(self, function: Function) -> None:
        self.function = function
        self.idom = immediate_dominators(function)
        self.blocks = {b.label: b for b in function.blocks}
        self.preds = predecessors(function)
        self.depth = {label: self._depth(label) for label in self.idom}
        self.home: dict[int, str] = {}  # id(instr) -> the block it goes to
        self.order: dict[int, int] = {}  # id(instr) -> its place in the function
        self.copies: list[Instr] = []
        self.uses: dict[int, list[_Use]] = {}
        for block in function.blocks:
            for instr in block.instrs:
                self.home[id(instr)] = block.label
                self.order[id(instr)] = len(self.order)
                for index, arg in enumerate(instr.args):
                    where = instr.incoming[index] if instr.op is Op.PHI else block.label
                    self.uses.setdefault(id(arg), []).append(_Use(instr, where, index))
            for index, value in enumerate(terminator_values(block.term)):
                self.uses.setdefault(id(value), []).append(_Use(None, block.label, index))
        self.changed = False

    def _depth(self, label: str) -> int:
        depth = 0
        while self.idom[label] != label:
            label = self.idom[label]
            depth += 1
        return depth

    def where(self, use: _Use) -> str:
        """The block that reads: a moved user reads where it went."""
        user = use.user
        if user is None or user.op is Op.PHI:
            return use.block
        return self.home[id(user)]

    def common_dominator(self, labels: list[str]) -> str:
        found = labels[0]
        for label in labels[1:]:
            other = label
            while self.depth[found] > self.depth[other]:
                found = self.idom[found]
            while self.depth[other] > self.depth[found]:
                other = self.idom[other]
            while found != other:
                found, other = self.idom[found], self.idom[other]
        return found

    def child_towards(self, ancestor: str, label: str) -> str:
        """The child of ``ancestor`` in the dominator tree on the way down to ``label``."""
        while self.idom[label] != ancestor:
            label = self.idom[label]
        return label

    def place(self, instr: Instr) -> None:
        """Move ``instr`` to where its uses are, or copy it into the arms that use it."""
        uses = self.uses.get(id(instr), [])
        here = self.home[id(instr)]
        labels = [self.where(use) for use in uses]
        if not labels or here not in self.idom or here in labels:
            return
        if any(label not in self.idom for label in labels):
            return  # read in an unreachable block: left to simplifycfg
        target = self.common_dominator(labels)
        if target != here:
            down = self.one_path_towards(here, target)
            if down is not None:
                self.home[id(instr)] = down
                self.changed = True
            return
        groups: dict[str, list[_Use]] = {}
        for use, label in zip(uses, labels, strict=True):
            groups.setdefault(self.child_towards(here, label), []).append(use)
        if any(len(self.preds[child]) != 1 for child in groups):
            return  # a use after a join: every path through ``here`` may need it
        for group in groups.values():
            copy = replace(instr, args=list(instr.args), incoming=list(instr.incoming))
            self.copies.append(copy)
            self.home[id(copy)] = here
            self.order[id(copy)] = self.order[id(instr)]
            self.uses[id(copy)] = group
            for use in group:
                self._redirect(use, copy)
            for index, arg in enumerate(copy.args):
                self.uses[id(arg)].append(_Use(copy, here, index))
            self.place(copy)  # into its arm, or copied again further down
        for arg in instr.args:
            self.uses[id(arg)] = [u for u in self.uses[id(arg)] if u.user is not instr]
        del self.home[id(instr)]
        self.changed = True

    def one_path_towards(self, here: str, target: str) -> str | None:
        """The deepest block on the way down the dominator tree from ``here`` to ``target``
        that one path alone leads to from ``here`` (each block on the way has one
        predecessor); None if the first one is a join."""
        chain = [target]
        while self.idom[chain[-1]] != here:
            chain.append(self.idom[chain[-1]])
        found: str | None = None
        for label in reversed(chain):
            if len(self.preds[label]) != 1:
                break
            found = label
        return found

    def _redirect(self, use: _Use, copy: Instr) -> None:
        if use.user is not None:
            use.user.args[use.index] = copy
            return
        term = self.blocks[use.block].term
        if isinstance(term, Br):
            term.cond = copy
        elif isinstance(term, Exit):
            if use.index < len(term.push):
                term.push[use.index] = copy
            else:
                term.steer_value = copy

    def rebuild(self) -> None:
        """Every instruction in its block: φs first, then by the order they had (a copy
        takes its original's place), each after the operands it finds in its block."""
        placed: dict[str, list[Instr]] = {b.label: [] for b in self.function.blocks}
        for instr in [*(i for b in self.function.blocks for i in b.instrs), *self.copies]:
            if id(instr) in self.home:
                placed[self.home[id(instr)]].append(instr)
        for block in self.function.blocks:
            instrs = sorted(
                placed[block.label], key=lambda i: (i.op is not Op.PHI, self.order[id(i)])
            )
            block.instrs = _operands_first(instrs)


def _operands_first(instrs: list[Instr]) -> list[Instr]:
    """``instrs`` in their order, except that an instruction waits for its operands."""
    inside = {id(i) for i in instrs}
    done: set[int] = set()
    out: list[Instr] = []

    def emit(instr: Instr) -> None:
        if id(instr) in done:
            return
        done.add(id(instr))
        if instr.op is not Op.PHI:
            for arg in instr.args:
                if id(arg) in inside:
                    emit(arg)
        out.append(instr)

    for instr in instrs:
        emit(instr)
    return out


def sink_function(function: Function) -> bool:
    if len(function.blocks) < 2:
        return False
    sinker = _Sinker(function)
    blocks = {b.label: b for b in function.blocks}
    # Users before their operands: a value is defined in a block that dominates each use
    # (a φ's at the end of its predecessor), so the reverse of the dominator tree's
    # preorder, each block backwards, visits every user first. φs never move.
    for label, _ in reversed(dominator_tree_preorder(function)):
        for instr in reversed(blocks[label].instrs):
            if instr.op not in NOT_MOVED:
                sinker.place(instr)
    if sinker.changed:
        sinker.rebuild()
    return sinker.changed


PASS = FunctionPass(
    "sink",
    "compute pure values in the blocks that use them (a copy per exclusive arm)",
    sink_function,
)
