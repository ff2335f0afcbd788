"""The state an :class:`~dpfc.asm.assembler.Assembler` shares across its steps, and the
small text helpers its messages use.

Contract:

* :class:`AssemblerState` holds what one DPF's assembly has read so far: its directives'
  values (name, target, placement, pipeline, app id, entry, arrays, relocations), its
  bundles (:class:`Group`, in file order) and labels, and the diagnostics found, in the
  order they were found. :meth:`AssemblerState.error` is the one way to report a problem.
* :class:`BundleDraft` is the mutable state of one bundle while its instructions are read,
  each part kept with the span of the instruction that wrote it, so that a violation found
  later points at that instruction.
* The steps are objects holding this state, one concern each: :mod:`.directives`,
  :mod:`.layout` (heads, labels, addresses), :mod:`.operands`, :mod:`.units` (one reader per
  functional unit, holding the operand reader), :mod:`.bundles` (building and checking a
  bundle, holding the unit reader); :mod:`.assembler` composes them and runs them in order.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field

from dpfc.asm.syntax import Head, Instruction
from dpfc.diagnostics import Diagnostic, Note, SourceFile, Span
from dpfc.isa import (
    EPILOG_STAGE,
    PC,
    PROLOG_STAGE,
    AluOp,
    Control,
    MemOp,
    Register,
    Selector,
    Steering,
)
from dpfc.machine import ArrayBinding, Pipeline, Placement, Relocation
from dpfc.target import DEFAULT_PROFILE, TargetProfile

REGISTER = re.compile(r"^([ABab])(\d+)$")
WORD_MIN = -(1 << 31)
WORD_MAX = (1 << 32) - 1
DIRECTIVES = ("module", "dpf", "target", "placement", "pipeline", "app", "entry", "array")
MAPPINGS = ("direct", "segment")


@dataclass
class Group:
    """A bundle as its head and instructions were read (pass 1), before it is built."""

    head: Head
    stage: int
    label: str
    pc: PC | None = None
    instructions: list[Instruction] = field(default_factory=list)
    # A line of this bundle failed to parse (already reported): don't report what is missing.
    has_syntax_error: bool = False


@dataclass
class BundleDraft:
    """Mutable state while one bundle's instructions are read."""

    lanes: int
    selectors: dict[Register, tuple[Selector, Span]] = field(default_factory=dict)
    alu: dict[int, tuple[AluOp, Span]] = field(default_factory=dict)
    mem: dict[int, tuple[MemOp, Span]] = field(default_factory=dict)
    control: tuple[Control, Span] | None = None
    control_operands: dict[str, Span] = field(default_factory=dict)  # x, y, taken, not_taken
    push: list[tuple[Register, Span]] = field(default_factory=list)
    push_spans: list[Span] = field(default_factory=list)
    steering: tuple[Steering, Span] | None = None
    next_pc: tuple[PC | Register, Span] | None = None
    hdr_mod: Span | None = None
    immediate_spans: dict[int, Span] = field(default_factory=dict)


class AssemblerState:
    """What the assembly of one DPF has read and found so far (see the module docstring)."""

    def __init__(self, source: SourceFile, profile: TargetProfile | None) -> None:
        self.source = source
        self.cli_profile = profile
        self.profile: TargetProfile = profile or DEFAULT_PROFILE
        self.diagnostics: list[Diagnostic] = []
        self.name = "dpf"
        self.placement = Placement.PACKET
        self.pipeline = Pipeline.INGRESS
        self.app_id = 0
        self.entry_name: tuple[str, Span] | None = None
        self.arrays: list[ArrayBinding] = []
        self.relocations: list[Relocation] = []
        self.groups: list[Group] = []
        self.labels: dict[str, Group] = {}
        # (stage, in-packet index) -> where-key -> span of the PC operands of that bundle,
        # so that whole-image violations can point at the operand they are about.
        self.operand_spans: dict[tuple[int, int], dict[str, Span]] = {}

    # -- reporting ---------------------------------------------------------------------
    def error(
        self, code: str, message: str, span: Span | None, *notes: Note, hint: str | None = None
    ) -> None:
        self.diagnostics.append(Diagnostic(code, message, span, notes=tuple(notes), hint=hint))


def parse_stage(text: str) -> int | None:
    """The stage a head or ``.array`` names (``prolog``, ``eu<k>``, ``epilog``), else None."""
    lowered = text.lower()
    if lowered == "prolog":
        return PROLOG_STAGE
    if lowered == "epilog":
        return EPILOG_STAGE
    match = re.fullmatch(r"eu(\d+)", lowered)
    if match and int(match.group(1)) < 30:
        return int(match.group(1)) + 1
    return None


def hex_text(value: int) -> str:
    """A bound as messages show it: small numbers in decimal, others in hex."""
    return f"{value:#x}" if abs(value) > 9 else str(value)


def with_article(word: str) -> str:
    """``word`` with its indefinite article (an eu0, an epilog, a prolog)."""
    return f"{'an' if word[:1] in 'aeiou' else 'a'} {word}"


def suggest(word: str, choices: list[str] | tuple[str, ...], prefix: str = "") -> str:
    """``; did you mean `X`?`` for the choice closest to ``word``, or nothing."""
    close = difflib.get_close_matches(word, choices, n=1)
    return f"; did you mean `{prefix}{close[0]}`?" if close else ""
