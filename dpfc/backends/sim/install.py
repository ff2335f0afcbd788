"""Installing, replacing and removing in-switch DPFs as ordered code-memory writes.

An in-switch DPF is a set of code-memory slots, one per bundle, reached from its prolog
slot (the DPF's address, which packets and default-DPF entries name). The order of the
writes is what makes a change atomic for packets (paper §3.6.2, "replacing the prolog only
after all other stages of a DPF have been stored in the switch"):

* **install**: epilog, EU(n-1) ... EU0 bundles first, the prolog last;
* **replace in place**: the new DPF's non-prolog bundles go to free slots, then one write
  swaps the prolog slot, then the old bundles are removed; a packet sees either the old
  prolog (and reaches only old bundles) or the new one;
* **remove**: the prolog first, then the rest.

Each step is a :class:`CodeWrite`; :func:`apply` performs them one control-plane call at a
time, so a test can interleave packets between any two writes. Slots are chosen first-fit
among the slots free on every targeted pipe, and the program's in-switch PCs are relocated
to them (PCs to code outside the program, such as a chained DPF's prolog, are kept).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace

from dpfc.isa.bundle import (
    EPILOG_STAGE,
    PC,
    PROLOG_STAGE,
    Bundle,
    Control,
    EpilogBundle,
    StageBundle,
)
from dpfc.isa.opcodes import CtrlOp
from dpfc.machine.program import MachineProgram

from .control import ControlPlane, ControlPlaneError


@dataclass(frozen=True)
class CodeWrite:
    stage: int
    slot: int
    bundle: StageBundle | None  # None removes the slot


@dataclass(frozen=True)
class InstalledDPF:
    """Where an in-switch DPF lives: its entry (prolog slot) and every slot it occupies."""

    name: str
    entry: PC
    slots: tuple[tuple[int, int], ...]  # (stage, slot), prolog included


def _stage_order(num_eus: int) -> list[int]:
    """Install order of the non-prolog stages: epilog, then the EUs from the last."""
    return [EPILOG_STAGE, *range(num_eus, 0, -1)]


def plan_install(
    control: ControlPlane,
    program: MachineProgram,
    *,
    prolog_slot: int | None = None,
    relocate: bool = True,
    pipes: int | Iterable[int] | None = None,
    taken: Iterable[tuple[int, int]] = (),
) -> tuple[list[CodeWrite], InstalledDPF]:
    """The writes that install ``program``'s in-switch bundles, the prolog last.

    With ``relocate`` (the default) every bundle goes to the first free slot of its stage
    (the prolog to ``prolog_slot`` when given); otherwise to the slot the assembler gave it.
    ``taken`` lists slots to treat as occupied (used when planning a replacement).
    """
    targets = control._targets(pipes)
    slots = program.switch_slots()
    if PROLOG_STAGE not in slots or not slots[PROLOG_STAGE]:
        raise ControlPlaneError("DPF4021", f"{program.name} has no in-switch prolog to install")
    if program.entry.in_packet:
        raise ControlPlaneError(
            "DPF4021", f"{program.name}'s entry {program.entry} is not in switch memory"
        )
    busy = {(s, i) for pipe in targets for s, table in pipe.code.items() for i in table}
    busy |= set(taken)
    capacity = control.profile.code_slots_per_stage
    mapping: dict[int, dict[int, int]] = {}
    for stage, table in sorted(slots.items()):
        stage_map = mapping.setdefault(stage, {})
        for old in sorted(table):
            if stage == PROLOG_STAGE and old == program.entry.index and prolog_slot is not None:
                stage_map[old] = prolog_slot
                continue
            if not relocate:
                stage_map[old] = old
                continue
            new = next((i for i in range(capacity) if (stage, i) not in busy), None)
            if new is None:
                raise ControlPlaneError(
                    "DPF4022", f"no free code-memory slot in stage {stage} for {program.name}"
                )
            busy.add((stage, new))
            stage_map[old] = new
    num_eus = control.profile.num_eus

    def moved(pc: PC, stage: int) -> PC:
        if pc.in_packet:
            return pc
        return PC(False, mapping.get(stage, {}).get(pc.index, pc.index))

    writes: list[CodeWrite] = []
    prolog_writes: list[CodeWrite] = []
    for stage in [*_stage_order(num_eus), PROLOG_STAGE]:
        for old, bundle in sorted(slots.get(stage, {}).items()):
            new_bundle = _relocated(bundle, stage, num_eus, moved)
            write = CodeWrite(stage, mapping[stage][old], new_bundle)
            (prolog_writes if stage == PROLOG_STAGE else writes).append(write)
    # the entry prolog goes very last; other prologs (if any) just before it
    entry_slot = mapping[PROLOG_STAGE][program.entry.index]
    prolog_writes.sort(key=lambda w: w.slot == entry_slot)
    writes += prolog_writes
    used = tuple((w.stage, w.slot) for w in writes)
    return writes, InstalledDPF(program.name, PC(False, entry_slot), used)


def _relocated(
    bundle: StageBundle, stage: int, num_eus: int, move: Callable[[PC, int], PC]
) -> StageBundle:
    """``bundle`` with its in-switch PCs moved (``move(pc, stage the pc points into)``)."""
    if isinstance(bundle, EpilogBundle):
        if isinstance(bundle.next_pc, PC):
            return replace(bundle, next_pc=move(bundle.next_pc, PROLOG_STAGE))
        return bundle
    assert isinstance(bundle, Bundle)
    control = bundle.control
    target = EPILOG_STAGE if control.op is CtrlOp.HALT or stage == num_eus else stage + 1
    new_control = Control(
        control.op,
        move(control.taken, target),
        control.x,
        control.y,
        None if control.not_taken is None else move(control.not_taken, target),
    )
    return replace(bundle, control=new_control)


def plan_replace(
    control: ControlPlane,
    old: InstalledDPF,
    program: MachineProgram,
    *,
    pipes: int | Iterable[int] | None = None,
) -> tuple[list[CodeWrite], InstalledDPF]:
    """Replace ``old`` by ``program`` in place: same entry slot, no packet sees a mix."""
    writes, new = plan_install(
        control, program, prolog_slot=old.entry.index, pipes=pipes, taken=old.slots
    )
    keep = set(new.slots)
    removals = [
        CodeWrite(stage, slot, None) for stage, slot in old.slots if (stage, slot) not in keep
    ]
    return writes + removals, new


def plan_remove(installed: InstalledDPF) -> list[CodeWrite]:
    """Removal: the prolog first (no new packet enters), then the other bundles."""
    prolog = [(s, i) for s, i in installed.slots if s == PROLOG_STAGE]
    rest = [(s, i) for s, i in installed.slots if s != PROLOG_STAGE]
    return [CodeWrite(s, i, None) for s, i in prolog[::-1] + rest]


def apply(
    control: ControlPlane,
    writes: Iterable[CodeWrite],
    *,
    owners: Iterable[int] | None = None,
    pipes: int | Iterable[int] | None = None,
) -> None:
    owner_list = None if owners is None else list(owners)
    for write in writes:
        if write.bundle is None:
            control.remove_code(write.stage, write.slot, pipes=pipes)
        else:
            control.install_code(
                write.stage, write.slot, write.bundle, owners=owner_list, pipes=pipes
            )


def install_program(
    control: ControlPlane,
    program: MachineProgram,
    *,
    prolog_slot: int | None = None,
    relocate: bool = True,
    owners: Iterable[int] | None = None,
    pipes: int | Iterable[int] | None = None,
) -> InstalledDPF:
    """Plan and apply an install; returns where the DPF went (its entry is ``.entry``)."""
    writes, installed = plan_install(
        control, program, prolog_slot=prolog_slot, relocate=relocate, pipes=pipes
    )
    # validate every bundle before the first write, so a bad program changes nothing
    for write in writes:
        if write.bundle is not None:
            control._check_bundle(write.stage, write.slot, write.bundle)
    apply(control, writes, owners=owners, pipes=pipes)
    return installed
