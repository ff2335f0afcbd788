"""``dpfc packet``: craft a SwitchVM packet and explain it.

The packet's SwitchVM header starts from the profile's defaults or, with ``--code FILE``,
from the DPF that file holds — SwitchVM assembly, or a dpfc object of one DPF (told apart by
the object's format, :func:`read_code`; its code bytes used as the object holds them) —;
the options (``--tenant``, ``--app``, ``--dpf``, ``--egress``,
``--stack``, ``--gas``, ``--payload``) then set its fields. The explanation goes to stdout
(stderr when ``-o -`` sends the frame itself there); ``-o`` writes a pcap (``.pcap``,
``.cap``) or the raw frame.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import click

from dpfc.asm import assemble
from dpfc.cli.assemble import TARGET_HELP, profile_of
from dpfc.cli.conventions import TARGET
from dpfc.cli.disassemble import detect_input
from dpfc.cli.errors import UserError, handle_errors
from dpfc.cli.files import (
    display_name,
    is_stdio,
    output_option,
    read_bytes,
    read_source,
    write_file,
    write_with,
)
from dpfc.cli.numbers import number as _number
from dpfc.cli.numbers import parse_stack_text
from dpfc.encoding import PackedCode, SwitchVMHeader
from dpfc.isa import PC
from dpfc.machine import MachineProgram
from dpfc.objfile import read_object
from dpfc.packet import PacketSpec, build_packet, describe_packet, parse_packet, show, write_pcap
from dpfc.target import DEFAULT_PROFILE

CODE_KINDS = "SwitchVM assembly (.dpfasm) or a dpfc object (.dpfo)"
# what detect_input calls the files --code does not take
NOT_CODE = {
    "source": "DPF source (compile it first: dpfc compile FILE --dpf NAME -o NAME.dpfo)",
    "image": "an install image (dpfc link's output)",
    "pcap": "a pcap file",
}


@dataclass(frozen=True)
class Code:
    """The DPF whose code and header a packet starts from."""

    program: MachineProgram
    packed: PackedCode | None  # an object's code as it packed it (None: pack it here)


def read_code(path: str, target: str | None) -> Code:
    """The one DPF of ``--code FILE``: a dpfc object (told by its format, a JSON document of
    ``"format": "dpfc-object"``, or the ``.dpfo`` suffix; read strictly, DPF6202) or SwitchVM
    assembly; any other kind of file is a user error naming what it is and what to give."""
    data = read_bytes(path)
    name = display_name(path)
    kind = detect_input(data, path)
    if kind == "object":
        obj = read_object(data, name, profile_of(target))
        if len(obj.dpfs) != 1:
            listed = ", ".join(d.symbol for d in obj.dpfs)
            raise UserError(
                f"{name} holds {len(obj.dpfs)} DPFs ({listed}); --code takes an object of one "
                "DPF (dpfc compile --dpf NAME -o FILE writes one)"
            )
        (dpf,) = obj.dpfs
        return Code(dpf.program, dpf.encoded.packed)
    if kind in NOT_CODE:
        raise UserError(f"{name} is {NOT_CODE[kind]}, not code: --code takes {CODE_KINDS}")
    if kind != "assembly":
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            raise UserError(
                f"{name} is neither text nor a dpfc object: --code takes {CODE_KINDS}"
            ) from None
    return Code(assemble(read_source(path), profile_of(target)), None)


def parse_pc_text(text: str) -> PC | None:
    """``@switch:N``, ``@packet:N`` or ``none``."""
    if text.lower() == "none":
        return None
    try:
        return PC.parse(text if text.startswith("@") else "@" + text)
    except ValueError:
        raise UserError(f"a DPF pointer is @switch:N, @packet:N or none, got `{text}`") from None


@click.command("packet")
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
    type=click.Path(dir_okay=False, allow_dash=True),
    default=None,
    help="the DPF whose code and header the packet carries: SwitchVM assembly (.dpfasm) or "
    "a dpfc object of one DPF (.dpfo)",
)
@click.option("--stack", default=None, help="stack values, top first: e.g. 7,0x10")
@click.option("--payload", default="", help="inner UDP payload (text)")
@click.option("--gas", default=None, help="recirculation budget carried by the packet")
@click.option("--target", "target", type=TARGET, default=None, help=TARGET_HELP)
@output_option("write a .pcap (or raw frame bytes; - for stdout)")
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
    profile = profile_of(target) or DEFAULT_PROFILE
    header = SwitchVMHeader(gas=profile.default_gas)
    packed = None
    if code_file is not None:
        code = read_code(code_file, target)
        profile, header, packed = code.program.profile, code.program.header(), code.packed
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
        PacketSpec(_number(tenant, "tenant id", (1 << 24) - 1), header, payload.encode()),
        profile,
        packed=packed,
    )
    to_stderr = is_stdio(output)  # the frame itself goes to stdout
    text = describe_packet(parse_packet(built.frame, profile), profile)
    click.echo(text, nl=False, err=to_stderr)
    click.echo(
        f"; frame {len(built.frame)} bytes, SwitchVM options {len(built.options.data)} bytes",
        err=to_stderr,
    )
    if show_layers:
        click.echo(show(built.frame), err=to_stderr)
    if output is not None:
        if Path(output).suffix.lower() in (".pcap", ".cap"):
            write_with(output, lambda path: write_pcap(path, [built.frame]))
        else:
            write_file(output, built.frame)


__all__ = ["packet_command", "parse_pc_text"]
