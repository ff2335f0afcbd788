"""The state the IR verifier's checks share while they check one function.

Contract: :class:`FunctionContext` holds the function under check and its module, the
facts taken from the profile (metadata names, steering actions, hash lanes; defaults
without one), and what the checks build up as they go: the printed name of every value
(``%N`` in print order), the :class:`Site` of every instruction, the first block of each
label, and the diagnostics found so far. Its helpers name instructions and values the way
the printer writes them, so every message points at text the user can find. The codes
the verifier reports are ``codes.IR_*`` of :mod:`dpfc.catalog.codes` (docs/ir.md lists them).

Not responsible for: any check itself (:mod:`.verifier` runs them, in the order its
docstring states, from :mod:`.structure`, :mod:`.instructions` and :mod:`.paths`).
"""

from __future__ import annotations

from dataclasses import dataclass

from dpfc.diagnostics import Diagnostic, Note, Severity, Span
from dpfc.ir.core import Block, Function, Instr, Module, Op, Ty
from dpfc.target import (
    DEFAULT_METADATA,
    DEFAULT_STEERING,
    SteeringAction,
    TargetProfile,
)

DEFAULT_HASH_LANES = 4


def note(message: str, span: Span | None) -> tuple[Note, ...]:
    """One note, as the ``notes`` of a diagnostic."""
    return (Note(message, span),)


def ty_text(ty: Ty | None) -> str:
    """A type as messages name it (``w32``, ``i1``, ``no value``)."""
    return "no value" if ty is None else ty.value


@dataclass(frozen=True)
class Site:
    """Where an instruction sits: its block, its index there, its line in print order."""

    block: str
    index: int
    line: int


class FunctionContext:
    """One function under check: its inputs, what the checks learnt so far, the findings."""

    def __init__(
        self, module: Module, function: Function, profile: TargetProfile | None, machine: bool
    ) -> None:
        self.module = module
        self.function = function
        self.machine = machine
        self.metadata = {m.name for m in (profile.metadata if profile else DEFAULT_METADATA)}
        steering = profile.steering if profile else DEFAULT_STEERING
        self.steering: dict[str, SteeringAction] = {s.name: s for s in steering}
        self.hash_lanes = len(profile.hash_functions) if profile else DEFAULT_HASH_LANES
        self.out: list[Diagnostic] = []
        self.names: dict[int, str] = {}
        self.sites: dict[int, Site] = {}
        self.blocks: dict[str, Block] = {}

    def error(
        self,
        code: str,
        message: str,
        span: Span | None,
        notes: tuple[Note, ...] = (),
        severity: Severity = Severity.ERROR,
        hint: str | None = None,
    ) -> None:
        """Record a finding; without a span the message names the function instead."""
        prefix = f"`@{self.function.name}`: " if span is None else ""
        self.out.append(Diagnostic(code, prefix + message, span, severity, notes, hint))

    def show(self, instr: Instr) -> str:
        """``%3 = add`` / ``store @a`` as the printer would start the line."""
        name = self.names.get(id(instr), "%?")
        text = instr.op.value if instr.symbol is None else f"{instr.op.value} @{instr.symbol}"
        if instr.op is Op.META:
            text = f"meta {instr.symbol}"
        return text if instr.ty is None else f"{name} = {text}"

    def where(self, instr: Instr) -> str:
        """The instruction and its block, for the subject of a message."""
        site = self.sites.get(id(instr))
        block = f" in block `{site.block}`" if site else ""
        return f"`{self.show(instr)}`{block}"

    def ref(self, value: Instr) -> str:
        """A value as an operand: its printed name (``%3``)."""
        return f"`{self.names.get(id(value), '%?')}`"
