"""``dpfc``: the command-line entry point, and the conventions every command follows.

The commands: asm (:mod:`.assemble`), disasm (:mod:`.disassemble`), packet and target
(here), check and compile (:mod:`.lang`), opt (:mod:`.opt`), link (:mod:`.link`), run
(:mod:`.run`), test (:mod:`.testing`), deploy (:mod:`.deploy`), p4 (:mod:`.p4`), explain (:mod:`.explain`).

Conventions (one place enforces each: :mod:`.conventions`, :mod:`.errors`, :mod:`.files`):

* results go to stdout, diagnostics and "wrote FILE (N bytes)" lines to stderr;
* exit 0 on success, 1 on any user error — usage errors (an unknown option, a missing
  argument, a value out of its set) included, as DPF0003 — and 2 on an internal compiler
  error only;
* ``--diagnostics-format text|json`` is accepted before the subcommand and on every
  command, and applies to usage errors too;
* ``--target PROFILE`` (a built-in profile or a ``.toml`` file) on every command whose
  work depends on a profile (all but ``run``, whose scenario names its target, ``target``,
  which takes the profile as its argument, and ``explain``);
* ``-`` names standard input for an input file and standard output for ``-o -``;
* a value out of a fixed set, a misspelt option or subcommand gets "did you mean";
* ``--version`` names dpfc and the versions of the libraries its output depends on.
"""

from __future__ import annotations

from pathlib import Path

import click

from dpfc.asm import assemble
from dpfc.cli.assemble import TARGET_HELP, asm_command, profile_of
from dpfc.cli.conventions import TARGET, DpfcGroup, version_option
from dpfc.cli.deploy import deploy_command
from dpfc.cli.disassemble import disasm_command
from dpfc.cli.errors import UserError, handle_errors
from dpfc.cli.explain import explain_command
from dpfc.cli.files import is_stdio, output_option, read_source, write_file, write_with
from dpfc.cli.lang import check_command, compile_command
from dpfc.cli.link import link_command
from dpfc.cli.numbers import number as _number
from dpfc.cli.numbers import parse_stack_text
from dpfc.cli.opt import opt_command
from dpfc.cli.p4 import p4_command
from dpfc.cli.run import run_command
from dpfc.cli.testing import dpftest_command
from dpfc.encoding import StageKind, SwitchVMHeader, slot_bits, slot_bytes
from dpfc.isa import PC
from dpfc.packet import PacketSpec, build_packet, describe_packet, parse_packet, show, write_pcap
from dpfc.target import BUILTIN_PROFILES, DEFAULT_PROFILE, load_profile


def parse_pc_text(text: str) -> PC | None:
    """``@switch:N``, ``@packet:N`` or ``none``."""
    if text.lower() == "none":
        return None
    try:
        return PC.parse(text if text.startswith("@") else "@" + text)
    except ValueError:
        raise UserError(f"a DPF pointer is @switch:N, @packet:N or none, got `{text}`") from None


@click.group(cls=DpfcGroup, context_settings={"help_option_names": ["-h", "--help"]})
@version_option
def main() -> None:
    """dpfc: the compiler toolchain for SwitchVM Data-Plane Filters (DPFs)."""


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
    type=click.Path(dir_okay=False, allow_dash=True),
    default=None,
    help="in-packet code (.dpfasm)",
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
    if code_file is not None:
        program = assemble(read_source(code_file), profile_of(target))
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


@main.command("target")
@click.argument("name", required=False, type=TARGET)
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


main.add_command(asm_command)
main.add_command(disasm_command)
main.add_command(run_command)
main.add_command(dpftest_command)
main.add_command(opt_command)
main.add_command(check_command)
main.add_command(compile_command)
main.add_command(link_command)
main.add_command(deploy_command)
main.add_command(p4_command)
main.add_command(explain_command)


if __name__ == "__main__":  # pragma: no cover
    main()
