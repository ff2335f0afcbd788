"""The IR verifier: checks every invariant of :mod:`dpfc.ir.core` (run between passes in tests).

Contract: ``verify_module(module, profile=None, machine=False)`` returns the diagnostics of
every violated invariant (an empty list for valid IR) and never raises; ``verify_or_raise``
raises :class:`~dpfc.diagnostics.DiagnosticError` with the errors. Unreachable blocks are a
warning (DPF5323); everything else is an error. The checks, in order (docs/ir.md lists them
with their codes):

* module: array declarations are sane, DPF names unique;
* CFG: the function has blocks, labels are unique, every successor exists, the entry block
  has no predecessors, the CFG is acyclic (networkx ``DiGraph``; cycles are DPF5390, the
  code the ``unroll`` pass uses for the same fault);
* SSA: each :class:`~dpfc.ir.core.Instr` appears once; every operand is defined in the
  function, on an earlier line (what the text reader requires) and in a block that
  dominates the use (networkx, through :mod:`dpfc.ir.cfg`); a phi argument's definition dominates
  the end of the corresponding predecessor; phis open their block and name exactly its
  predecessors;
* ops: operand counts, operand and result types, immediates, array and metadata names
  (table-driven from core's op sets); ``machine=True`` also rejects MUL (strength reduction
  must have removed it);
* terminators: ``br`` on a bool; pushed and steering values are words; the steering action
  exists (``profile.steering``, else the default list) and has a value exactly when it
  takes one;
* the RMT rule: at most one memory op per array on any entry-to-exit path (two ops conflict
  when one's block reaches the other's, or they share a block); both are named.

Structural faults (missing successors, duplicate labels, cycles) stop the checks of a
function after the CFG stage, since dominance means nothing on such a graph.

The checks live in one module per family, over the shared state of :mod:`.context`:
:mod:`.structure` (CFG, instruction sites), :mod:`.instructions` (ops, terminators) and
:mod:`.paths` (SSA dominance, phis, the RMT rule). :mod:`.verifier`, the entry point, holds
the module-level checks and runs a function's in the order of the diagnostics.
"""

from dpfc.ir.verify.verifier import verify_function, verify_module, verify_or_raise

__all__ = ["verify_function", "verify_module", "verify_or_raise"]
