"""The control-flow graph of a function as a networkx ``DiGraph`` (nodes: block labels).

Only this module of the passes imports networkx. Edges are unique: ``br c, X, X`` is one
edge, and a phi has one entry per predecessor label.
"""

from __future__ import annotations

from typing import Any

import networkx as nx

from dpfc.ir.core import Function


def graph(function: Function) -> Any:
    """The CFG: one node per block label, one edge per distinct (block, successor) pair."""
    cfg = nx.DiGraph()
    for block in function.blocks:
        cfg.add_node(block.label)
    for block in function.blocks:
        for successor in block.successors():
            cfg.add_edge(block.label, successor)
    return cfg


def predecessors(function: Function) -> dict[str, list[str]]:
    """Each block's distinct predecessor labels, in block order."""
    preds: dict[str, list[str]] = {block.label: [] for block in function.blocks}
    for block in function.blocks:
        for successor in dict.fromkeys(block.successors()):
            preds.setdefault(successor, []).append(block.label)
    return preds


def reachable(function: Function) -> set[str]:
    """Labels reachable from the entry block (blocks[0])."""
    if not function.blocks:
        return set()
    entry = function.blocks[0].label
    return {entry} | set(nx.descendants(graph(function), entry))


def immediate_dominators(function: Function) -> dict[str, str]:
    """label -> its immediate dominator over the reachable blocks (the entry maps to itself)."""
    entry = function.blocks[0].label
    idom: dict[str, str] = dict(nx.immediate_dominators(graph(function), entry))
    idom[entry] = entry
    return idom


def dominator_tree_preorder(function: Function) -> list[tuple[str, str | None]]:
    """Reachable blocks in dominator-tree preorder, each with its immediate dominator."""
    idom = immediate_dominators(function)
    children: dict[str, list[str]] = {}
    order = [b.label for b in function.blocks]
    for label in order:
        if label in idom and idom[label] != label:
            children.setdefault(idom[label], []).append(label)
    entry = function.blocks[0].label
    out: list[tuple[str, str | None]] = []
    stack: list[tuple[str, str | None]] = [(entry, None)]
    while stack:
        label, parent = stack.pop()
        out.append((label, parent))
        for child in reversed(children.get(label, [])):
            stack.append((child, label))
    return out


def find_cycle(function: Function) -> list[str] | None:
    """The labels of one cycle of the CFG, or None when it is acyclic."""
    try:
        edges = nx.find_cycle(graph(function))
    except nx.NetworkXNoCycle:
        return None
    return [str(edge[0]) for edge in edges]
