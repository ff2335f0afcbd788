"""Unrolling: the IR has no loops left to unroll; this pass checks that it is so.

DPF loops are ``for i in A..B`` with constant bounds, and the lowering (``dpfc.lower``)
unrolls them while it builds the IR: it lowers the body once per value of ``i``, with ``i``
bound to a CONST, so the SSA IR is acyclic by construction (every path through a DPF visits
each EU at most once, the hardware's own rule). Unrolling at the AST level is the lowering's
job because only there is ``i`` a compile-time constant of the source; after lowering, the
loop structure is gone.

This pass is therefore the checked half of the contract: it finds any cycle in the CFG
(networkx ``find_cycle``) and reports it; it never changes the function. Example::

    entry:                                  (unchanged)
      %0 = param 0
      exit push(%0)

    entry:                                  error[DPF5390]: control flow of `@f` has a
      jmp entry                             cycle: entry -> entry

Requires: nothing. Ensures: the function is unchanged and its CFG is acyclic, or a
DiagnosticError (DPF5390) is raised.
"""

from __future__ import annotations

from dpfc.catalog import codes
from dpfc.diagnostics import Diagnostic, DiagnosticError
from dpfc.ir import Function, find_cycle
from dpfc.passes.base import FunctionPass


def check_acyclic(function: Function) -> bool:
    cycle = find_cycle(function)
    if cycle is not None:
        path = " -> ".join([*cycle, cycle[0]])
        raise DiagnosticError(
            [
                Diagnostic(
                    codes.IR_CYCLE,
                    f"control flow of `@{function.name}` has a cycle: {path}",
                    function.span,
                    hint="loops are unrolled by the lowering; the IR must be acyclic",
                )
            ]
        )
    return False


PASS = FunctionPass(
    "unroll", "check that loops were unrolled (the CFG is acyclic); no rewrite", check_acyclic
)
