"""Assemble ``.dpfasm`` text into an :class:`MachineProgram`, checking every ISA rule.

Two passes: the first reads directives and bundle heads (stages, labels, addresses); the
second builds each bundle from its instructions and resolves labels. Machine-code rules are
checked by :mod:`dpfc.isa.check` (the same checker the decoder uses); rules about the
*text* (two ALU ops in one lane, two branches in one EU, unknown labels, operand forms) are
checked by the assembler. All problems are collected and reported together, each with its
span.

The steps are objects over one shared state (:mod:`.state`), one concern per module:
:mod:`.directives`, :mod:`.layout` (heads, labels, addresses), :mod:`.operands`,
:mod:`.units` (the text rules of each functional unit), :mod:`.bundles` (pass 2). This
module composes them and runs them in order and checks the whole program: its entry prolog (DPF0130), the
image's rules (:func:`~dpfc.isa.placement.check_image`) and that the in-packet code fits in a
header.
"""

from __future__ import annotations

from dpfc.asm.bundles import BundleBuilder
from dpfc.asm.directives import DirectiveReader
from dpfc.asm.layout import BundleLayout
from dpfc.asm.operands import OperandReader
from dpfc.asm.state import AssemblerState, Group, parse_stage, suggest, with_article
from dpfc.asm.syntax import AsmLine, Directive, Head, Instruction
from dpfc.asm.units import UnitReader
from dpfc.catalog import codes
from dpfc.diagnostics import Diagnostic, Note, SourceFile
from dpfc.encoding import EncodingError, encode_options, encode_stage_bundle
from dpfc.isa import PROLOG_STAGE, check_image, stage_name
from dpfc.machine import MachineProgram, PlacedBundle
from dpfc.target import TargetProfile


