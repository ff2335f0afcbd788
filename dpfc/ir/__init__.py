"""The SSA IR (:mod:`.core`), its text form (:mod:`.printer`, :mod:`.parser`), the verifier
(:mod:`.verify`) and the reference interpreter (:mod:`.interp`); docs/ir.md is the
reference."""

from dpfc.ir.core import (
    ArrayDecl,
    Block,
    Br,
    Exit,
    Function,
    Instr,
    Jump,
    Module,
    Op,
    Terminator,
    Ty,
)
from dpfc.ir.interp import Inputs, InterpError, Outcome, run_function
from dpfc.ir.parser import parse_ir
from dpfc.ir.printer import format_function, format_module
from dpfc.ir.verify import verify_function, verify_module, verify_or_raise

__all__ = [
    "ArrayDecl",
    "Block",
    "Br",
    "Exit",
    "Function",
    "Inputs",
    "Instr",
    "InterpError",
    "Jump",
    "Module",
    "Op",
    "Outcome",
    "Terminator",
    "Ty",
    "format_function",
    "format_module",
    "parse_ir",
    "run_function",
    "verify_function",
    "verify_module",
    "verify_or_raise",
]
