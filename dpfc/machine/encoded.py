"""A machine program checked and encoded once: its in-packet options and in-switch words.

Contract: :func:`encode_program` checks every bundle for its stage
(:func:`~dpfc.isa.placement.check_stage_bundle`) and encodes the program's two forms, once
per compile or assembly; the resource report, the object writer, the packet writer and the
linker all reuse these bytes:

* in-packet programs: the code packed into SwitchVM code options (:attr:`packed`) and the
  whole options area with an empty stack (:attr:`options`); packets with a stack reuse
  :attr:`packed` (:meth:`EncodedProgram.header_options`). A program whose code does not
  fit raises :class:`~dpfc.encoding.EncodingError`.
* in-switch bundles (all of an in-switch program; those an in-packet program places with
  ``@SLOT``): their code-memory words (:attr:`words`); a bundle that breaks a rule of its
  stage raises ``EncodingError``;
* in-packet programs without in-switch bundles: also the words of their *switch form*
  (in-packet PCs turned into local slots,
  :meth:`~dpfc.machine.program.MachineProgram.as_switch`, :attr:`switch_form`), so a
  linker can install such a DPF when another DPF chains to it; when that form breaks a
  rule, :attr:`switch_problem` says why.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from dpfc.encoding import (
    EncodedOptions,
    EncodingError,
    PackedCode,
    encode_options,
    encode_slot,
    pack_checked,
    stage_kind,
)
from dpfc.isa import PC, check_stage_bundle, stage_name
from dpfc.machine.program import MachineProgram, Placement

Words = dict[tuple[int, int], bytes]  # (stage, local slot) -> code-memory word


@dataclass(frozen=True)
class EncodedProgram:
    program: MachineProgram
    packed: PackedCode | None  # in-packet code as packed (None: an in-switch program)
    options: bytes  # the SwitchVM options with an empty stack (b"" for in-switch programs)
    words: Words  # the in-switch bundles' words
    switch_form: Words | None = None  # an in-packet program's words, installed in-switch
    switch_problem: str | None = None  # why an in-packet program has no switch form

    def installable(self) -> Words | None:
        """The words that install the whole DPF in-switch, if it can be."""
        if self.program.placement is Placement.SWITCH:
            return self.words
        return self.switch_form

    def header_options(
        self, stack: tuple[int, ...] = (), *, gas: int | None = None, dpf_ptr: PC | None = None
    ) -> EncodedOptions:
        """The options of a packet that runs this in-packet DPF on ``stack`` (``dpf_ptr``
        instead of the entry, e.g. none); raises EncodingError when the stack does not fit."""
        assert self.packed is not None, f"{self.program.name} has no in-packet code"
        header = self.program.header(stack, gas)
        if dpf_ptr is not None:
            header = replace(header, dpf_ptr=dpf_ptr)
        return encode_options(header, self.program.profile, packed=self.packed)

    def word(self, stage: int, slot: int) -> bytes:
        return self.words[(stage, slot)]


def switch_words(program: MachineProgram) -> Words:
    """The code-memory word of every in-switch bundle of ``program``; raises EncodingError
    naming the first bundle that breaks a rule of its stage."""
    profile = program.profile
    words: Words = {}
    for placed in program.ordered():
        if placed.pc.in_packet:
            continue
        violations = check_stage_bundle(placed.stage, placed.bundle, profile)
        if violations:
            first = violations[0]
            raise EncodingError(
                f"{stage_name(placed.stage)} bundle `{placed.label}`: {first.message}", first.code
            )
        words[(placed.stage, placed.pc.index)] = encode_slot(
            stage_kind(placed.stage), placed.bundle, profile
        )
    return words


def encode_program(program: MachineProgram) -> EncodedProgram:
    """Check and encode ``program`` (see the module docstring)."""
    if program.placement is Placement.SWITCH:
        return EncodedProgram(program, None, b"", switch_words(program))
    packed = pack_checked(program.image(), program.profile)
    options = encode_options(program.header(), program.profile, packed=packed).data
    words = switch_words(program)
    if words:
        problem = "its code is partly in the packet and partly in switch code memory"
        return EncodedProgram(program, packed, options, words, None, problem)
    try:
        form = switch_words(program.as_switch())
    except EncodingError as exc:
        return EncodedProgram(program, packed, options, words, None, exc.message)
    return EncodedProgram(program, packed, options, words, form)


__all__ = ["EncodedProgram", "Words", "encode_program", "switch_words"]
