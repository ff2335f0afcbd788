"""The source of a scenario's code, for its traces: :class:`CodeSources`.

The simulator runs bytes and prints a trace of machine code; what that code was compiled
from is known here, where the scenario linked it. :class:`CodeSources` is the simulator's
:class:`~dpfc.backends.sim.TraceSources` for code whose objects and images are known: given
a traced run it finds, stage by stage, the DPF and the bundle the stage ran and returns the
source line of each instruction and the variable each register holds (the object's debug
notes, docs/objects.md), for :func:`~dpfc.backends.sim.render_trace`.

How a stage is found:

* **In-switch code** (``@switch:N``): the image of the run's switch names, for every code
  slot, the DPF instances whose bundle it is (identical bundles are shared) and their
  labels. The candidates are those placed on the run's pipe, in its pipeline, of its
  tenant (or of no tenant: shared code); a pass runs one DPF, so each stage keeps the
  candidates of the stages before it when it can (a slot shared by two DPFs is told apart
  by the prolog that led to it). The first candidate, in image order, is the answer.
* **In-packet code** (``@packet:N``): the code the packet carried, compared with the
  in-packet code of every DPF known (each object's, and each image's in-packet DPFs with
  their chain targets filled in); the matching DPF names the bundle by its (stage, index).
* **The object of a DPF**: the one the scenario linked it from; for a DPF of an image file
  the scenario installs (``.dpfimg``), the object file the image names, read from the
  current directory or the scenario's. It is used only if it holds the code the image
  installed, bundle by bundle under the same labels (but for the PCs linking relocates):
  an object compiled again since, from changed source, names no lines of the old code.

Source text is read from the files the objects name (relative to the current directory, as
``dpfc disasm --source`` does); a file that cannot be read leaves the text empty. A stage
whose code is none of the above (a pcap frame's own code, a slot nothing here installed)
has no source: the trace shows it as machine code alone.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from dpfc.backends.sim import PacketTrace, SourceLine, StageSource
from dpfc.diagnostics import DiagnosticError
from dpfc.encoding import DecodeError, decode_options, decode_slot, stage_kind
from dpfc.isa import (
    PC,
    CodeImage,
    EpilogBundle,
    InstructionSlot,
    StageBundle,
    instruction_slots,
)
from dpfc.link import Image, LinkedDPF
from dpfc.objfile import ObjectDPF, SourceLines, read_object
from dpfc.target import TargetProfile


@dataclass(frozen=True)
class _Placed:
    """One DPF instance whose bundle ``label`` is in a code slot of a switch's image."""

    dpf: LinkedDPF
    label: str


