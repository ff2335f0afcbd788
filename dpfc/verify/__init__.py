"""Verification of placed machine code: what a DPF's code may do, and whether it is its program.

Contract: one symbolic semantics of SwitchVM machine code as SMT bit-vector formulas
(:mod:`.semantics`: every ALU, memory, compare and branch kind, the FA-ops and the lanes'
CRCs; :mod:`.machine`: a placed DPF's paths, each with its condition and decision), kept apart from the concrete interpreter, the simulator and the JIT so that a bug in
one cannot hide in another. Terms are built and decided through :mod:`.bitvec`, the
package's adapter of Z3's bit-vector theory, under deterministic resource limits.
:mod:`.policy` reads an operator's policy and :mod:`.check` decides it on every path of a
DPF (``dpfc verify``, docs/verify.md).
"""

from __future__ import annotations

from dpfc.verify.bitvec import Answer, Term, Valuation, Words
from dpfc.verify.check import Report, Violation, verify_program
from dpfc.verify.image import chain_loops, image_programs
from dpfc.verify.policy import Policy, read_policy
from dpfc.verify.semantics import alu, branch_taken, compare_vector, hash_word, memory
from dpfc.verify.validate import Validation, draw_order, validate, validate_unlinked

__all__ = [
    "Answer",
    "Policy",
    "Report",
    "Term",
    "Validation",
    "Valuation",
    "Violation",
    "Words",
    "alu",
    "branch_taken",
    "chain_loops",
    "compare_vector",
    "draw_order",
    "hash_word",
    "image_programs",
    "memory",
    "read_policy",
    "validate",
    "validate_unlinked",
    "verify_program",
]
