"""What an object file holds, as data: the machine program of each DPF of one module (or
one assembly file), encoded, with what the linker and the disassembler need beside it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from dpfc.isa import Bundle, Register, SelectorKind
from dpfc.machine import EncodedProgram, MachineProgram, program_lines
from dpfc.target import TargetProfile

FORMAT = "dpfc-object"
VERSION = 2
# What the debug notes hold (``debug_version``): 1, each instruction's source line (objects
# that do not say); 2, also the source variable each register holds, bundle by bundle.
DEBUG_VERSION = 2

SourceLocation = tuple[str, int, int]  # (file, line, column)


@dataclass(frozen=True)
class ObjectDPF:
    """One DPF of an object.

    ``symbol`` is how other objects and the linker name it: ``module.dpf`` for compiled
    code (chain targets are symbols), the ``.dpf`` name for assembly. ``location`` is where
    the DPF is declared; ``source`` maps a bundle label to the source location of each of
    its instructions (None: the compiler added it); ``variables`` maps a bundle label to the
    source variable each register holds after the bundle (for an epilog: when it runs;
    registers holding none are absent; empty for assembly and for objects of debug version
    1). ``schedule`` and ``report`` are the compiler's (None for assembly)."""

    symbol: str
    encoded: EncodedProgram
    params: int = 0
    location: SourceLocation | None = None
    source: Mapping[str, tuple[SourceLocation | None, ...]] = field(default_factory=dict)
    variables: Mapping[str, Mapping[Register, str]] = field(default_factory=dict)
    schedule: Mapping[str, Any] | None = None
    report: Mapping[str, Any] | None = None

    @property
    def program(self) -> MachineProgram:
        return self.encoded.program

    @property
    def name(self) -> str:
        return self.program.name

    @property
    def pipeline(self) -> str:
        """``ingress`` or ``egress``: the program's; its arrays are that pipeline's memory."""
        return self.program.pipeline.value

    def line_location(self, label: str, mnemonic: str) -> SourceLocation | None:
        """The source of the first instruction of bundle ``label`` that starts with
        ``mnemonic`` (``NEXT_PC``), else the DPF's own location."""
        lines = program_lines(self.program).get(label, [])
        locations = self.source.get(label, ())
        for line, location in zip(lines, locations, strict=False):
            if line.startswith(mnemonic) and location is not None:
                return location
        return self.location


@dataclass(frozen=True)
class ObjectFile:
    """The DPFs of one module for one target profile. ``path`` is where it was read from
    (for the linker's messages)."""

    module: str
    profile: TargetProfile
    dpfs: tuple[ObjectDPF, ...]
    producer: str = "dpfc compile"
    path: str = "<object>"

    @classmethod
    def of_program(cls, encoded: EncodedProgram, producer: str = "dpfc asm") -> ObjectFile:
        """A one-DPF object of a program that is not a module's (hand-written assembly):
        its module and symbol are the program's name, it binds no arrays beyond those the
        program names and its parameters are the POPs of its entry prolog."""
        program = encoded.program
        head = next(b for b in program.bundles if b.pc == program.entry and b.stage == 0)
        assert isinstance(head.bundle, Bundle)
        pops = sum(1 for s in head.bundle.selectors if s.kind is SelectorKind.POP)
        span = head.span
        location = None if span is None else (span.source.name, span.line, span.column)
        dpf = ObjectDPF(program.name, encoded, params=pops, location=location)
        return cls(program.name, program.profile, (dpf,), producer=producer)

    def dpf(self, symbol: str) -> ObjectDPF:
        for dpf in self.dpfs:
            if dpf.symbol == symbol or dpf.name == symbol:
                return dpf
        raise KeyError(symbol)


__all__ = ["DEBUG_VERSION", "FORMAT", "VERSION", "ObjectDPF", "ObjectFile", "SourceLocation"]