class CodeSources:
    """:class:`~dpfc.backends.sim.TraceSources` of linked images and the objects they were
    linked from (see the module docstring). ``images``: switch -> its image; ``linked``:
    switch -> ``tenant:symbol`` -> the object DPF; ``objects``: every other object DPF
    whose in-packet code packets may carry; ``directory``: where image files' objects are
    also looked for."""

    def __init__(
        self,
        profile: TargetProfile,
        images: Mapping[str, Image],
        linked: Mapping[str, Mapping[str, ObjectDPF]],
        objects: Iterable[ObjectDPF] = (),
        directory: Path | None = None,
    ) -> None:
        self.profile = profile
        self.images = dict(images)
        self.linked = {switch: dict(dpfs) for switch, dpfs in linked.items()}
        self.objects = list(objects)
        self.directory = directory
        self.lines = SourceLines()
        self.slots: dict[str, dict[tuple[int, int], list[_Placed]]] = {}
        self.files: dict[str, dict[str, ObjectDPF] | None] = {}  # object file -> symbol -> DPF
        self.packet_code: dict[CodeImage, tuple[ObjectDPF, dict[tuple[int, int], str]]] | None
        self.packet_code = None
        self.made: dict[tuple[int, str], StageSource] = {}  # (id of the object DPF, label)
        self.matched: dict[tuple[str, str], ObjectDPF | None] = {}  # (switch, DPF instance)

    # -- the TraceSources protocol ---------------------------------------------------------------
    def stage_sources(self, run: PacketTrace) -> list[StageSource | None]:
        """The source of each stage of ``run`` (None where its code is unknown)."""
        out: list[StageSource | None] = []
        running: set[str] | None = None  # the DPF instances the in-switch stages so far fit
        for stage in run.stages:
            if stage.pc.in_packet:
                out.append(self.in_packet(run.code, stage.stage, stage.pc.index))
                continue
            found = self.in_switch(run, stage.stage, stage.pc.index)
            if running is not None:
                found = [p for p in found if p.dpf.key in running] or found
            running = {p.dpf.key for p in found}
            out.append(None if not found else self.linked_source(run.node, found[0]))
        return out

    # -- in-switch code ----------------------------------------------------------------------
    def in_switch(self, run: PacketTrace, stage: int, slot: int) -> list[_Placed]:
        table = self.slots.get(run.node)
        if table is None:
            table = self.slots[run.node] = _slot_table(self.images.get(run.node))
        return [
            p
            for p in table.get((stage, slot), [])
            if run.pipe in p.dpf.pipes
            and p.dpf.pipeline == run.pipeline
            and p.dpf.tenant in (None, run.tenant)
        ]

    def linked_source(self, switch: str, placed: _Placed) -> StageSource | None:
        dpf = self.object_of(switch, placed.dpf)
        return None if dpf is None else self.source(dpf, placed.label, placed.dpf.symbol)

    def object_of(self, switch: str, linked: LinkedDPF) -> ObjectDPF | None:
        """The object DPF ``linked`` came from: the scenario's, else its image's object file,
        if that still holds the code the image installed (the same bundles under the same
        labels, but for the PCs linking relocated)."""
        key = (switch, linked.key)
        if key not in self.matched:
            found = self.linked.get(switch, {}).get(linked.key)
            if found is None:
                found = self.object_file(linked.object).get(linked.symbol)
            if found is not None and not self.same_code(self.images[switch], linked, found):
                found = None
            self.matched[key] = found
        return self.matched[key]

    def same_code(self, image: Image, linked: LinkedDPF, dpf: ObjectDPF) -> bool:
        compiled = {b.label: b.bundle for b in dpf.program.bundles}
        carried = {}
        if linked.in_packet_options is not None:
            code = decode_options(linked.in_packet_options, self.profile).code
            carried = dict(code.stages())
        for place in linked.labels:
            if place.in_packet:
                bundles = carried.get(place.stage, ())
                installed = bundles[place.slot] if place.slot < len(bundles) else None
            else:
                slot = image.slot_at(place.stage, place.slot)
                installed = (
                    None
                    if slot is None
                    else decode_slot(stage_kind(place.stage), slot.word, self.profile)
                )
            mine = compiled.get(place.label)
            if installed is None or mine is None or _unplaced(installed) != _unplaced(mine):
                return False
        return True

    def object_file(self, name: str) -> dict[str, ObjectDPF]:
        """The DPFs of the object file ``name`` (an image's record of where a DPF came
        from), by symbol; none when it cannot be read."""
        if name not in self.files:
            self.files[name] = None
            places = [Path(name)]
            if self.directory is not None and not Path(name).is_absolute():
                places.append(self.directory / name)
            for path in places:
                try:
                    obj = read_object(path.read_bytes(), str(path), self.profile)
                except (OSError, DiagnosticError):
                    continue
                self.files[name] = {dpf.symbol: dpf for dpf in obj.dpfs}
                break
        return self.files[name] or {}

    # -- in-packet code ------------------------------------------------------------------------
    def in_packet(self, code: CodeImage, stage: int, index: int) -> StageSource | None:
        if self.packet_code is None:
            self.packet_code = self.packet_index()
        found = self.packet_code.get(code)
        if found is None:
            return None
        dpf, labels = found
        label = labels.get((stage, index))
        return None if label is None else self.source(dpf, label, dpf.symbol)

    def packet_index(self) -> dict[CodeImage, tuple[ObjectDPF, dict[tuple[int, int], str]]]:
        """In-packet code -> its DPF and the labels of its bundles by (stage, index)."""
        index: dict[CodeImage, tuple[ObjectDPF, dict[tuple[int, int], str]]] = {}
        for dpf in self.objects:
            labels = {(b.stage, b.pc.index): b.label for b in dpf.program.bundles if b.pc.in_packet}
            if labels:
                index.setdefault(dpf.program.image(), (dpf, labels))
        for switch, image in self.images.items():
            for linked in image.dpfs:
                if linked.in_packet_options is None:
                    continue
                found = self.object_of(switch, linked)
                if found is None:
                    continue
                try:
                    code = decode_options(linked.in_packet_options, self.profile).code
                except DecodeError:
                    continue
                labels = {(p.stage, p.slot): p.label for p in linked.labels if p.in_packet}
                index.setdefault(code, (found, labels))
        return index

    # -- what a bundle's source says -----------------------------------------------------------
    def source(self, dpf: ObjectDPF, label: str, symbol: str) -> StageSource | None:
        key = (id(dpf), label)
        made = self.made.get(key)
        if made is None:
            bundle = next((b.bundle for b in dpf.program.bundles if b.label == label), None)
            if bundle is None:
                return None
            made = StageSource(
                symbol,
                label,
                self.instruction_lines(bundle, dpf.source.get(label, ())),
                dict(dpf.variables.get(label, {})),
            )
            self.made[key] = made
        return made

    def instruction_lines(
        self, bundle: StageBundle, locations: Sequence[tuple[str, int, int] | None]
    ) -> dict[InstructionSlot, SourceLine]:
        lines = {}
        for slot, location in zip(instruction_slots(bundle), locations, strict=False):
            if location is not None:
                path, line, _column = location
                lines[slot] = SourceLine(f"{path}:{line}", self.lines.text(path, line))
        return lines


def _unplaced(bundle: StageBundle) -> StageBundle:
    """``bundle`` with every PC it names set to one value: code as compiled and as linked
    differ in those only (slots are relocated, chain targets filled in)."""
    nowhere = PC(False, 0)
    if isinstance(bundle, EpilogBundle):
        return replace(
            bundle, next_pc=nowhere if isinstance(bundle.next_pc, PC) else bundle.next_pc
        )
    control = bundle.control
    not_taken = None if control.not_taken is None else nowhere
    return replace(bundle, control=replace(control, taken=nowhere, not_taken=not_taken))


def _slot_table(image: Image | None) -> dict[tuple[int, int], list[_Placed]]:
    table: dict[tuple[int, int], list[_Placed]] = {}
    for dpf in image.dpfs if image is not None else ():
        for label in dpf.labels:
            if not label.in_packet:
                table.setdefault((label.stage, label.slot), []).append(_Placed(dpf, label.label))
    return table


__all__ = ["CodeSources"]
