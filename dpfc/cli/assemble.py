"""``dpfc asm FILE.dpfasm``: assemble, validate against the target, report sizes, write.

The size report (bundles per stage, the Geneve options' bytes, the in-switch code-memory
slots) goes to stdout, or to stderr when ``-o -`` sends the output itself to stdout (none
with ``-q``). The
kind written is ``--emit`` or, with ``auto``, the suffix of ``-o`` (``.pcap``, ``.dpfo``,
``.json``, ``.dpfasm``/``.s``; anything else: raw SwitchVM options). ``FILE`` may be ``-``
(standard input).
"""

from __future__ import annotations

from pathlib import Path

import click

from dpfc.asm import AssembledModule, assemble_module
from dpfc.cli.conventions import TARGET, Choice
from dpfc.cli.errors import UserError, handle_errors, quiet
from dpfc.cli.files import is_stdio, output_option, read_source, write_file, write_with
from dpfc.cli.numbers import number, parse_stack_text
from dpfc.encoding import decode_options, encode_options, slot_bytes, stage_kind
from dpfc.isa import stage_name
from dpfc.machine import EncodedProgram, disassemble_header, encode_program, format_program
from dpfc.objfile import write_object
from dpfc.packet import PacketSpec, build_packet, write_pcap
from dpfc.target import BUILTIN_PROFILES, DEFAULT_PROFILE, TargetProfile, load_profile

_BUILTIN_NAMES = (f"{n} (default)" if n == DEFAULT_PROFILE.name else n for n in BUILTIN_PROFILES)
TARGET_HELP = f"target profile: {', '.join(_BUILTIN_NAMES)}, or a .toml profile file"
EMIT_CHOICES = ["auto", "options", "packet", "pcap", "obj", "asm"]
SUFFIX_KINDS = {".pcap": "pcap", ".dpfo": "obj", ".json": "obj", ".dpfasm": "asm", ".s": "asm"}


def profile_of(target: str | None) -> TargetProfile | None:
    return load_profile(target) if target is not None else None


def size_report(encoded: EncodedProgram, stack: tuple[int, ...]) -> list[str]:
    """Bundles per stage, the Geneve options' bytes and the in-switch code-memory slots."""
    program = encoded.program
    profile = program.profile
    counts: dict[str, int] = {}
    for placed in program.bundles:
        key = stage_name(placed.stage)
        counts[key] = counts.get(key, 0) + 1
    per_stage = ", ".join(f"{k} {v}" for k, v in counts.items())
    bundles = len(program.bundles)
    lines = [
        f"{program.name}: target {profile.name}, placement {program.placement.value}, "
        f"{bundles} bundle{'s' if bundles != 1 else ''} ({per_stage}), entry {program.entry}"
    ]
    options = encode_options(program.header(stack), profile, packed=encoded.packed)
    lines.append(
        f"SwitchVM Geneve options: {len(options.data)} bytes (header {options.header_bytes}, "
        f"code {options.code_bytes} in {options.code_options} option(s), stack {options.stack_bytes}); "
        f"Geneve limit 252"
    )
    slots = program.switch_slots()
    if slots:
        total = sum(len(v) for v in slots.values())
        lines.append(f"in-switch code: {total} code-memory slot(s)")
        for stage, by_slot in sorted(slots.items()):
            kind = stage_kind(stage)
            for slot in sorted(by_slot):
                lines.append(
                    f"  {stage_name(stage)} @{slot}: {slot_bytes(kind, profile)}-byte word"
                )
    return lines


def emit_kind(emit: str, output: str | None) -> str:
    if emit != "auto":
        return emit
    if output is None:
        return "none"
    return SUFFIX_KINDS.get(Path(output).suffix.lower(), "options")


@click.command("asm")
@click.argument("source", type=click.Path(dir_okay=False, allow_dash=True))
@output_option("output file (kind from --emit or suffix; - for stdout)")
@click.option(
    "--emit",
    type=Choice(EMIT_CHOICES),
    default="auto",
    show_default=True,
    help="options: raw Geneve options; packet: one raw frame; pcap; obj: object file for the "
    "linker (dpfc-object v2); asm: canonical text",
)
@click.option("--target", "target", type=TARGET, default=None, help=TARGET_HELP)
@click.option(
    "--tenant", default="1", show_default=True, help="tenant id (Geneve VNI) of the emitted packet"
)
@click.option("--stack", default=None, help="input stack for the packet, top first: e.g. 7,0x10")
@click.option("--payload", default="", help="inner UDP payload text of the packet")
@click.option("--disasm", is_flag=True, help="also print the disassembly of the encoded result")
@click.option(
    "--dpf",
    "dpf",
    default=None,
    metavar="NAME",
    help="of a file with several DPFs (dpfc compile --emit asm), only this one",
)
@handle_errors
def asm_command(
    source: str,
    output: str | None,
    emit: str,
    target: str | None,
    tenant: str,
    stack: str | None,
    payload: str,
    disasm: bool,
    dpf: str | None,
) -> None:
    """Assemble a .dpfasm file (- for stdin); print a size report, write bytes, a pcap or
    an object."""
    kind = emit_kind(emit, output)
    if kind != "none" and output is None:
        raise UserError(f"--emit {kind} needs -o FILE")
    stack_values = parse_stack_text(stack)
    tenant_id = number(tenant, "tenant id", (1 << 24) - 1)
    profile = profile_of(target)
    module = assemble_module(read_source(source), profile).chosen(dpf)
    if len(module.programs) > 1:
        _several(module, kind, output, stack_values)
        return
    program = module.programs[0]
    encoded = encode_program(program)
    header = program.header(stack_values)
    spec = PacketSpec(tenant_id, header, payload.encode())
    built = build_packet(spec, program.profile, packed=encoded.packed)
    to_stderr = is_stdio(output)  # the output itself goes to stdout
    for line in [] if quiet() else size_report(encoded, stack_values):
        click.echo(line, err=to_stderr)
    if output is not None:
        if kind == "options":
            write_file(output, built.options.data)
        elif kind == "packet":
            write_file(output, built.frame)
        elif kind == "pcap":
            write_with(output, lambda path: write_pcap(path, [built.frame]))
        elif kind == "obj":
            write_file(output, write_object(module.object()))
        elif kind == "asm":
            write_file(output, module.text())
    if disasm:
        click.echo("", err=to_stderr)
        decoded = decode_options(built.options.data, program.profile)
        if program.switch_slots():
            text = format_program(program)
        else:
            text = disassemble_header(decoded, program.profile, name=program.name)
        click.echo(text, nl=False, err=to_stderr)


def _several(
    module: AssembledModule, kind: str, output: str | None, stack: tuple[int, ...]
) -> None:
    """A file of several DPFs: the size report of each, and their object or text; bytes
    and packets are of one DPF (DPF0131 names them: choose one with --dpf)."""
    if kind not in ("none", "obj", "asm"):
        module.select(None)
    to_stderr = is_stdio(output)
    for program in [] if quiet() else module.programs:
        for line in size_report(encode_program(program), stack):
            click.echo(line, err=to_stderr)
    if output is not None and kind == "obj":
        write_file(output, write_object(module.object()))
    elif output is not None and kind == "asm":
        write_file(output, module.text())


__all__ = ["EMIT_CHOICES", "TARGET_HELP", "asm_command", "emit_kind", "profile_of", "size_report"]
