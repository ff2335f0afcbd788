"""``dpfc`` command-line entry point: asm, disasm, packet, target (the others: check,
compile in :mod:`.lang`, link in :mod:`.link`, run in :mod:`.run`, opt in :mod:`.opt`,
deploy in :mod:`.deploy`, p4 in :mod:`.p4`).

Conventions: results go to stdout, diagnostics to stderr; exit 0 on success, 1 on a user
error, 2 on an internal compiler error; ``-o FILE`` names the output, ``--target PROFILE``
a built-in profile or a TOML profile file.
"""

from __future__ import annotations

from pathlib import Path

import click

from dpfc import __version__
from dpfc.asm import assemble
from dpfc.cli.deploy import deploy_command
from dpfc.cli.errors import UserError, handle_errors
from dpfc.cli.files import read_bytes, write_file
from dpfc.cli.lang import check_command, compile_command
from dpfc.cli.link import link_command
from dpfc.cli.numbers import number as _number
from dpfc.cli.numbers import parse_stack_text
from dpfc.cli.opt import opt_command
from dpfc.cli.p4 import p4_command
from dpfc.cli.run import run_command
from dpfc.diagnostics import SourceFile
from dpfc.encoding.errors import DecodeError
from dpfc.encoding.header import OPTION_CLASS, SwitchVMHeader, decode_options, encode_options
from dpfc.encoding.words import StageKind, slot_bits, slot_bytes, stage_kind
from dpfc.isa.bundle import PC, stage_name
from dpfc.link import MAGIC as IMAGE_MAGIC
from dpfc.link import format_image, image_id, read_image
from dpfc.machine import EncodedProgram, disassemble_header, encode_program
from dpfc.machine.printer import format_program
from dpfc.objfile import ObjectFile, format_object, read_object, write_object
from dpfc.packet.build import PacketSpec, build_packet, describe_packet
from dpfc.packet.layers import read_pcap, show, write_pcap
from dpfc.packet.wire import parse_packet
from dpfc.target.profile import BUILTIN_PROFILES, TargetProfile, load_profile

TARGET_HELP = "target profile: tofino1 (default), tofino2, bmv2, or a .toml profile file"
EMIT_CHOICES = ["auto", "options", "packet", "pcap", "obj", "asm"]
PCAP_MAGICS = (
    b"\xa1\xb2\xc3\xd4",
    b"\xd4\xc3\xb2\xa1",
    b"\xa1\xb2\x3c\x4d",
    b"\x4d\x3c\xb2\xa1",
    b"\x0a\x0d\x0d\x0a",
)


def _profile(target: str | None) -> TargetProfile | None:
    return load_profile(target) if target is not None else None


def _read_text(path: str) -> SourceFile:
    try:
        return SourceFile(path, Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"cannot read {path}: {getattr(exc, 'strerror', None) or exc}") from None


def parse_pc_text(text: str) -> PC | None:
    """``@switch:N``, ``@packet:N`` or ``none``."""
    if text.lower() == "none":
        return None
    try:
        return PC.parse(text if text.startswith("@") else "@" + text)
    except ValueError:
        raise UserError(f"a DPF pointer is @switch:N, @packet:N or none, got `{text}`") from None


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="dpfc")
@click.option(
    "--diagnostics-format",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="how errors are printed on stderr",
)
@click.pass_context
def main(ctx: click.Context, diagnostics_format: str) -> None:
    """dpfc: the compiler toolchain for SwitchVM Data-Plane Filters (DPFs)."""
    ctx.obj = {"diagnostics_format": diagnostics_format}


