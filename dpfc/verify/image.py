"""An install image as the verifier reads it: each DPF's code, and the loops of its chains.

Contract: :func:`image_programs` gives, for each DPF instance of an
:class:`~dpfc.link.Image`, the :class:`~dpfc.machine.MachineProgram` a packet runs: in-switch
DPFs from the image's code memory (every word decoded once, the DPF entered at its prolog
slot, with the bundle labels the linker placed and the arrays the image maps for its
tenant), in-packet DPFs from their options (chains resolved to the slots they name).
:func:`chain_loops` finds the cycles of the image's chain graph: a DPF whose NEXT_PC
leads, through other DPFs' chains, back to itself. A packet that follows such a loop runs
as long as something recirculates it and its gas lasts, in this switch or the next.
"""

from __future__ import annotations

from dataclasses import replace

from dpfc.encoding import decode_options, decode_slot, stage_kind
from dpfc.isa import PC, PROLOG_STAGE, Bundle, EpilogBundle
from dpfc.link import Image, LinkedDPF
from dpfc.machine import (
    ArrayBinding,
    MachineProgram,
    Pipeline,
    program_from_image,
    program_from_slots,
    successor_stage,
)


def _slots(image: Image) -> dict[int, dict[int, Bundle | EpilogBundle]]:
    out: dict[int, dict[int, Bundle | EpilogBundle]] = {}
    for slot in image.code:
        bundle = decode_slot(stage_kind(slot.stage), slot.word, image.profile)
        assert isinstance(bundle, Bundle | EpilogBundle)
        out.setdefault(slot.stage, {})[slot.slot] = bundle
    return out


def _arrays(image: Image, dpf: LinkedDPF) -> tuple[ArrayBinding, ...]:
    return tuple(
        ArrayBinding(m.array, m.mapping, m.size, m.eu, m.lane)
        for m in image.memory
        if m.tenant == dpf.tenant and m.pipeline == dpf.pipeline and dpf.key in m.users
    )


def image_programs(image: Image) -> list[tuple[LinkedDPF, MachineProgram]]:
    """Every DPF instance of ``image`` with the program a packet runs (module docstring)."""
    slots = _slots(image) if image.code else {}
    pipeline = {"ingress": Pipeline.INGRESS, "egress": Pipeline.EGRESS}
    out = []
    for dpf in image.dpfs:
        name = dpf.key
        if dpf.entry is not None:
            program = program_from_slots(
                slots, image.profile, name=name, app_id=dpf.app_id, entry=PC(False, dpf.entry)
            )
            labels = {(p.stage, p.slot): p.label for p in dpf.labels if not p.in_packet}
            placed = tuple(
                replace(b, label=labels.get((b.stage, b.pc.index), b.label))
                for b in program.bundles
            )
            program = replace(
                program, bundles=placed, arrays=_arrays(image, dpf), pipeline=pipeline[dpf.pipeline]
            )
        elif dpf.in_packet_options is not None:
            header = decode_options(dpf.in_packet_options, image.profile)
            entry = header.egress_ptr if dpf.pipeline == "egress" else header.dpf_ptr
            program = program_from_image(
                header.code,
                image.profile,
                name=name,
                app_id=dpf.app_id,
                entry=entry,
                pipeline=pipeline[dpf.pipeline],
            )
            program = replace(program, arrays=_arrays(image, dpf))
        else:
            continue
        out.append((dpf, program))
    return out


def _next_slots(program: MachineProgram) -> set[int]:
    """The prolog slots the epilogs a packet can reach from the entry chain to."""
    code = {(b.stage, b.pc): b.bundle for b in program.bundles}
    todo, seen, out = [(PROLOG_STAGE, program.entry)], set(), set()
    while todo:
        stage, pc = todo.pop()
        if (stage, pc) in seen or (stage, pc) not in code:
            continue
        seen.add((stage, pc))
        bundle = code[stage, pc]
        if isinstance(bundle, EpilogBundle):
            if isinstance(bundle.next_pc, PC) and not bundle.next_pc.in_packet:
                out.add(bundle.next_pc.index)
            continue
        control = bundle.control
        after = successor_stage(stage, control.op, program.profile.num_eus)
        for target in (control.taken, control.not_taken):
            if target is not None:
                todo.append((1 if stage == PROLOG_STAGE else after, target))
    return out


def chain_loops(image: Image, programs: list[tuple[LinkedDPF, MachineProgram]]) -> list[list[str]]:
    """The cycles of the chain graph: a DPF's reachable NEXT_PC naming the prolog slot of a
    DPF of its tenant (DPF keys, each cycle once, from its smallest key)."""
    by_entry = {(d.tenant, d.entry): d.key for d in image.dpfs if d.entry is not None}
    edges: dict[str, set[str]] = {d.key: set() for d, _ in programs}
    for dpf, program in programs:
        for slot in _next_slots(program):
            target = by_entry.get((dpf.tenant, slot))
            if target is not None and target in edges:
                edges[dpf.key].add(target)
    loops: list[list[str]] = []

    def walk(path: list[str]) -> None:
        for nxt in sorted(edges[path[-1]]):
            if nxt == path[0]:
                loops.append(list(path))
            elif nxt not in path and nxt > path[0]:
                walk([*path, nxt])

    for key in sorted(edges):
        walk([key])  # a cycle is found once: from its smallest key
    return loops


__all__ = ["chain_loops", "image_programs"]
