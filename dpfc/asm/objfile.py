"""The assembler's JSON object: a deterministic, versioned description of an assembled DPF.

::

    {"format": "dpfc-asm-object", "version": 1, "name": ..., "target": "tofino1",
     "placement": "packet" | "switch", "app_id": int, "entry": "@packet:0",
     "in_packet_options": "<hex of the SwitchVM options with an empty stack>" | "",
     "in_switch": [{"stage": "eu0", "slot": 3, "word": "<hex code-memory word>"}, ...],
     "labels": [{"label": "main", "stage": "prolog", "pc": "@packet:0"}, ...]}

In-packet code and in-switch words use exactly the byte formats of docs/encoding.md, so an
object can be checked against the encoders bit for bit. (The linker's object format, with
symbolic PCs and relocations, is a separate, later format.)
"""

from __future__ import annotations

import json
from typing import Any

from dpfc.encoding.errors import DecodeError
from dpfc.encoding.header import decode_options, encode_options
from dpfc.encoding.words import decode_slot, encode_slot, stage_kind
from dpfc.isa.bundle import EPILOG_STAGE, PC, PROLOG_STAGE, stage_name
from dpfc.machine.program import MachineProgram, PlacedBundle, Placement
from dpfc.target.profile import TargetProfile, load_profile

__all__ = ["ObjectError", "object_from_json", "object_to_json", "parse_stage", "stage_kind"]

FORMAT = "dpfc-asm-object"
VERSION = 1


class ObjectError(Exception):
    """A JSON object file is malformed."""


def parse_stage(text: str) -> int:
    if text == "prolog":
        return PROLOG_STAGE
    if text == "epilog":
        return EPILOG_STAGE
    if text.startswith("eu") and text[2:].isdigit():
        return int(text[2:]) + 1
    raise ObjectError(f"unknown stage `{text}`")


def parse_pc(text: str) -> PC:
    try:
        return PC.parse(text)
    except ValueError as exc:
        raise ObjectError(str(exc)) from None


def object_to_json(program: MachineProgram) -> dict[str, Any]:
    profile = program.profile
    image = program.image()
    options = "" if image.is_empty() else encode_options(program.header(), profile).data.hex()
    in_switch = [
        {
            "stage": stage_name(stage),
            "slot": slot,
            "word": encode_slot(stage_kind(stage), bundle, profile).hex(),
        }
        for stage, by_slot in sorted(program.switch_slots().items())
        for slot, bundle in sorted(by_slot.items())
    ]
    labels = [
        {"label": b.label, "stage": stage_name(b.stage), "pc": str(b.pc)}
        for b in sorted(program.bundles, key=lambda b: (b.stage, not b.pc.in_packet, b.pc.index))
    ]
    return {
        "format": FORMAT,
        "version": VERSION,
        "name": program.name,
        "target": profile.name,
        "placement": program.placement.value,
        "app_id": program.app_id,
        "entry": str(program.entry),
        "in_packet_options": options,
        "in_switch": in_switch,
        "labels": labels,
    }


def _field(data: dict[str, Any], key: str, kind: type) -> Any:
    if key not in data:
        raise ObjectError(f"missing field `{key}`")
    value = data[key]
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise ObjectError(f"field `{key}` must be {kind.__name__}")
    return value


def object_from_json(text: str, profile: TargetProfile | None = None) -> MachineProgram:
    """Rebuild a program from an object; raises :class:`ObjectError` or DecodeError."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ObjectError(f"not JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    if not isinstance(data, dict):
        raise ObjectError("the object must be a JSON object")
    if data.get("format") != FORMAT:
        raise ObjectError(f"not a {FORMAT} file (format = {data.get('format')!r})")
    if _field(data, "version", int) != VERSION:
        raise ObjectError(
            f"unsupported object version {data['version']} (this dpfc reads {VERSION})"
        )
    target = _field(data, "target", str)
    if profile is None:
        profile = load_profile(target)
    elif profile.name != target:
        raise ObjectError(f"object was assembled for `{target}`, not `{profile.name}`")
    try:
        placement = Placement(_field(data, "placement", str))
    except ValueError:
        raise ObjectError("field `placement` must be packet or switch") from None
    labels: dict[tuple[int, PC], str] = {}
    for item in _field(data, "labels", list):
        if not isinstance(item, dict):
            raise ObjectError("each label must be an object")
        labels[(parse_stage(_field(item, "stage", str)), parse_pc(_field(item, "pc", str)))] = (
            _field(item, "label", str)
        )
    placed: list[PlacedBundle] = []
    options_hex = _field(data, "in_packet_options", str)
    if options_hex:
        try:
            raw = bytes.fromhex(options_hex)
        except ValueError:
            raise ObjectError("field `in_packet_options` is not hex") from None
        header = decode_options(raw, profile)
        for stage, bundles in header.code.stages():
            for index, bundle in enumerate(bundles):
                pc = PC(True, index)
                placed.append(
                    PlacedBundle(
                        stage, pc, bundle, labels.get((stage, pc), f"{stage_name(stage)}_{index}")
                    )
                )
    for item in _field(data, "in_switch", list):
        if not isinstance(item, dict):
            raise ObjectError("each in_switch entry must be an object")
        stage = parse_stage(_field(item, "stage", str))
        slot = _field(item, "slot", int)
        try:
            word = bytes.fromhex(_field(item, "word", str))
        except ValueError:
            raise ObjectError("an in_switch word is not hex") from None
        try:
            bundle = decode_slot(stage_kind(stage), word, profile)
        except DecodeError as exc:
            raise ObjectError(f"{stage_name(stage)} slot {slot}: {exc.message}") from None
        pc = PC(False, slot)
        placed.append(
            PlacedBundle(stage, pc, bundle, labels.get((stage, pc), f"{stage_name(stage)}_s{slot}"))
        )
    app_id = _field(data, "app_id", int)
    name = _field(data, "name", str)
    entry = parse_pc(_field(data, "entry", str))
    return MachineProgram(name, profile, placement, app_id, entry, tuple(placed))
