"""Machine code as data: placed bundles of a DPF (:mod:`.program`), its one canonical
assembly printer (:mod:`.printer`) and its encoding, checked once (:mod:`.encoded`).

The neutral package between the producers of machine code (assembler, code generator,
object reader) and its consumers (encoders, object writer, linker, back ends)."""

from dpfc.machine.encoded import (
    EncodedProgram,
    Words,
    encode_program,
    switch_words,
)
from dpfc.machine.printer import (
    bundle_lines,
    disassemble_header,
    format_program,
    label_namer,
    program_from_image,
    program_from_slots,
    program_lines,
)
from dpfc.machine.program import (
    PLACEHOLDER,
    ArrayBinding,
    MachineProgram,
    Pipeline,
    PlacedBundle,
    Placement,
    Relocation,
    move_pcs,
    pc_fields,
    successor_stage,
)

__all__ = [
    "PLACEHOLDER",
    "ArrayBinding",
    "EncodedProgram",
    "MachineProgram",
    "Pipeline",
    "PlacedBundle",
    "Placement",
    "Relocation",
    "Words",
    "bundle_lines",
    "disassemble_header",
    "encode_program",
    "format_program",
    "label_namer",
    "move_pcs",
    "pc_fields",
    "program_from_image",
    "program_from_slots",
    "program_lines",
    "successor_stage",
    "switch_words",
]
