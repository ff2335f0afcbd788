"""The compiler's object file, ``dpfc-object`` version 1 (documented in docs/objects.md).

One object holds every compiled DPF of a module, for the linker: each DPF's bundles with
symbolic labels (PCs in the assembly text are labels, not addresses), their encoded bytes,
the source location of every instruction, the chain relocations, the memory the DPF needs
(array bindings) and its resource report. The bytes are deterministic: JSON with sorted
keys, two-space indentation, a final newline, nothing from the machine or the clock.

:func:`read_object` validates strictly and reports a malformed file as DPF6202 with the
path of the offending field, never a Python traceback.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from dpfc.codegen.emit import CompiledDPF
from dpfc.codegen.report import report_json
from dpfc.diagnostics import Diagnostic, DiagnosticError
from dpfc.encoding.header import encode_options
from dpfc.encoding.words import encode_slot, stage_kind
from dpfc.isa.bundle import stage_name
from dpfc.machine.program import Placement

FORMAT = "dpfc-object"
VERSION = 1


def _dpf_json(compiled: CompiledDPF) -> dict[str, Any]:
    program = compiled.program
    problem = compiled.problem
    profile = program.profile
    bundles = []
    for placed in sorted(program.bundles, key=lambda b: (b.stage, b.pc.index)):
        lines = compiled.source_map.get(placed.label, ())
        entry: dict[str, Any] = {
            "label": placed.label,
            "stage": stage_name(placed.stage),
            "index": placed.pc.index,
            "asm": [line for line, _ in lines],
            "source": [
                None if span is None else [span.source.name, span.line, span.column]
                for _, span in lines
            ],
        }
        if program.placement is Placement.SWITCH:
            entry["word"] = encode_slot(stage_kind(placed.stage), placed.bundle, profile).hex()
        bundles.append(entry)
    entry_label = next(b.label for b in program.bundles if b.pc == program.entry and b.stage == 0)
    out: dict[str, Any] = {
        "name": problem.name,
        "placement": program.placement.value,
        "app_id": program.app_id,
        "params": problem.params,
        "entry": entry_label,
        "eus_used": compiled.schedule.eus_used,
        "scheduler": compiled.schedule.scheduler,
        "bundles": bundles,
        "relocations": [
            {"bundle": r.label, "field": "next_pc", "target": r.target}
            for r in compiled.relocations
        ],
        "arrays": [
            {
                "name": name,
                "mapping": problem.arrays[name].mapping,
                "size": problem.arrays[name].size,
                "eu": where[0],
                "lane": where[1],
            }
            for name, where in sorted(compiled.schedule.bindings.items())
        ],
        "report": report_json(compiled),
    }
    if program.placement is Placement.PACKET:
        out["in_packet_options"] = encode_options(program.header(), profile).data.hex()
    return out


def write_module_object(units: Sequence[CompiledDPF]) -> bytes:
    """The object bytes of a module's compiled DPFs (in the given order)."""
    module = units[0].problem.module if units else ""
    target = units[0].program.profile.name if units else ""
    document = {
        "format": FORMAT,
        "version": VERSION,
        "module": module,
        "target": target,
        "dpfs": [_dpf_json(u) for u in units],
    }
    return (json.dumps(document, indent=2, sort_keys=True) + "\n").encode("utf-8")


def _malformed(filename: str, reason: str) -> DiagnosticError:
    return DiagnosticError(
        Diagnostic("DPF6202", f"{filename}: malformed dpfc object: {reason}", None)
    )


def _expect(value: Any, kind: type | tuple[type, ...], where: str, filename: str) -> Any:
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        names = kind.__name__ if isinstance(kind, type) else "/".join(k.__name__ for k in kind)
        raise _malformed(filename, f"`{where}` must be {names}")
    return value