class Assembler:
    """Assembles one DPF's lines: :meth:`run_lines`, then read :attr:`diagnostics`.

    Its steps are objects over one :class:`~dpfc.asm.state.AssemblerState`: the directive
    reader, the bundle layout (pass 1) and the bundle builder (pass 2, with the unit and
    operand readers it holds)."""

    def __init__(self, source: SourceFile, profile: TargetProfile | None) -> None:
        self.state = AssemblerState(source, profile)
        self.directives = DirectiveReader(self.state)
        self.layout = BundleLayout(self.state)
        self.bundles = BundleBuilder(self.state, UnitReader(self.state, OperandReader(self.state)))

    @property
    def diagnostics(self) -> list[Diagnostic]:
        """The problems found so far, in the order they were found."""
        return self.state.diagnostics

    # -- pass 1 -------------------------------------------------------------------------
    def run_lines(
        self, lines: list[AsmLine], syntax_errors: list[Diagnostic]
    ) -> MachineProgram | None:
        """Assemble parsed ``lines`` (one DPF; ``syntax_errors``: those of its lines, already
        reported); the problems found are added to :attr:`diagnostics`, unsorted."""
        error_offsets = sorted(d.span.start for d in syntax_errors if d.span is not None)
        current: Group | None = None
        directives: list[Directive] = []
        for line in lines:
            if isinstance(line, Instruction) and parse_stage(line.mnemonic) is not None:
                line = self.layout.head_without_colon(line)
            if current is not None and error_offsets:
                current.has_syntax_error |= any(
                    current.head.span.start < o < line.span.start for o in error_offsets
                )
            if isinstance(line, Directive):
                if self.state.groups:
                    self.state.error(
                        codes.ASM_DIRECTIVE_TOO_LATE,
                        f"directive `.{line.name}` after the first bundle; directives come first",
                        line.span,
                    )
                    continue
                directives.append(line)
            elif isinstance(line, Head):
                current = self.layout.head(line)
            elif current is None:
                self.state.error(
                    codes.ASM_OUTSIDE_BUNDLE,
                    "instruction outside a bundle: start one with `prolog NAME:`, `eu0 NAME:` or `epilog NAME:`",
                    line.span,
                )
            else:
                current.instructions.append(line)
        if current is not None:
            current.has_syntax_error |= any(o > current.head.span.start for o in error_offsets)
        for directive in directives:
            self.directives.read(directive)
        self.layout.name_unlabeled()
        self.layout.assign_addresses()
        placed = [self.bundles.build(group) for group in self.state.groups if group.pc is not None]
        return self._finish([p for p in placed if p is not None])

    # -- whole program ------------------------------------------------------------------
    def _finish(self, placed: list[PlacedBundle]) -> MachineProgram | None:
        prologs = [g for g in self.state.groups if g.stage == PROLOG_STAGE]
        if self.state.entry_name is not None:
            name, span = self.state.entry_name
            group = self.state.labels.get(name)
            if group is None:
                prolog_names = [g.label for g in prologs]
                self.state.error(
                    codes.ASM_NO_PROLOG,
                    f"`.entry {name}` names no bundle; it must name a prolog bundle"
                    + suggest(name, prolog_names),
                    span,
                )
                return None
            if group.stage != PROLOG_STAGE:
                self.state.error(
                    codes.ASM_NO_PROLOG,
                    f"`.entry {name}` names {with_article(stage_name(group.stage))} bundle; "
                    "it must name a prolog bundle",
                    span,
                    Note(f"`{name}` defined here", group.head.label_span or group.head.span),
                )
                return None
            entry_group = group
        elif prologs:
            entry_group = prologs[0]
        else:
            self.state.error(
                codes.ASM_NO_PROLOG,
                "no prolog: a DPF starts at a prolog bundle (`prolog NAME:`)",
                self.state.groups[0].head.span
                if self.state.groups
                else self.state.source.span(0, 0),
            )
            return None
        if self.state.diagnostics or entry_group.pc is None:
            return None
        program = MachineProgram(
            self.state.name,
            self.state.profile,
            self.state.placement,
            self.state.app_id,
            entry_group.pc,
            tuple(placed),
            arrays=tuple(self.state.arrays),
            relocations=tuple(self.state.relocations),
            pipeline=self.state.pipeline,
        )
        by_key = {(p.stage, p.pc.index): p for p in placed if p.pc.in_packet}
        for stage, index, violation in check_image(program.image(), self.state.profile):
            hint = None
            if violation.code == codes.ISA_TOO_MANY_PACKET_BUNDLES:
                index = self.state.profile.packet_bundles_per_stage
                hint = (
                    "place bundles of that stage in switch code memory "
                    f"(`{stage_name(stage)} NAME @slot:`)"
                )
            found = by_key.get((stage, index))
            where = found.span if found else None
            if violation.where[:1] in (("control",), ("next_pc",)):
                operands = self.state.operand_spans.get((stage, index), {})
                where = operands.get(str(violation.where[-1]), where)
            self.state.error(violation.code, violation.message, where, hint=hint)
        if self.state.diagnostics:
            return None
        image = program.image()
        if not image.is_empty():
            try:
                encode_options(program.header(), self.state.profile)
            except EncodingError as exc:
                if exc.code == codes.ENCODE_BRANCH_TWO_IMMEDIATES and exc.bundle in by_key:
                    self.state.error(exc.code, exc.message, by_key[exc.bundle].span)
                    return None
                in_packet = [p for p in placed if p.pc.in_packet]
                sizes = [
                    len(encode_stage_bundle(p.stage, p.bundle, self.state.profile))
                    for p in in_packet
                ]
                largest = in_packet[sizes.index(max(sizes))]
                self.state.error(
                    exc.code,
                    f"in-packet code does not fit: {exc.message}",
                    entry_group.head.span,
                    Note(
                        f"the {len(in_packet)} in-packet bundles take {sum(sizes)} bytes; the largest, "
                        f"`{largest.label}` ({stage_name(largest.stage)}), takes {max(sizes)}",
                        largest.span,
                    ),
                    hint="move bundles in-switch (`.placement switch` or `@slot` on a head), or shorten the code",
                )
                return None
        return program