def _size_report(encoded: EncodedProgram, stack: tuple[int, ...]) -> list[str]:
    program = encoded.program
    profile = program.profile
    counts: dict[str, int] = {}
    for placed in program.bundles:
        key = stage_name(placed.stage)
        counts[key] = counts.get(key, 0) + 1
    per_stage = ", ".join(f"{k} {v}" for k, v in counts.items())
    lines = [
        f"{program.name}: target {profile.name}, placement {program.placement.value}, "
        f"{len(program.bundles)} bundles ({per_stage}), entry {program.entry}"
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


def _emit_kind(emit: str, output: str | None) -> str:
    if emit != "auto":
        return emit
    if output is None:
        return "none"
    suffix = Path(output).suffix.lower()
    kinds = {".pcap": "pcap", ".dpfo": "obj", ".json": "obj", ".dpfasm": "asm", ".s": "asm"}
    return kinds.get(suffix, "options")


@main.command("asm")
@click.argument("source", type=click.Path(dir_okay=False))
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False),
    help="output file (kind from --emit or suffix)",
)
@click.option(
    "--emit",
    type=click.Choice(EMIT_CHOICES),
    default="auto",
    show_default=True,
    help="options: raw Geneve options; packet: one raw frame; pcap; obj: object file for the "
    "linker (dpfc-object v2); asm: canonical text",
)
@click.option("--target", "target", default=None, help=TARGET_HELP)
@click.option(
    "--tenant", default="1", show_default=True, help="tenant id (Geneve VNI) of the emitted packet"
)
@click.option("--stack", default=None, help="input stack for the packet, top first: e.g. 7,0x10")
@click.option("--payload", default="", help="inner UDP payload text of the packet")
@click.option("--disasm", is_flag=True, help="also print the disassembly of the encoded result")
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
) -> None:
    """Assemble a .dpfasm file; print a size report, write bytes, a pcap or an object."""
    kind = _emit_kind(emit, output)
    if kind != "none" and output is None:
        raise UserError(f"--emit {kind} needs -o FILE")
    stack_values = parse_stack_text(stack)
    tenant_id = _number(tenant, "tenant id", (1 << 24) - 1)
    profile = _profile(target)
    program = assemble(_read_text(source), profile)
    encoded = encode_program(program)
    header = program.header(stack_values)
    spec = PacketSpec(tenant_id, header, payload.encode())
    built = build_packet(spec, program.profile, packed=encoded.packed)
    for line in _size_report(encoded, stack_values):
        click.echo(line)
    if output is not None:
        if kind == "options":
            write_file(output, built.options.data)
        elif kind == "packet":
            write_file(output, built.frame)
        elif kind == "pcap":
            write_pcap(output, [built.frame])
        elif kind == "obj":
            write_file(output, write_object(ObjectFile.of_program(encoded)))
        elif kind == "asm":
            write_file(output, format_program(program))
        size = Path(output).stat().st_size
        click.echo(f"wrote {output} ({kind}, {size} bytes)")
    if disasm:
        click.echo("")
        decoded = decode_options(built.options.data, program.profile)
        if program.switch_slots():
            click.echo(format_program(program), nl=False)
        else:
            click.echo(disassemble_header(decoded, program.profile, name=program.name), nl=False)


def _detect_input(data: bytes, path: str) -> str:
    if data[: len(IMAGE_MAGIC)] == IMAGE_MAGIC or Path(path).suffix.lower() == ".dpfimg":
        return "image"
    if data[:4] in PCAP_MAGICS or Path(path).suffix.lower() in (".pcap", ".pcapng", ".cap"):
        return "pcap"
    if data[:1] == b"{" or Path(path).suffix.lower() in (".json", ".dpfo"):
        return "object"
    if data[:2] == OPTION_CLASS.to_bytes(2, "big"):
        return "options"
    return "packet"


@main.command("disasm")
@click.argument("input_file", metavar="FILE", type=click.Path(dir_okay=False))
@click.option(
    "--input",
    "input_kind",
    type=click.Choice(["auto", "pcap", "packet", "options", "object", "image"]),
    default="auto",
    show_default=True,
    help="what FILE holds (auto: pcap magic, an install image, a dpfc object, SwitchVM "
    "options, else a raw frame)",
)
@click.option("--target", "target", default=None, help=TARGET_HELP)
@click.option(
    "-o", "--output", type=click.Path(dir_okay=False), help="write the text here instead of stdout"
)
@click.option(
    "--source",
    "with_source",
    is_flag=True,
    help="FILE is a dpfc object: print its assembly with each line's source line",
)
@handle_errors
def disasm_command(
    input_file: str, input_kind: str, target: str | None, output: str | None, with_source: bool
) -> None:
    """Explain SwitchVM bytes: a pcap, a raw frame, raw Geneve options, an object file or
    an install image; with --source, an object annotated with the source lines."""
    profile = _profile(target) or BUILTIN_PROFILES["tofino1"]
    data = read_bytes(input_file)
    kind = _detect_input(data, input_file) if input_kind == "auto" else input_kind
    if with_source:
        kind = "object"
    failures = 0
    chunks: list[str] = []
    if kind == "pcap":
        try:
            frames = read_pcap(input_file)
        except (OSError, ValueError) as exc:
            raise UserError(f"{input_file}: {exc}") from None
        for number, frame in enumerate(frames, start=1):
            try:
                text = describe_packet(parse_packet(frame, profile), profile)
            except DecodeError as exc:
                failures += 1
                click.echo(
                    f"{input_file}: packet {number}: error[{exc.code}]: malformed packet at byte "
                    f"{exc.offset}: {exc.message}",
                    err=True,
                )
                continue
            chunks.append(f"; ---- packet {number} of {len(frames)} ----\n{text}")
        if not frames:
            chunks.append("; the pcap file holds no packets\n")
    elif kind == "packet":
        chunks.append(describe_packet(parse_packet(data, profile), profile))
    elif kind == "image":
        chunks.append(format_image(read_image(data, input_file, _profile(target)), image_id(data)))
    elif kind == "options":
        header: SwitchVMHeader = decode_options(data, profile)
        chunks.append(disassemble_header(header, profile))
    else:
        obj = read_object(data, input_file, _profile(target))
        chunks.append(format_object(obj, with_source=with_source))
    text = "\n".join(chunks)
    if output is not None:
        write_file(output, text)
    else:
        click.echo(text, nl=False)
    if failures:
        raise SystemExit(1)


