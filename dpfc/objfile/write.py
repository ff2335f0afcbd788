"""Writing ``dpfc-object`` version 2, debug version 2 (docs/objects.md): deterministic JSON
bytes.

JSON with sorted keys, two-space indentation and a final newline; nothing from the machine
or the clock. Bytes come from the DPF's :class:`~dpfc.machine.encoded.EncodedProgram`
(encoded once by the compiler or the assembler), the assembly lines from the one printer.
"""

from __future__ import annotations

import json
from typing import Any

from dpfc.isa import stage_name
from dpfc.machine import program_lines
from dpfc.objfile.model import DEBUG_VERSION, FORMAT, VERSION, ObjectDPF, ObjectFile


def _bundles(dpf: ObjectDPF) -> list[dict[str, Any]]:
    encoded = dpf.encoded
    program = encoded.program
    lines = program_lines(program)
    out = []
    for placed in program.ordered():
        key = (placed.stage, placed.pc.index)
        if placed.pc.in_packet:
            word = None if encoded.switch_form is None else encoded.switch_form[key]
        else:
            word = encoded.words[key]
        asm = lines[placed.label]
        source = list(dpf.source.get(placed.label, ()))
        source += [None] * (len(asm) - len(source))
        variables = dpf.variables.get(placed.label, {})
        out.append(
            {
                "label": placed.label,
                "stage": stage_name(placed.stage),
                "pc": str(placed.pc),
                "asm": asm,
                "source": [None if loc is None else list(loc) for loc in source],
                "registers": {str(reg): name for reg, name in sorted(variables.items())},
                "word": None if word is None else word.hex(),
            }
        )
    return out


def _dpf_json(dpf: ObjectDPF) -> dict[str, Any]:
    program = dpf.program
    encoded = dpf.encoded
    return {
        "symbol": dpf.symbol,
        "name": program.name,
        "placement": program.placement.value,
        "pipeline": dpf.pipeline,
        "app_id": program.app_id,
        "params": dpf.params,
        "entry": program.entry_label(),
        "location": None if dpf.location is None else list(dpf.location),
        "bundles": _bundles(dpf),
        "in_packet_options": encoded.options.hex() if encoded.packed is not None else None,
        "switch_problem": encoded.switch_problem,
        "relocations": [
            {"bundle": r.label, "field": "next_pc", "target": r.target} for r in program.relocations
        ],
        "arrays": [
            {"name": a.name, "mapping": a.mapping, "size": a.size, "eu": a.eu, "lane": a.lane}
            for a in program.arrays
        ],
        "schedule": None if dpf.schedule is None else dict(dpf.schedule),
        "report": None if dpf.report is None else dict(dpf.report),
    }


def write_object(obj: ObjectFile) -> bytes:
    """The bytes of ``obj`` (its DPFs in the given order)."""
    document = {
        "format": FORMAT,
        "version": VERSION,
        "debug_version": DEBUG_VERSION,
        "module": obj.module,
        "producer": obj.producer,
        "target": obj.profile.name,
        "target_fingerprint": obj.profile.fingerprint(),
        "dpfs": [_dpf_json(d) for d in obj.dpfs],
    }
    return (json.dumps(document, indent=2, sort_keys=True) + "\n").encode("utf-8")


__all__ = ["write_object"]
