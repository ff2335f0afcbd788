"""Reading ``dpfc-object`` version 2, strictly (docs/objects.md), of debug version 1 or 2.

Contract: :func:`read_object` returns an :class:`~dpfc.objfile.model.ObjectFile` whose
programs are rebuilt from the *bytes* of the object (in-packet options, code-memory words),
decoded by :mod:`dpfc.encoding` (which rejects non-canonical encodings), never from the
assembly text; the text must then be exactly what the printer prints for those bytes, and
the switch form of an in-packet DPF exactly the decoded code with local slots. Any
mismatch, unknown or missing field, wrong type, or an object of another format or version is
DPF6202 naming the file and the JSON path; a profile that does not match the one the code
was built for is DPF6203. Nothing else escapes.

Debug versions: an object without ``debug_version`` is version 1 (written before it
existed: each instruction's source line, no register variables); version 2 adds each
bundle's ``registers`` (required there, refused in version 1); a later version is refused
with a message to compile again.
"""

from __future__ import annotations

import json
from typing import Any

from dpfc.catalog import codes
from dpfc.diagnostics import Diagnostic, DiagnosticError
from dpfc.encoding import (
    DecodeError,
    decode_options,
    decode_slot,
    encode_options,
    pack_code,
    stage_kind,
)
from dpfc.isa import (
    EPILOG_STAGE,
    PC,
    PROLOG_STAGE,
    EpilogBundle,
    Register,
    StageBundle,
    stage_name,
)
from dpfc.machine import (
    ArrayBinding,
    EncodedProgram,
    MachineProgram,
    Pipeline,
    PlacedBundle,
    Placement,
    Relocation,
    Words,
    program_lines,
)
from dpfc.objfile.debug import DebugNotes, location
from dpfc.objfile.fields import Fields
from dpfc.objfile.model import FORMAT, VERSION, ObjectDPF, ObjectFile, SourceLocation
from dpfc.target import BUILTIN_PROFILES, TargetProfile

DPF_KEYS = (
    "symbol",
    "name",
    "placement",
    "pipeline",
    "app_id",
    "params",
    "entry",
    "location",
    "bundles",
    "in_packet_options",
    "switch_problem",
    "relocations",
    "arrays",
    "schedule",
    "report",
)
BUNDLE_KEYS = ("label", "stage", "pc", "asm", "source", "word")
TOP_KEYS = ("format", "version", "module", "producer", "target", "target_fingerprint", "dpfs")


