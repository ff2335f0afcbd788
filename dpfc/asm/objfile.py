"""An assembled DPF as an object (``dpfc asm --emit obj``): the same ``dpfc-object``
version 2 the compiler writes, so ``dpfc link`` and the back ends take hand-written and
compiled code alike. Its module and symbol are the ``.dpf`` name; it binds no arrays (the
assembly language declares none) and has no relocations (its NEXT_PCs are addresses)."""

from __future__ import annotations

from dpfc.isa.bundle import PROLOG_STAGE, Bundle
from dpfc.isa.opcodes import SelectorKind
from dpfc.machine.encoded import EncodedProgram
from dpfc.objfile.model import ObjectDPF, ObjectFile


def prolog_pops(encoded: EncodedProgram) -> int:
    """Stack words the entry prolog POPs (what the DPF takes from the stack)."""
    program = encoded.program
    entry = next(b for b in program.bundles if b.stage == PROLOG_STAGE and b.pc == program.entry)
    assert isinstance(entry.bundle, Bundle)
    return sum(1 for s in entry.bundle.selectors if s.kind is SelectorKind.POP)


def assembled_object(encoded: EncodedProgram) -> ObjectFile:
    program = encoded.program
    dpf = ObjectDPF(program.name, encoded, params=prolog_pops(encoded))
    return ObjectFile(program.name, program.profile, (dpf,), producer="dpfc asm")


__all__ = ["assembled_object", "prolog_pops"]
