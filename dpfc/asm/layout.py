"""Bundle heads, labels and addresses (pass 1 of the assembler).

Contract:

* A head (``eu0 NAME @slot:``) opens a :class:`~dpfc.asm.state.Group`; a bad stage is
  DPF0109 (its label is kept, without an address, so that references to it add no second
  error), a label defined twice DPF0122, a head written without its ``:`` DPF0001.
* Unlabeled bundles are named ``<stage>_<n>`` once every written label is known, so that a
  generated name never collides with a written one.
* Addresses: an ``@slot`` is checked (DPF1002 out of range, DPF0123 used twice) and kept;
  the other bundles are numbered in file order per stage, in the packet (``.placement
  packet``) or in the free switch slots. A stage beyond the target's EUs is DPF0109 and its
  bundles get no address (so they are never built).
"""

from __future__ import annotations

from dpfc.asm.state import AssemblerState, Group, parse_stage
from dpfc.asm.syntax import Head, Instruction
from dpfc.catalog import codes
from dpfc.diagnostics import Note, Span
from dpfc.isa import EPILOG_STAGE, PC, PROLOG_STAGE, stage_name
from dpfc.machine import Placement


class BundleLayout:
    """Opens bundles from their heads, names the unlabeled ones and gives each its address."""

    def __init__(self, state: AssemblerState) -> None:
        self.state = state

    def head_without_colon(self, instr: Instruction) -> Instruction | Head:
        """``eu0 count`` (no colon) is a bundle head with a typo, not an unknown instruction."""
        ops = instr.operands
        if len(ops) > 1 or (ops and ops[0].kind != "name"):
            return instr
        label = ops[0] if ops else None
        self.state.error(
            codes.ASM_SYNTAX,
            f"bundle head `{instr.span.text()}` needs a `:` at its end",
            instr.span,
            hint=f"write `{instr.span.text()}:`",
        )
        return Head(
            instr.mnemonic,
            instr.mnemonic_span,
            label.text if label else None,
            label.span if label else None,
            None,
            None,
            instr.span,
        )

    def head(self, head: Head) -> Group:
        """Open the bundle a head starts; a bad head's bundle is read but never built."""
        stage = parse_stage(head.stage)
        if stage is None:
            self.state.error(
                codes.ASM_BAD_STAGE,
                f"`{head.stage}` is not a stage; a bundle head is `prolog`, `eu<k>` or `epilog`, then a label and `:`",
                head.stage_span,
            )
            # Keep the label (without an address) so that branches to it are not reported too.
            group = Group(head, EPILOG_STAGE, head.label or "")
            if head.label is not None:
                self.state.labels.setdefault(head.label, group)
            return group
        # An unlabeled bundle gets a generated name once every user label is known
        # (_name_unlabeled), so that a generated name never collides with a written one.
        group = Group(head, stage, head.label or "")
        if head.label is not None and head.label in self.state.labels:
            first = self.state.labels[head.label].head
            self.state.error(
                codes.ASM_LABEL_TWICE,
                f"label `{head.label}` defined twice",
                head.label_span,
                Note("first defined here", first.label_span),
            )
            return group
        if head.label is not None:
            self.state.labels[head.label] = group
        self.state.groups.append(group)
        return group

    def name_unlabeled(self) -> None:
        counts: dict[int, int] = {}
        for group in self.state.groups:
            if group.label:
                continue
            while True:
                index = counts.get(group.stage, 0)
                counts[group.stage] = index + 1
                name = f"{stage_name(group.stage)}_{index}"
                if name not in self.state.labels:
                    break
            group.label = name
            self.state.labels[name] = group

    def assign_addresses(self) -> None:
        used: dict[int, dict[int, Span]] = {}
        for group in self.state.groups:
            if (
                group.stage not in (PROLOG_STAGE, EPILOG_STAGE)
                and group.stage > self.state.profile.num_eus
            ):
                self.state.error(
                    codes.ASM_BAD_STAGE,
                    f"`{group.head.stage}` does not exist: {self.state.profile.name} has {self.state.profile.num_eus} EUs "
                    f"(eu0..eu{self.state.profile.num_eus - 1})",
                    group.head.stage_span,
                )
                continue
            if group.head.slot is None:
                continue
            slot = group.head.slot
            span = group.head.slot_span
            if not 0 <= slot < self.state.profile.code_slots_per_stage:
                self.state.error(
                    codes.ISA_SLOT_OUT_OF_RANGE,
                    f"code-memory slot {slot} out of range: {self.state.profile.name} has "
                    f"{self.state.profile.code_slots_per_stage} slots per stage",
                    span,
                )
                continue
            stage_used = used.setdefault(group.stage, {})
            if slot in stage_used:
                self.state.error(
                    codes.ASM_SLOT_TWICE,
                    f"slot {slot} of {stage_name(group.stage)} used twice",
                    span,
                    Note("first used here", stage_used[slot]),
                )
                continue
            if span is not None:
                stage_used[slot] = span
            group.pc = PC(False, slot)
        packet_index: dict[int, int] = {}
        next_slot: dict[int, int] = {}
        for group in self.state.groups:
            if group.pc is not None or group.head.slot is not None:
                continue
            if (
                group.stage not in (PROLOG_STAGE, EPILOG_STAGE)
                and group.stage > self.state.profile.num_eus
            ):
                continue
            if self.state.placement is Placement.PACKET:
                index = packet_index.get(group.stage, 0)
                packet_index[group.stage] = index + 1
                group.pc = PC(True, index)
            else:
                slot = next_slot.get(group.stage, 0)
                while slot in used.get(group.stage, {}):
                    slot += 1
                next_slot[group.stage] = slot + 1
                group.pc = PC(False, slot)
