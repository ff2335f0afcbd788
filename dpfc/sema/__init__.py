"""Semantic analysis of the DPF language: loading (:mod:`.loader`), module tables
(:mod:`.resolve`), constants (:mod:`.consteval`), declarations (:mod:`.items`), bodies
(:mod:`.statements` over :mod:`.calls`, :mod:`.expressions` and :mod:`.scopes`, with the
per-path rules of :mod:`.paths`), the program-level rules (:mod:`.check`) and the warnings
(:mod:`.lints`).

``check_program(program, profile) -> CheckedProgram`` checks a loaded program for the
profile :mod:`dpfc.driver` resolved; it raises :class:`~dpfc.diagnostics.DiagnosticError`
with every error found (DPF50xx-DPF52xx, named in :mod:`dpfc.catalog.codes`), or returns
the program with the warnings of its main module (DPF54xx, DPF5218).
"""

from dpfc.sema.check import CheckedProgram, check_file, check_program
from dpfc.sema.loader import LoadedModule, Program, load_program
from dpfc.sema.resolve import ConstInfo, DpfInfo, MemoryInfo
from dpfc.sema.types import SemType, is_signed

__all__ = [
    "CheckedProgram",
    "ConstInfo",
    "DpfInfo",
    "LoadedModule",
    "MemoryInfo",
    "Program",
    "SemType",
    "check_file",
    "check_program",
    "is_signed",
    "load_program",
]
