"""The scheduling problem: optimised IR -> a solver-independent :class:`Problem`, and what is
known of it without a solver.

Contract: :func:`build_problem` turns a verified, optimised IR function (``DEFAULT_PIPELINE``
has run) into the :class:`Problem` of one DPF on one profile — a tree of paths whose nodes
own operations and end in a :class:`Branch` or an :class:`Exit`, the arrays and their pins
— or raises :class:`~dpfc.diagnostics.DiagnosticError` (DPF6001-6008) for what SwitchVM
cannot run. :func:`compute_bounds` gives every operation's earliest EU and every node's
earliest end (a sound relaxation of the machine rules: its maximum is a lower bound on the
EU count), :func:`compute_domains` which values can be in which register class and which
operations each copy can run at one EU count. The Z3 encoding, the greedy scheduler, the
checker and the presentation read only these.

Modules: :mod:`.tree` (the Problem and its parts), :mod:`.build` (the walk over the CFG and
the epilog, pin and prolog checks), :mod:`.state` (the operations and nodes built so far),
:mod:`.instructions` (one IR instruction -> operations), :mod:`.conditions` (symbolic
conditions and decision trees), :mod:`.boolwords` (conditions as ALU words),
:mod:`.materialise` (optional ALU operations computing constants), :mod:`.bounds`,
:mod:`.domains`.
"""

from dpfc.schedule.problem.bounds import Bounds, compute_bounds, critical_chain
from dpfc.schedule.problem.build import build_problem
from dpfc.schedule.problem.domains import Domains, compute_domains, exit_values
from dpfc.schedule.problem.tree import (
    INPUT_KINDS,
    ArrayInfo,
    Branch,
    Exit,
    Kind,
    Operation,
    Problem,
    TreeNode,
)

__all__ = [
    "INPUT_KINDS",
    "ArrayInfo",
    "Bounds",
    "Branch",
    "Domains",
    "Exit",
    "Kind",
    "Operation",
    "Problem",
    "TreeNode",
    "build_problem",
    "compute_bounds",
    "compute_domains",
    "critical_chain",
    "exit_values",
]
