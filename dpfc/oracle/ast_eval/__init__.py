"""The AST evaluator: runs a checked DPF directly from its syntax tree (the semantic oracle).

Contract: ``evaluate(program, dpf_name, inputs)`` runs one DPF of a checked program on
:class:`~dpfc.ir.interp.Inputs` (the stack top first, memory per array, metadata values, a
rand stream) and returns the :class:`~dpfc.ir.interp.Outcome` the IR interpreter
(:mod:`dpfc.ir.interp`) returns for the lowered DPF, so that the differential tests compare
the two with ``==``.

It walks the tree statement by statement and shares nothing with the lowering: no SSA, no
unrolled copies, no IR op semantics. What it takes from elsewhere is the exact word
arithmetic of the hardware (:func:`dpfc.isa.semantics.hash_word`, ``to_signed``) and, when
the checker's program is given, the modules it loaded (name resolution only). The
semantics are docs/language.md's "Semantics summary":

* words are ints in ``[0, 2**32)``, bools 0/1; arithmetic wraps; ``*`` wraps;
* ``<<`` / ``>>`` shift by the right operand & 31, ``>>`` is logical;
* comparisons and ``min``/``max`` are signed when an operand is ``i32``, unsigned otherwise
  (a well-typed program never mixes the two; a literal adapts);
* ``&&`` / ``||`` evaluate both operands (they are bool AND/OR, not branches); ``==`` /
  ``!=`` also compare bools; ``x as bool`` is ``x != 0``; a ``bool`` parameter is bit 0 of
  its stack word;
* parameters pop ``stack[0]``, ``stack[1]``, ...; ``peek()`` reads ``stack[nparams]``;
  a missing entry reads 0;
* an index at or beyond an array's declared size reads 0 and writes nothing; fetch ops
  return the old word, and ``fetch_max`` / ``fetch_min`` compare unsigned;
* the output stack is the pushed values (first pushed on top) followed by
  ``stack[nparams:]``; the default steering is ``pass``; ``return`` ends the DPF.

The work is split by phase: :mod:`.values` (words, operator arithmetic, the machine
state and memory bounds), :mod:`.program` (modules and names across imports),
:mod:`.frame` (the statement and expression walk) and :mod:`.run` (the entry point: the
inputs as a state, the parameters bound, the body run, the outcome built).
"""

from dpfc.oracle.ast_eval.program import Program, program_from
from dpfc.oracle.ast_eval.run import evaluate
from dpfc.oracle.ast_eval.values import WORD_MASK, EvalError

__all__ = ["WORD_MASK", "EvalError", "Program", "evaluate", "program_from"]
