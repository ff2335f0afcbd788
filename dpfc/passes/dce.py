"""Dead code elimination: drop instructions whose value nobody reads.

Example::

    entry:                                  entry:
      %0 = param 0                            %0 = param 0
      %1 = load @vals, %0                     %1 = const 1
      %2 = const 1                            %2 = fetch_add @hits, %0, %1
      %3 = fetch_add @hits, %0, %2            %3 = rand
      %4 = add %1, %2                         exit push(%0)
      %5 = rand
      exit push(%0)

An instruction is dead when no instruction or terminator reads it and its op is not in
:data:`~dpfc.ir.core.SIDE_EFFECT_OPS` (STORE, the fetch-and-op atomics, RAND: each RAND
draws from the stream, so removing one would shift later draws). An unused LOAD is removable:
it changes no state. Removing an instruction may make its operands dead in turn; a worklist
runs to the fixpoint. Blocks are untouched (``simplifycfg`` removes unreachable ones).

Requires: a well-formed function. Ensures: every remaining pure instruction has a use;
every side-effecting instruction is kept, in its order.
"""

from __future__ import annotations

from dpfc.ir import SIDE_EFFECT_OPS, Function, Instr
from dpfc.passes.base import FunctionPass
from dpfc.passes.rewrite import remove_instrs, use_counts


def removable(instr: Instr) -> bool:
    return instr.op not in SIDE_EFFECT_OPS and instr.ty is not None


def eliminate_function(function: Function) -> bool:
    counts = use_counts(function)
    worklist = [i for i in function.instrs() if removable(i) and counts.get(id(i), 0) == 0]
    dead: set[int] = set()
    while worklist:
        instr = worklist.pop()
        if id(instr) in dead:
            continue
        dead.add(id(instr))
        for arg in instr.args:
            counts[id(arg)] -= 1
            if counts[id(arg)] == 0 and removable(arg):
                worklist.append(arg)
    remove_instrs(function, dead)
    return bool(dead)


PASS = FunctionPass(
    "dce", "remove unused instructions (never stores, atomics or rand)", eliminate_function
)
