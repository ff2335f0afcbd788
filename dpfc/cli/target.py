"""``dpfc target [NAME|FILE.toml] [--list]``: show a target profile (limits, code-memory
word widths, metadata, steering, hashes), or list the built-in profiles."""

from __future__ import annotations

import click

from dpfc.cli.conventions import TARGET
from dpfc.cli.errors import handle_errors
from dpfc.encoding import StageKind, slot_bits, slot_bytes
from dpfc.target import BUILTIN_PROFILES, MAX_CODE_OPTIONS, load_profile


@click.command("target")
@click.argument("name", required=False, type=TARGET)
@click.option("--list", "list_all", is_flag=True, help="list the built-in profiles")
@handle_errors
def target_command(name: str | None, list_all: bool) -> None:
    """Show a target profile (limits, slot widths, metadata, steering, hashes)."""
    if list_all or name is None:
        width = max(map(len, BUILTIN_PROFILES))
        for profile in BUILTIN_PROFILES.values():
            click.echo(f"{profile.name:{width}}  {profile.description}")
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
    click.echo(f"  shift amounts: {profile.shift_text()}")
    if profile.code_format != 1:  # the built-in profiles' first format goes without saying
        click.echo(f"  in-packet code format: version {profile.code_format} (docs/encoding.md §9)")
    if profile.max_code_options != MAX_CODE_OPTIONS:  # likewise: the header's limit, 15
        click.echo(f"  in-packet code: at most {profile.max_code_options} code option(s)")


__all__ = ["target_command"]
