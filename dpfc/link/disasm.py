"""``dpfc disasm IMAGE``: an install image as text — what it installs, where, for whom.

The header lists the DPFs (tenant, symbol, pipes, ``egress`` for egress DPFs, entry slot,
chains), memory requests (egress memory marked), permission entries, steering indices and
the install order's size; then every code slot in install order, each with its reference
count and users and its bundle as canonical assembly whose PCs are named
``symbol:label@slot`` (the first user's label when the slot is shared); then the in-packet
code of in-packet DPFs, chain targets filled in.
"""

from __future__ import annotations

from dpfc.encoding import decode_options, decode_slot, stage_kind
from dpfc.isa import PC, stage_name
from dpfc.link.image import Image, LinkedDPF
from dpfc.machine import PlacedBundle, bundle_lines, disassemble_header

INDENT = "    "


def _names(image: Image) -> dict[tuple[int, int], str]:
    """(stage, slot) -> ``symbol:label`` of its first user."""
    names: dict[tuple[int, int], str] = {}
    for dpf in image.dpfs:
        for placed in dpf.labels:
            if not placed.in_packet:
                names.setdefault((placed.stage, placed.slot), f"{dpf.symbol}:{placed.label}")
    return names


def _dpf_line(dpf: LinkedDPF) -> str:
    where = f"entry @switch:{dpf.entry}" if dpf.entry is not None else "in-packet"
    if dpf.pipeline != "ingress":  # ingress is the default and is not spelt out
        where = f"{dpf.pipeline}, {where}"
    pipes = ",".join(map(str, dpf.pipes))
    line = (
        f";   {dpf.key:<32} {dpf.placement:<6} pipes {pipes:<5} {where}, app {dpf.app_id:#x}, "
        f"{dpf.params} params ({dpf.object})"
    )
    for chain in dpf.chains:
        line += f"\n;     {chain.label} chains to {chain.target} at @switch:{chain.slot}"
    return line


def format_image(image: Image, image_id: str) -> str:
    profile = image.profile
    out = [
        f"; dpfc install image {image_id[:16]}: target {profile.name}, {image.pipes} pipe"
        f"{'s' if image.pipes != 1 else ''}"
        + (f", extends image {image.base[:16]}" if image.base else ""),
        f"; {len(image.code)} code slots, {len(image.install)} install steps",
        "; DPFs (tenant:symbol):",
        *(_dpf_line(d) for d in image.dpfs),
    ]
    for extern in image.externs:
        out.append(
            f";   extern {extern.tenant}:{extern.symbol} at @switch:{extern.entry} "
            f"(image {extern.image[:16]})"
        )
    if image.memory:
        out.append("; memory:")
        out += [
            f";   {m.tenant}:{m.array}: {m.size} words {m.mapping} at EU{m.eu} lane {m.lane}"
            + ("" if m.pipeline == "ingress" else f" ({m.pipeline})")
            + f", pipes {','.join(map(str, m.pipes))}"
            for m in image.memory
        ]
    if image.permissions:
        out.append("; permissions:")
        out += [
            f";   tenant {p.tenant}: app ids {', '.join(f'{a:#x}' for a in p.app_ids)}; "
            f"metadata {_yes(p.metadata)}, privileged {_yes(p.privileged)}, "
            f"recirculate {_yes(p.recirculate)}; default DPF {p.default_dpf or 'none'}"
            for p in image.permissions
        ]
    if image.steering:
        out.append("; steering indices the code names:")
        out += [f";   tenant {s.tenant}: {s.action} {s.index}" for s in image.steering]
    names = _names(image)

    def name_pc(stage: int, pc: PC) -> str:
        if pc.in_packet:
            return str(pc)
        label = names.get((stage, pc.index))
        return f"{label}@{pc.index}" if label else str(pc)

    for slot in image.code:
        bundle = decode_slot(stage_kind(slot.stage), slot.word, profile)
        placed = PlacedBundle(slot.stage, PC(False, slot.slot), bundle, "")
        shared = f"shared by {slot.refs}: " if slot.refs > 1 else "used by "
        out.append("")
        out.append(
            f"{stage_name(slot.stage)} @{slot.slot}:  ; {names.get((slot.stage, slot.slot), '?')}"
            f", {shared}{', '.join(slot.users)}; pipes {','.join(map(str, slot.pipes))}"
        )
        out += [INDENT + line for line in bundle_lines(placed, name_pc, profile)]
    for dpf in image.dpfs:
        if dpf.in_packet_options is None:
            continue
        header = decode_options(dpf.in_packet_options, profile)
        out.append("")
        out.append(f"; in-packet code of {dpf.key}, chain targets filled in:")
        out.append(disassemble_header(header, profile, name=dpf.symbol.replace(".", "_")).rstrip())
    return "\n".join(out) + "\n"


def _yes(flag: bool) -> str:
    return "yes" if flag else "no"


__all__ = ["format_image"]
