"""Control-flow graphs: the networkx adapter (the only module that imports networkx).

:class:`Digraph` is a typed graph of block labels with the algorithms the IR verifier and
the passes use (descendants, cycles, dominators, topological order); the functions below
build the CFG of a well-formed function. Edges are unique: ``br c, X, X`` is one edge, and
a phi has one entry per predecessor label.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import networkx as nx

from dpfc.ir.core import Function


class Digraph:
    """A directed graph of labels (networkx ``DiGraph`` underneath, typed at the edge)."""

    def __init__(self, nodes: Iterable[str] = ()) -> None:
        self._graph: Any = nx.DiGraph()
        self._graph.add_nodes_from(nodes)

    def add_node(self, node: str) -> None:
        self._graph.add_node(node)

    def add_edge(self, source: str, target: str) -> None:
        self._graph.add_edge(source, target)

    def predecessors(self, node: str) -> list[str]:
        return list(self._graph.predecessors(node))

    def descendants(self, node: str) -> set[str]:
        return set(nx.descendants(self._graph, node))

    def find_cycle(self) -> list[str] | None:
        """The nodes of one cycle, or None when the graph is acyclic."""
        try:
            edges = nx.find_cycle(self._graph)
        except nx.NetworkXNoCycle:
            return None
        return [str(edge[0]) for edge in edges]

    def immediate_dominators(self, entry: str) -> dict[str, str]:
        """node -> its immediate dominator, over the nodes reachable from ``entry`` (which
        maps to itself)."""
        return dict(nx.immediate_dominators(self._graph, entry))

    def topological_order(self) -> list[str]:
        return list(nx.topological_sort(self._graph))


def graph(function: Function) -> Digraph:
    """The CFG: one node per block label, one edge per distinct (block, successor) pair."""
    cfg = Digraph(block.label for block in function.blocks)
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
    return {entry} | graph(function).descendants(entry)


def immediate_dominators(function: Function) -> dict[str, str]:
    """label -> its immediate dominator over the reachable blocks (the entry maps to itself)."""
    entry = function.blocks[0].label
    idom = graph(function).immediate_dominators(entry)
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
    return graph(function).find_cycle()