class ObjectError(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _malformed(filename: str, reason: str) -> DiagnosticError:
    return DiagnosticError(
        Diagnostic(codes.OBJECT_MALFORMED, f"{filename}: malformed dpfc object: {reason}", None)
    )


def parse_stage(text: str, profile: TargetProfile) -> int | None:
    if text == "prolog":
        return PROLOG_STAGE
    if text == "epilog":
        return EPILOG_STAGE
    if text.startswith("eu") and text[2:].isdigit() and int(text[2:]) < profile.num_eus:
        return int(text[2:]) + 1
    return None


def object_profile(
    target: str, fingerprint: str, profile: TargetProfile | None, filename: str
) -> TargetProfile:
    """The profile an object (or bundle) was built for: ``profile`` when given, else the
    built-in of that name; its fingerprint must match (DPF6203)."""
    if profile is None:
        if target not in BUILTIN_PROFILES:
            raise DiagnosticError(
                Diagnostic(
                    codes.OBJECT_WRONG_PROFILE,
                    f"{filename}: built for the target profile `{target}`, which is not "
                    "built in: give its .toml file with --target",
                    None,
                )
            )
        profile = BUILTIN_PROFILES[target]
    if profile.name != target or profile.fingerprint() != fingerprint:
        raise DiagnosticError(
            Diagnostic(
                codes.OBJECT_WRONG_PROFILE,
                f"{filename}: built for target `{target}` (fingerprint {fingerprint}), not "
                f"for `{profile.name}` (fingerprint {profile.fingerprint()})",
                None,
            )
        )
    return profile


def read_object(
    data: bytes, filename: str = "<object>", profile: TargetProfile | None = None
) -> ObjectFile:
    """Parse and validate an object file (see the module docstring)."""
    try:
        document = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise _malformed(filename, f"not JSON ({exc})") from None
    if not isinstance(document, dict):
        raise _malformed(filename, "not a dpfc object (the document is not a JSON object)")
    kind = document.get("format")
    if kind == "dpfc-asm-object":
        raise _malformed(
            filename,
            "this is the assembler's JSON object of older dpfc versions, which dpfc no longer "
            "reads: assemble the .dpfasm again with `dpfc asm --emit obj`",
        )
    if kind != FORMAT:
        raise _malformed(filename, f'`format` must be "{FORMAT}"')
    version = document.get("version")
    if version != VERSION:
        raise _malformed(
            filename,
            f"this is a version {version!r} object; this dpfc reads version {VERSION} only: "
            "compile (or assemble) the source again",
        )

    def fail(reason: str) -> Exception:
        return ObjectError(reason)

    try:
        top = Fields(document, "", fail)
        notes = DebugNotes.of(top)
        top.exactly(*TOP_KEYS, *notes.top_keys)
        target = object_profile(
            top.string("target"), top.string("target_fingerprint"), profile, filename
        )
        module = top.string("module")
        dpfs = tuple(_dpf(item, target, notes) for item in top.objects("dpfs"))
        symbols = [d.symbol for d in dpfs]
        duplicate = next((s for s in symbols if symbols.count(s) > 1), None)
        if duplicate is not None:
            top.reject(f"two DPFs are named `{duplicate}`")
        return ObjectFile(module, target, dpfs, top.string("producer"), filename)
    except ObjectError as exc:
        raise _malformed(filename, exc.reason) from None
    except DecodeError as exc:
        raise _malformed(filename, f"[{exc.code}] {exc.message}") from None


def _pc(fields: Fields, key: str) -> PC:
    try:
        return PC.parse(fields.string(key))
    except ValueError as exc:
        fields.reject(f"`{fields.at(key)}`: {exc}")


def _dpf(fields: Fields, profile: TargetProfile, notes: DebugNotes) -> ObjectDPF:
    fields.exactly(*DPF_KEYS)
    name = fields.string("name")
    placement = Placement(fields.string("placement", choices=("packet", "switch")))
    packet_code = None
    options = fields.optional_hex("in_packet_options")
    if (options is None) != (placement is Placement.SWITCH):
        fields.reject(f"`{fields.at('in_packet_options')}` must be given for in-packet DPFs only")
    if options is not None:
        packet_code = decode_options(options, profile).code
    in_packet = dict(packet_code.stages()) if packet_code is not None else {}
    bundles: list[PlacedBundle] = []
    words: Words = {}
    form_words: Words = {}
    asm: dict[str, list[str]] = {}
    source: dict[str, tuple[SourceLocation | None, ...]] = {}
    variables: dict[str, dict[Register, str]] = {}
    for item in fields.objects("bundles"):
        item.exactly(*BUNDLE_KEYS, *notes.bundle_keys)
        label = item.string("label")
        if label in asm:
            item.reject(f"label `{label}` is defined twice")
        stage = parse_stage(item.string("stage"), profile)
        if stage is None:
            item.reject(f"`{item.at('stage')}` names no stage of {profile.name}")
        pc = _pc(item, "pc")
        word = item.optional_hex("word")
        bundle: StageBundle
        if pc.in_packet:
            present = in_packet.get(stage, ())
            if pc.index >= len(present):
                item.reject(f"`{item.at('pc')}` names no {stage_name(stage)} bundle of the options")
            bundle = present[pc.index]
            if word is not None:
                form_words[(stage, pc.index)] = word
        else:
            if word is None:
                item.reject(f"`{item.at('word')}` is missing for an in-switch bundle")
            bundle = decode_slot(stage_kind(stage), word, profile)
            words[(stage, pc.index)] = word
        bundles.append(PlacedBundle(stage, pc, bundle, label))
        asm[label] = item.strings("asm")
        source[label] = notes.source(item, len(asm[label]))
        variables[label] = notes.registers(item, profile)
    placed = {(b.stage, b.pc) for b in bundles}
    for stage, present in in_packet.items():
        for index in range(len(present)):
            if (stage, PC(True, index)) not in placed:
                fields.reject(
                    f"in-packet {stage_name(stage)} bundle {index} of the options has no entry "
                    "in `bundles`"
                )
    entry_label = fields.string("entry")
    entry = next((b for b in bundles if b.label == entry_label), None)
    if entry is None or entry.stage != PROLOG_STAGE:
        fields.reject(f"`{fields.at('entry')}` names no prolog bundle")
    relocations = tuple(_relocation(item, asm) for item in fields.objects("relocations"))
    epilogs_with_pc = {
        b.label
        for b in bundles
        if isinstance(b.bundle, EpilogBundle) and isinstance(b.bundle.next_pc, PC)
    }
    for k, relocation in enumerate(relocations):
        if relocation.label not in epilogs_with_pc:
            fields.reject(
                f"`{fields.at('relocations')}[{k}]` names no epilog with a NEXT_PC address"
            )
    program = MachineProgram(
        name=name,
        profile=profile,
        placement=placement,
        app_id=fields.integer("app_id"),
        entry=entry.pc,
        bundles=tuple(bundles),
        arrays=tuple(_array(item, profile) for item in fields.objects("arrays")),
        relocations=relocations,
        pipeline=Pipeline(fields.string("pipeline", choices=("ingress", "egress"))),
    )
    if program_lines(program) != asm:
        label = next(k for k, v in program_lines(program).items() if asm[k] != v)
        fields.reject(f"the assembly of bundle `{label}` does not match its bytes")
    encoded = _encoded(fields, program, options, words, form_words)
    return ObjectDPF(
        symbol=fields.string("symbol"),
        encoded=encoded,
        params=fields.integer("params", high=255),
        location=location(fields.value("location"), fields, fields.at("location")),
        source=source,
        variables=variables,
        schedule=fields.optional_object("schedule"),
        report=fields.optional_object("report"),
    )


def _encoded(
    fields: Fields,
    program: MachineProgram,
    options: bytes | None,
    words: Words,
    form_words: Words,
) -> EncodedProgram:
    """The EncodedProgram of the bytes read (the decoders checked them); an in-packet DPF's
    switch form must be its code with local slots, word for word."""
    problem = fields.optional_string("switch_problem")
    if options is None:
        return EncodedProgram(program, None, b"", words)
    packed = pack_code(program.image(), program.profile)
    # The options are what packets carry: their header must name the entry in the DPF's
    # pipeline's pointer (an egress DPF's packets name it in egress_ptr) and its app id.
    if encode_options(program.header(), program.profile, packed=packed).data != options:
        fields.reject(
            f"`{fields.at('in_packet_options')}` is not the header of this DPF's packets "
            f"(app id, {program.pipeline.value} entry {program.entry}, code)"
        )
    if not form_words:
        return EncodedProgram(program, packed, options, words, None, problem or "unknown")
    switch = program.as_switch()
    for placed in switch.bundles:
        key = (placed.stage, placed.pc.index)
        word = form_words.get(key)
        if word is None:
            fields.reject(f"the switch form lacks {stage_name(placed.stage)} bundle {key[1]}")
        if decode_slot(stage_kind(placed.stage), word, program.profile) != placed.bundle:
            fields.reject(
                f"the switch-form word of {stage_name(placed.stage)} bundle {key[1]} is not "
                "its in-packet code"
            )
    return EncodedProgram(program, packed, options, words, form_words)


def _relocation(item: Fields, asm: dict[str, Any]) -> Relocation:
    item.exactly("bundle", "field", "target")
    label = item.string("bundle")
    if label not in asm:
        item.reject(f"`{item.at('bundle')}` names no bundle")
    item.string("field", choices=("next_pc",))
    return Relocation(label, item.string("target"))


def _array(item: Fields, profile: TargetProfile) -> ArrayBinding:
    item.exactly("name", "mapping", "size", "eu", "lane")
    return ArrayBinding(
        item.string("name"),
        item.string("mapping", choices=("direct", "segment")),
        item.integer("size", low=1),
        item.integer("eu", high=profile.num_eus - 1),
        item.integer("lane", high=profile.lanes - 1),
    )


__all__ = ["ObjectError", "object_profile", "parse_stage", "read_object"]