@main.command("packet")
@click.option("--tenant", required=True, help="tenant id, carried in the Geneve VNI (24 bits)")
@click.option(
    "--app", "app_id", default=None, help="app-id token (32 bits); default: the code's .app or 0"
)
@click.option("--dpf", "dpf_ptr", default=None, help="DPF pointer: @switch:N, @packet:N or none")
@click.option(
    "--egress",
    "egress_ptr",
    default=None,
    help="egress pointer (the DPF run as the packet leaves): @switch:N, @packet:N or none",
)
@click.option(
    "--code",
    "code_file",
    type=click.Path(dir_okay=False),
    default=None,
    help="in-packet code (.dpfasm)",
)
@click.option("--stack", default=None, help="stack values, top first: e.g. 7,0x10")
@click.option("--payload", default="", help="inner UDP payload (text)")
@click.option("--gas", default=None, help="recirculation budget carried by the packet")
@click.option("--target", "target", default=None, help=TARGET_HELP)
@click.option(
    "-o", "--output", type=click.Path(dir_okay=False), help="write a .pcap (or raw frame bytes)"
)
@click.option("--show", "show_layers", is_flag=True, help="print scapy's dissection of the packet")
@handle_errors
def packet_command(
    tenant: str,
    app_id: str | None,
    dpf_ptr: str | None,
    egress_ptr: str | None,
    code_file: str | None,
    stack: str | None,
    payload: str,
    gas: str | None,
    target: str | None,
    output: str | None,
    show_layers: bool,
) -> None:
    """Craft a SwitchVM packet and explain it (the code of an ``.pipeline egress`` file is
    named by the egress pointer)."""
    profile = _profile(target) or BUILTIN_PROFILES["tofino1"]
    header = SwitchVMHeader(gas=profile.default_gas)
    if code_file is not None:
        program = assemble(_read_text(code_file), _profile(target))
        profile = program.profile
        header = program.header()
    fields: dict[str, object] = {"stack": parse_stack_text(stack)}
    if app_id is not None:
        fields["app_id"] = _number(app_id, "app id", 0xFFFF_FFFF)
    if dpf_ptr is not None:
        fields["dpf_ptr"] = parse_pc_text(dpf_ptr)
    if egress_ptr is not None:
        fields["egress_ptr"] = parse_pc_text(egress_ptr)
    if gas is not None:
        fields["gas"] = _number(gas, "gas", profile.max_gas)
    header = SwitchVMHeader(**{**header.__dict__, **fields})
    built = build_packet(
        PacketSpec(_number(tenant, "tenant id", (1 << 24) - 1), header, payload.encode()), profile
    )
    click.echo(describe_packet(parse_packet(built.frame, profile), profile), nl=False)
    click.echo(
        f"; frame {len(built.frame)} bytes, SwitchVM options {len(built.options.data)} bytes"
    )
    if show_layers:
        click.echo(show(built.frame))
    if output is not None:
        if Path(output).suffix.lower() in (".pcap", ".cap"):
            write_pcap(output, [built.frame])
        else:
            write_file(output, built.frame)
        click.echo(f"wrote {output}")


@main.command("target")
@click.argument("name", required=False)
@click.option("--list", "list_all", is_flag=True, help="list the built-in profiles")
@handle_errors
def target_command(name: str | None, list_all: bool) -> None:
    """Show a target profile (limits, slot widths, metadata, steering, hashes)."""
    if list_all or name is None:
        for profile in BUILTIN_PROFILES.values():
            click.echo(f"{profile.name:8} {profile.description}")
        return
    profile = load_profile(name)
    click.echo(profile.summary())
    click.echo(
        f"  timing: branch operands = {profile.branch_operands.value}, memory address = {profile.memory_address.value}"
    )
    click.echo(
        f"  immediates per bundle {profile.immediates_per_bundle}, in-packet bundles per stage {profile.packet_bundles_per_stage}"
    )
    for kind in StageKind:
        click.echo(
            f"  {kind.value} code-memory word: {slot_bits(kind, profile)} bits ({slot_bytes(kind, profile)} bytes)"
        )
    click.echo("  metadata: " + ", ".join(f"{m.index}={m.name}" for m in profile.metadata))
    click.echo(
        "  steering: "
        + ", ".join(s.name + (" (privileged)" if s.privileged else "") for s in profile.steering)
    )
    click.echo("  hash per lane: " + ", ".join(profile.hash_functions[: profile.lanes]))


main.add_command(run_command)
main.add_command(opt_command)
main.add_command(check_command)
main.add_command(compile_command)
main.add_command(link_command)
main.add_command(deploy_command)
main.add_command(p4_command)


if __name__ == "__main__":  # pragma: no cover
    main()
