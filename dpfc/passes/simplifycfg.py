"""CFG simplification: fold constant branches, drop unreachable blocks, merge chains.

Example::

    entry:                                  entry:
      %0 = param 0                            %0 = param 0
      %1 = const 1                            %1 = const 1
      %2 = const i1 1                         %2 = const i1 1
      br %2, then, else                       %3 = add %0, %1
    then:                                     exit push(%3)
      jmp join
    else:
      jmp join
    join:
      %3 = phi w32 [%0, then], [%1, else]
      %4 = add %3, %1
      exit push(%4)

(``br %2`` reads a constant true: the ``else`` edge goes, ``else`` becomes unreachable, the
``phi`` is left with one entry so it is that value, and ``then`` and ``join`` merge into
``entry``.) Rewrites, repeated to a fixpoint:

* ``br c, X, Y`` with a CONST ``c`` -> ``jmp`` to the taken side; ``br c, X, X`` -> ``jmp X``;
* blocks unreachable from the entry are deleted (networkx reachability);
* ``A: ... jmp B`` where A is B's only predecessor: B's instructions and terminator move
  into A (B's phis have one entry: they become that value);
* an empty block ``B: jmp C`` is skipped: each predecessor P of B jumps to C directly, and
  C's phis get an entry for P with the value they had for B (when P already reaches C, only
  if every phi of C agrees on the values for P and B);
* after every change, phi entries whose label is no longer a predecessor are dropped, and a
  phi left with one entry is replaced by that value.

Requires: a well-formed, acyclic function. Ensures: no constant branch, no unreachable block,
no block with a single predecessor that ends in ``jmp``, every phi has one entry per
predecessor; the entry block stays first; same behaviour.
"""

from __future__ import annotations

from dpfc.ir import Block, Br, Function, Instr, Jump, predecessors, reachable
from dpfc.passes.base import FunctionPass
from dpfc.passes.rewrite import const_value, leading_phis, phi_value, remove_instrs, replace_uses


def simplify_function(function: Function) -> bool:
    if not function.blocks:
        return False
    changed = False
    while True:
        progress = _fold_branches(function)
        progress |= _remove_unreachable(function)
        progress |= _prune_phis(function)
        progress |= _merge_chains(function)
        progress |= _skip_forwarders(function)
        if not progress:
            return changed
        changed = True


def _fold_branches(function: Function) -> bool:
    changed = False
    for block in function.blocks:
        term = block.term
        if not isinstance(term, Br):
            continue
        value = const_value(term.cond)
        if term.then == term.orelse:
            block.term = Jump(term.then, term.span)
        elif value is not None:
            block.term = Jump(term.then if value else term.orelse, term.span)
        else:
            continue
        changed = True
    return changed


def _remove_unreachable(function: Function) -> bool:
    live = reachable(function)
    if len(live) == len(function.blocks):
        return False
    function.blocks = [b for b in function.blocks if b.label in live]
    return True


def _prune_phis(function: Function) -> bool:
    """Drop phi entries from non-predecessors; a phi with one entry left becomes its value."""
    preds = predecessors(function)
    copies: dict[int, Instr] = {}
    changed = False
    for block in function.blocks[1:]:
        live = set(preds[block.label])
        for phi in leading_phis(block.instrs):
            keep = [(a, lbl) for a, lbl in zip(phi.args, phi.incoming, strict=True) if lbl in live]
            if len(keep) != len(phi.args):
                phi.args = [a for a, _ in keep]
                phi.incoming = [lbl for _, lbl in keep]
                changed = True
            if len(phi.args) == 1:
                copies[id(phi)] = phi.args[0]
    replace_uses(function, copies)
    remove_instrs(function, set(copies))
    return changed or bool(copies)


def _merge_chains(function: Function) -> bool:
    changed = False
    entry = function.blocks[0].label
    preds = predecessors(function)
    by_label = {b.label: b for b in function.blocks}
    for block in list(function.blocks):
        if block.label not in by_label:
            continue  # merged away in this sweep
        while isinstance(block.term, Jump):
            target = block.term.target
            if target in (entry, block.label) or preds[target] != [block.label]:
                break
            merge_into(function, block, by_label.pop(target), preds)
            changed = True
    return changed


def merge_into(
    function: Function, block: Block, target: Block, preds: dict[str, list[str]]
) -> None:
    """Append ``target`` (whose only predecessor is ``block``, ending in ``jmp target``) to
    ``block``; ``preds`` is updated for the successors."""
    phis = leading_phis(target.instrs)
    replace_uses(function, {id(phi): phi_value(phi, block.label) for phi in phis})
    block.instrs.extend(target.instrs[len(phis) :])
    block.term = target.term
    function.blocks.remove(target)
    for successor in dict.fromkeys(target.successors()):
        preds[successor] = [block.label if p == target.label else p for p in preds[successor]]
        for phi in leading_phis(function.block(successor).instrs):
            phi.incoming = [block.label if lbl == target.label else lbl for lbl in phi.incoming]


def _skip_forwarders(function: Function) -> bool:
    changed = False
    entry = function.blocks[0].label
    for block in function.blocks:
        term = block.term
        if block.label == entry or block.instrs or not isinstance(term, Jump):
            continue
        if term.target == block.label:
            continue
        preds = predecessors(function)
        target = function.block(term.target)
        phis = leading_phis(target.instrs)
        for pred_label in preds[block.label]:
            if pred_label in preds[target.label]:
                if any(phi_value(p, pred_label) is not phi_value(p, block.label) for p in phis):
                    continue
            else:
                for phi in phis:
                    phi.args.append(phi_value(phi, block.label))
                    phi.incoming.append(pred_label)
            _retarget(function.block(pred_label), block.label, target.label)
            changed = True
    return changed


def _retarget(block: Block, old: str, new: str) -> None:
    term = block.term
    if isinstance(term, Jump) and term.target == old:
        term.target = new
    elif isinstance(term, Br):
        term.then = new if term.then == old else term.then
        term.orelse = new if term.orelse == old else term.orelse


PASS = FunctionPass(
    "simplifycfg",
    "fold constant branches, drop unreachable blocks, merge chains",
    simplify_function,
)
