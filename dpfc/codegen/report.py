"""The resource report of a compiled DPF, in the form of the SwitchVM paper's Table 4.

Per EU: the direct-mapping entries, segments and memory words its arrays need; its ALU and
memory operations (counted over all bundles of the stage); then the forwarding entries the
epilogs name, the code slots (bundles) per stage and, for in-packet DPFs, the bytes of the
SwitchVM Geneve options. Rules: a direct array of n words takes n direct entries and n
words; a segment array takes one segment per power-of-two piece of n (the TCAM matches a
masked range, docs/simulator.md) and n words.
"""

from __future__ import annotations

from typing import Any

from dpfc.codegen.emit import CompiledDPF
from dpfc.isa import EPILOG_STAGE, PROLOG_STAGE, AluOp, Bundle, EpilogBundle, Imm, MemOp, stage_name
from dpfc.machine import Placement


def segments_for(size: int) -> int:
    """Power-of-two segments that cover ``size`` words exactly (one per set bit)."""
    return bin(size).count("1")


def report_json(compiled: CompiledDPF) -> dict[str, Any]:
    program = compiled.program
    profile = program.profile
    problem = compiled.problem
    eus: list[dict[str, int]] = [
        {"direct": 0, "segments": 0, "words": 0, "alu": 0, "memory": 0}
        for _ in range(profile.num_eus)
    ]
    for name, (eu, _lane) in sorted(compiled.schedule.bindings.items()):
        info = problem.arrays[name]
        row = eus[eu]
        row["words"] += info.size
        if info.mapping == "direct":
            row["direct"] += info.size
        else:
            row["segments"] += segments_for(info.size)
    forwarding: set[str] = set()
    slots: dict[str, int] = {}
    for placed in program.bundles:
        slots[stage_name(placed.stage)] = slots.get(stage_name(placed.stage), 0) + 1
        bundle = placed.bundle
        if isinstance(bundle, Bundle) and placed.stage not in (PROLOG_STAGE, EPILOG_STAGE):
            row = eus[placed.stage - 1]
            row["alu"] += sum(1 for op in bundle.alu if op is not AluOp.NOP)
            row["memory"] += sum(1 for op in bundle.mem if op is not MemOp.NOP)
        elif isinstance(bundle, EpilogBundle):
            steering = bundle.steering
            if steering.action in ("forward", "multicast"):
                value = steering.value
                key = str(value.value) if isinstance(value, Imm) else "dynamic"
                forwarding.add(f"{steering.action} {key}")
    header_bytes = None
    if program.placement is Placement.PACKET:
        header_bytes = len(compiled.encoded.options)
    return {
        "dpf": f"{problem.module}.{problem.name}",
        "target": profile.name,
        "placement": program.placement.value,
        "eus_used": compiled.schedule.eus_used,
        "eus": eus,
        "forwarding": sorted(forwarding),
        "code_slots": slots,
        "header_bytes": header_bytes,
        "bindings": {k: list(v) for k, v in sorted(compiled.schedule.bindings.items())},
    }


def format_report(compiled: CompiledDPF) -> str:
    """An aligned text table (one column per EU the profile has)."""
    data = report_json(compiled)
    eus = data["eus"]
    header = ["", *(f"EU{k}" for k in range(len(eus)))]
    rows = [
        ["direct entries", *(str(e["direct"]) for e in eus)],
        ["segments", *(str(e["segments"]) for e in eus)],
        ["memory words", *(str(e["words"]) for e in eus)],
        ["ALU ops", *(str(e["alu"]) for e in eus)],
        ["memory ops", *(str(e["memory"]) for e in eus)],
    ]
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    lines = [
        "  ".join(
            cell.rjust(w) if i else cell.ljust(w)
            for i, (cell, w) in enumerate(zip(row, widths, strict=True))
        ).rstrip()
        for row in [header, *rows]
    ]
    slots = ", ".join(f"{stage} {count}" for stage, count in data["code_slots"].items())
    lines.append(f"code slots: {slots}")
    forwarding = ", ".join(data["forwarding"]) or "none"
    lines.append(f"forwarding entries: {forwarding}")
    if data["header_bytes"] is not None:
        lines.append(f"in-packet SwitchVM options: {data['header_bytes']} bytes (Geneve limit 252)")
    else:
        lines.append("in-switch code: installed in the code memories, no code in packets")
    if data["bindings"]:
        lines.append(
            "arrays: " + ", ".join(f"{n} EU{v[0]} lane {v[1]}" for n, v in data["bindings"].items())
        )
    return "\n".join(lines) + "\n"
