"""What an object file holds, as data: the machine program of each DPF of one module (or
one assembly file), encoded, with what the linker and the disassembler need beside it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from dpfc.machine.encoded import EncodedProgram
from dpfc.machine.program import MachineProgram
from dpfc.target.profile import TargetProfile

FORMAT = "dpfc-object"
VERSION = 2

SourceLocation = tuple[str, int, int]  # (file, line, column)


@dataclass(frozen=True)
class ObjectDPF:
    """One DPF of an object.

    ``symbol`` is how other objects and the linker name it: ``module.dpf`` for compiled
    code (chain targets are symbols), the ``.dpf`` name for assembly. ``source`` maps a
    bundle label to the source location of each of its instructions (None: the compiler
    added it). ``schedule`` and ``report`` are the compiler's (None for assembly)."""

    symbol: str
    encoded: EncodedProgram
    params: int = 0
    pipeline: str = "ingress"
    source: Mapping[str, tuple[SourceLocation | None, ...]] = field(default_factory=dict)
    schedule: Mapping[str, Any] | None = None
    report: Mapping[str, Any] | None = None

    @property
    def program(self) -> MachineProgram:
        return self.encoded.program

    @property
    def name(self) -> str:
        return self.program.name


@dataclass(frozen=True)
class ObjectFile:
    """The DPFs of one module for one target profile. ``path`` is where it was read from
    (for the linker's messages)."""

    module: str
    profile: TargetProfile
    dpfs: tuple[ObjectDPF, ...]
    producer: str = "dpfc compile"
    path: str = "<object>"

    def dpf(self, symbol: str) -> ObjectDPF:
        for dpf in self.dpfs:
            if dpf.symbol == symbol or dpf.name == symbol:
                return dpf
        raise KeyError(symbol)


__all__ = ["FORMAT", "VERSION", "ObjectDPF", "ObjectFile", "SourceLocation"]
