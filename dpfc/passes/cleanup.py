"""Cleanup: strength, constfold, copyprop, cse, dce, sink and simplifycfg, repeated until none
changes.

Each of these passes can expose work for another (a folded branch removes an edge, so a
phi becomes a copy, so a constant folds, so a block empties and can be bypassed), so the
end of the pipeline runs them as a group to a fixpoint instead of guessing an order.
``sink`` is in the group because removing or rewriting a use (dce, copyprop, a folded
branch) can leave a value read only in one arm. Strength reduction is in the group because a folded branch can make a MUL's operand
constant (a phi whose arms now agree), and no MUL by a constant may reach the scheduler.
Example::

    entry:                                  entry:
      %0 = param 0                            %0 = param 0
      %1 = const 0                            exit push(%0)
      %2 = eq %1, %1
      br %2, a, b
    a:
      %3 = add %0, %1
      jmp b
    b:
      %4 = phi w32 [%3, a], [%0, entry]
      exit push(%4)

Requires: a well-formed, acyclic function. Ensures: none of the seven passes finds anything
left to do, no MUL has a constant operand (bounded by :data:`MAX_ROUNDS`, far more than any
DPF needs); same behaviour.
"""

from __future__ import annotations

import dpfc.passes.constfold as constfold
import dpfc.passes.copyprop as copyprop
import dpfc.passes.cse as cse
import dpfc.passes.dce as dce
import dpfc.passes.simplifycfg as simplifycfg
import dpfc.passes.sink as sink
import dpfc.passes.strength as strength
from dpfc.ir import Function
from dpfc.passes.base import FunctionPass

MAX_ROUNDS = 16
GROUP = (
    strength.PASS,
    constfold.PASS,
    copyprop.PASS,
    cse.PASS,
    dce.PASS,
    sink.PASS,
    simplifycfg.PASS,
)


def cleanup_function(function: Function) -> bool:
    changed = False
    for _ in range(MAX_ROUNDS):
        progress = False
        for member in GROUP:
            progress |= member.run_function(function)
        if not progress:
            break
        changed = True
    return changed


PASS = FunctionPass(
    "cleanup",
    "strength, constfold, copyprop, cse, dce, sink, simplifycfg repeated to a fixpoint",
    cleanup_function,
)
