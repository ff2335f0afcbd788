"""Semantic oracles: the direct evaluator of checked DPF syntax trees (:mod:`.ast_eval`).

``evaluate(program, dpf_name, inputs)`` runs one DPF of a checked program from its syntax
tree and returns the :class:`~dpfc.ir.interp.Outcome` the IR interpreter returns for the
lowered DPF; the differential tests compare the two.
"""

from dpfc.oracle.ast_eval import WORD_MASK, EvalError, Program, evaluate, program_from

__all__ = ["WORD_MASK", "EvalError", "Program", "evaluate", "program_from"]