def read_object(data: bytes, filename: str = "<object>") -> dict[str, Any]:
    """Parse and validate an object file; raises DiagnosticError (DPF6202) if malformed."""
    try:
        document = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise _malformed(filename, f"not JSON ({exc})") from None
    _expect(document, dict, "<top>", filename)
    if document.get("format") != FORMAT:
        raise _malformed(filename, f'`format` must be "{FORMAT}"')
    if document.get("version") != VERSION:
        raise _malformed(
            filename, f"unsupported `version` {document.get('version')!r} (expected {VERSION})"
        )
    _expect(document.get("module"), str, "module", filename)
    _expect(document.get("target"), str, "target", filename)
    for i, dpf in enumerate(_expect(document.get("dpfs"), list, "dpfs", filename)):
        where = f"dpfs[{i}]"
        _expect(dpf, dict, where, filename)
        for key, kind in (
            ("name", str),
            ("placement", str),
            ("app_id", int),
            ("params", int),
            ("entry", str),
            ("eus_used", int),
            ("bundles", list),
            ("relocations", list),
            ("arrays", list),
            ("report", dict),
        ):
            _expect(dpf.get(key), kind, f"{where}.{key}", filename)
        if dpf["placement"] not in ("packet", "switch"):
            raise _malformed(filename, f"`{where}.placement` must be packet or switch")
        labels = set()
        for j, bundle in enumerate(dpf["bundles"]):
            bwhere = f"{where}.bundles[{j}]"
            _expect(bundle, dict, bwhere, filename)
            _expect(bundle.get("label"), str, f"{bwhere}.label", filename)
            _expect(bundle.get("stage"), str, f"{bwhere}.stage", filename)
            _expect(bundle.get("index"), int, f"{bwhere}.index", filename)
            asm = _expect(bundle.get("asm"), list, f"{bwhere}.asm", filename)
            source = _expect(bundle.get("source"), list, f"{bwhere}.source", filename)
            if len(asm) != len(source):
                raise _malformed(filename, f"`{bwhere}.source` must have one entry per asm line")
            for k, item in enumerate(source):
                if item is not None and not (
                    isinstance(item, list)
                    and len(item) == 3
                    and isinstance(item[0], str)
                    and all(isinstance(x, int) and not isinstance(x, bool) for x in item[1:])
                ):
                    raise _malformed(
                        filename, f"`{bwhere}.source[{k}]` must be [file, line, column] or null"
                    )
            labels.add(bundle["label"])
        if dpf["entry"] not in labels:
            raise _malformed(filename, f"`{where}.entry` names no bundle")
    return dict(document)


def format_object_with_source(document: dict[str, Any]) -> str:
    """``dpfc disasm --source`` of an object: assembly, each line with its source line (the
    text too, when the source file can be read)."""
    cache: dict[str, list[str] | None] = {}

    def text(path: str, line: int) -> str:
        if path not in cache:
            try:
                cache[path] = Path(path).read_text(encoding="utf-8").splitlines()
            except (OSError, UnicodeDecodeError):
                cache[path] = None
        lines = cache[path]
        if lines is None or not 0 < line <= len(lines):
            return ""
        return " " + lines[line - 1].strip()

    out: list[str] = []
    for dpf in document["dpfs"]:
        if out:
            out.append("")
        out += [
            f".dpf {dpf['name']}",
            f".target {document['target']}",
            f".placement {dpf['placement']}",
        ]
        if dpf["app_id"]:
            out.append(f".app {dpf['app_id']:#x}")
        out.append(f".entry {dpf['entry']}")
        width = max((len(line) for b in dpf["bundles"] for line in b["asm"]), default=20)
        for bundle in dpf["bundles"]:
            out.append("")
            slot = f" @{bundle['index']}" if dpf["placement"] == "switch" else ""
            out.append(f"{bundle['stage']} {bundle['label']}{slot}:")
            for line, source in zip(bundle["asm"], bundle["source"], strict=True):
                note = ""
                if source is not None:
                    note = f"  ; {source[0]}:{source[1]}:{text(source[0], source[1])}"
                out.append(("    " + line.ljust(width) + note).rstrip())
        for relocation in dpf["relocations"]:
            out.append(f"; relocation: {relocation['bundle']} NEXT_PC -> {relocation['target']}")
    return "\n".join(out) + "\n"
