"""Semantic analysis of the DPF language: loading (:mod:`.loader`), module tables
(:mod:`.resolve`), constants (:mod:`.consteval`), declarations (:mod:`.items`), bodies
(:mod:`.statements` over :mod:`.calls`, :mod:`.expressions` and :mod:`.scopes`, with the
per-path rules of :mod:`.paths`) and the program-level rules (:mod:`.check`).

``check_program(program, profile) -> CheckedProgram`` checks a loaded program for the
profile :mod:`dpfc.driver` resolved; it raises :class:`~dpfc.diagnostics.DiagnosticError`
with every error found (DPF50xx-DPF52xx).
"""

from dpfc.sema.check import CheckedProgram, check_file, check_program
from dpfc.sema.codes import ALL_CODES, Code
from dpfc.sema.loader import LoadedModule, Program, load_program
from dpfc.sema.types import SemType

__all__ = [
    "ALL_CODES",
    "CheckedProgram",
    "Code",
    "LoadedModule",
    "Program",
    "SemType",
    "check_file",
    "check_program",
    "load_program",
]
