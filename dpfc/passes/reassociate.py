"""Re-association: tree-height reduction of chains of one associative, commutative op.

SwitchVM runs one ALU operation per lane per EU, so the EUs a DPF needs follow the longest
chain of dependent operations. ``a + b + c + d`` lowers to ``((a + b) + c) + d``: three
dependent ADDs, three EUs. Re-associated as ``(a + b) + (c + d)`` it is two. Example::

    entry:                                  entry:
      %0 = param 0 ... %3 = param 3           %0 = param 0 ... %3 = param 3
      %4 = add %0, %1                         %4 = add %0, %1
      %5 = add %4, %2                         %5 = add %4, %2      (dead: dce drops it)
      %6 = add %5, %3                         %7 = add %0, %1
      exit push(%6)                           %8 = add %2, %3
                                              %6 = add %7, %8
                                              exit push(%6)

The ops: ADD (modulo 2**32: wrapping is associative, so results are unchanged), AND, OR,
XOR, MIN and MAX (the IR's MIN/MAX are unsigned: ``i32`` ones are lowered with the sign bit
flipped around them, which this pass leaves alone). A *tree* is a root of one of these ops
and, transitively, its operands of the same op that are in the same block and have no
other use (so nothing is computed twice). Its leaves are rebuilt Huffman-style: the two
leaves available earliest (by an estimate of their depth: inputs and constants 0, ALU ops
and hashes 1 more than their operands, memory ops 2 more) are combined first, so constants
meet constants (``constfold`` folds them) and late values join last. A tree is rebuilt only
when that lowers its height; the root keeps its identity (and its uses), the new
operations are inserted just before it, and the old interior ones become dead.

Requires: a well-formed function. Ensures: the same behaviour on every input (each rebuilt
tree computes the same op over the same multiset of leaves); no tree gets taller.
"""

from __future__ import annotations

import heapq

from dpfc.ir import INPUT_OPS, MEMORY_OPS, Function, Instr, Op, Ty
from dpfc.passes.base import FunctionPass
from dpfc.passes.rewrite import use_counts

ASSOCIATIVE = frozenset({Op.ADD, Op.AND, Op.OR, Op.XOR, Op.MIN, Op.MAX})


def _depths(function: Function) -> dict[int, int]:
    """id(value) -> estimated EU depth (operands before users: blocks are in order)."""
    depth: dict[int, int] = {}
    for block in function.blocks:
        for instr in block.instrs:
            if instr.op in INPUT_OPS or instr.op is Op.PHI:
                depth[id(instr)] = 0 if instr.op is not Op.PHI else _phi_depth(instr, depth)
                continue
            below = max((depth.get(id(a), 0) for a in instr.args), default=0)
            depth[id(instr)] = below + (2 if instr.op in MEMORY_OPS else 1)
    return depth


def _phi_depth(phi: Instr, depth: dict[int, int]) -> int:
    return max((depth.get(id(a), 0) for a in phi.args), default=0)


def _leaves(root: Instr, block_ids: set[int], uses: dict[int, int]) -> list[Instr]:
    """The leaves of the tree rooted at ``root`` (left to right)."""
    out: list[Instr] = []
    for arg in root.args:
        interior = (
            arg.op is root.op and arg.ty is Ty.WORD and id(arg) in block_ids and uses[id(arg)] == 1
        )
        out.extend(_leaves(arg, block_ids, uses) if interior else [arg])
    return out


def _height(root: Instr, block_ids: set[int], uses: dict[int, int], depth: dict[int, int]) -> int:
    """The root's depth as built now, over the leaves' depths."""
    heights = []
    for arg in root.args:
        interior = (
            arg.op is root.op and arg.ty is Ty.WORD and id(arg) in block_ids and uses[id(arg)] == 1
        )
        heights.append(_height(arg, block_ids, uses, depth) if interior else depth[id(arg)])
    return max(heights) + 1


def run(function: Function) -> bool:
    changed = False
    uses = use_counts(function)
    depth = _depths(function)
    for block in function.blocks:
        block_ids = {id(i) for i in block.instrs}
        interior_of_a_tree = {
            id(arg)
            for instr in block.instrs
            if instr.op in ASSOCIATIVE
            for arg in instr.args
            if arg.op is instr.op and id(arg) in block_ids and uses[id(arg)] == 1
        }
        rebuilt: list[Instr] = []
        for instr in block.instrs:
            if (
                instr.op in ASSOCIATIVE
                and instr.ty is Ty.WORD
                and id(instr) not in interior_of_a_tree
                and len(leaves := _leaves(instr, block_ids, uses)) >= 3
            ):
                old = _height(instr, block_ids, uses, depth)
                new, pair, top = _balanced(instr, leaves, depth)
                if top < old:
                    instr.args = pair
                    rebuilt.extend(new)
                    changed = True
            rebuilt.append(instr)
        block.instrs = rebuilt
    return changed


def _balanced(
    root: Instr, leaves: list[Instr], depth: dict[int, int]
) -> tuple[list[Instr], list[Instr], int]:
    """New interior instructions that combine ``leaves`` earliest-first, the pair that
    becomes the root's operands, and the root's depth over them."""
    # Constants first among equals, so that they pair up and fold; then source order.
    queue = [
        (depth[id(leaf)], leaf.op is not Op.CONST, index, leaf) for index, leaf in enumerate(leaves)
    ]
    heapq.heapify(queue)
    new: list[Instr] = []
    order = len(leaves)
    while len(queue) > 2:
        d1, c1, _, x = heapq.heappop(queue)
        d2, c2, _, y = heapq.heappop(queue)
        combined = Instr(root.op, [x, y], Ty.WORD, span=root.span)
        new.append(combined)
        depth[id(combined)] = max(d1, d2) + 1
        heapq.heappush(queue, (max(d1, d2) + 1, c1 or c2, order, combined))
        order += 1
    (d1, _, _, x), (d2, _, _, y) = sorted(queue, key=lambda entry: entry[:3])
    return new, [x, y], max(d1, d2) + 1


PASS = FunctionPass(
    "reassociate",
    "rebalance chains of add/and/or/xor/min/max into trees of least height",
    run,
)
