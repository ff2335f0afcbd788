"""The ``.dpfasm`` assembler (see docs/assembly.md); it produces
:class:`~dpfc.machine.program.MachineProgram` objects, printed back by :mod:`dpfc.machine.printer`.
A file holds one DPF or several (:mod:`dpfc.asm.module`)."""

from dpfc.asm.module import AssembledModule, assemble, assemble_module, assemble_text

__all__ = ["AssembledModule", "assemble", "assemble_module", "assemble_text"]
