"""The ``.dpfasm`` assembler and disassembler (see docs/assembly.md)."""

from dpfc.asm.assembler import assemble, assemble_text
from dpfc.asm.printer import (
    disassemble_header,
    format_program,
    program_from_image,
    program_from_slots,
)
from dpfc.asm.program import AssembledProgram, PlacedBundle, Placement

__all__ = [
    "AssembledProgram",
    "PlacedBundle",
    "Placement",
    "assemble",
    "assemble_text",
    "disassemble_header",
    "format_program",
    "program_from_image",
    "program_from_slots",
]
