"""The ``.dpfasm`` assembler (see docs/assembly.md); it produces
:class:`~dpfc.machine.program.MachineProgram` objects, printed back by :mod:`dpfc.machine.printer`."""

from dpfc.asm.assembler import assemble, assemble_text

__all__ = ["assemble", "assemble_text"]
