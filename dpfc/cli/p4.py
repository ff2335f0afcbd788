"""``dpfc p4``: the SwitchVM data plane as P4-16, and BF-RT scripts that load images into it.

* ``dpfc p4 [--target PROFILE] [--arch v1model|tna] [-o DIR]`` generates the program for the
  profile and architecture (docs/p4.md). With ``-o DIR`` it writes ``DIR/switchvm.p4`` and
  ``DIR/switchvm.names.json`` (the name map the control planes use: tables, actions and registers per
  stage, EU and lane) and says ``wrote FILE (N bytes)`` on stderr; without, the program
  goes to stdout. For a profile of code format version 2 (the fit profiles: ``tofino1_fit``,
  ``tofino2_fit``) the program is the stage-structured one (``backends/p4/staged``, docs/p4.md),
  whose tables are named by its stages; ``-o`` then writes ``DIR/switchvm.p4`` only.
* ``dpfc p4 bfrt IMAGE [-o FILE] [--target PROFILE] [--program NAME]`` writes the bfrt_python
  script that installs a linked image on a Tofino running the TNA program (compiled under
  the name ``NAME``, default ``switchvm``), in deployment order, prologs last.

A profile the P4 back end cannot generate, an unreadable image, or an image whose steps a
script cannot express (DPFs on some pipes only) is a user error (exit 1).
"""

from __future__ import annotations

import json
from pathlib import Path

import click

from dpfc.backends.p4 import (
    ARCHITECTURES,
    Layout,
    LayoutError,
    PlanError,
    architecture,
    bfrt_script,
    generate,
    generate_staged,
    staged_program,
)
from dpfc.cli.conventions import TARGET, Choice, SuggestingGroup
from dpfc.cli.errors import UserError, handle_errors
from dpfc.cli.files import OutputPath, output_option, read_bytes, write_file
from dpfc.diagnostics import Diagnostic, DiagnosticError
from dpfc.link import read_image
from dpfc.switch import SwitchRefused
from dpfc.target import DEFAULT_PROFILE, load_profile

PROGRAM = "switchvm"  # the file name, hence the program name p4c and BF-RT use
TOFINO1_STAGES = 12  # more stages: Tofino-2 (t2na.p4)


def _names(layout: Layout) -> str:
    """The name map as JSON: the same for every architecture (stage, EU and lane keys
    become strings, as JSON keys are)."""
    return json.dumps(layout.name_map(), indent=2, sort_keys=True) + "\n"


@click.group("p4", cls=SuggestingGroup, invoke_without_command=True)
@click.option(
    "--target", type=TARGET, default=DEFAULT_PROFILE.name, show_default=True, help="target profile"
)
@click.option(
    "--arch",
    type=Choice(ARCHITECTURES),
    default="v1model",
    show_default=True,
    help="v1model: bmv2's simple_switch; tna: Tofino (tna.p4, t2na.p4 for Tofino-2 profiles)",
)
@click.option(
    "-o",
    "--output",
    type=OutputPath(directory=True, allow_dash=False),
    default=None,
    help="write DIR/switchvm.p4 and DIR/switchvm.names.json (default: the program on stdout)",
)
@click.pass_context
@handle_errors
def p4_command(ctx: click.Context, target: str, arch: str, output: str | None) -> None:
    """Generate the SwitchVM data plane as a P4-16 program (or, with `bfrt`, a BF-RT
    script that installs an image)."""
    if ctx.invoked_subcommand is not None:
        given = [
            name
            for name in ("target", "arch", "output")
            if ctx.get_parameter_source(name) is not click.core.ParameterSource.DEFAULT
        ]
        if given:
            options = ", ".join(f"--{name}" for name in given)
            raise UserError(
                f"{options}: an option of `dpfc p4` itself, not of `dpfc p4 "
                f"{ctx.invoked_subcommand}` (give that one its options after its name)"
            )
        return
    profile = load_profile(target)
    layout: Layout | None = None
    try:
        if staged_program(profile):
            text = generate_staged(
                profile, arch, 2 if profile.hardware_stages > TOFINO1_STAGES else 1
            )
        else:
            text = generate(profile, architecture(arch, profile))
            layout = Layout(profile)
    except (LayoutError, PlanError) as exc:
        raise UserError(f"cannot generate the P4 program for `{profile.name}`: {exc}") from None
    if output is None:
        click.echo(text, nl=False)
        return
    directory = Path(output)
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(f"cannot create {directory}: {exc.strerror}") from None
    write_file(str(directory / f"{PROGRAM}.p4"), text)
    if layout is not None:
        write_file(str(directory / f"{PROGRAM}.names.json"), _names(layout))


@p4_command.command("bfrt")
@click.argument("image_path", metavar="IMAGE", type=click.Path(dir_okay=False, allow_dash=True))
@output_option("write the script here (- for stdout)")
@click.option("--target", type=TARGET, default=None, help="target profile (default: the image's)")
@click.option(
    "--program",
    default=PROGRAM,
    show_default=True,
    help="the name the TNA program was compiled under (bfrt.NAME.pipe...)",
)
@handle_errors
def bfrt_command(image_path: str, output: str | None, target: str | None, program: str) -> None:
    """Write the bfrt_python script that installs a linked image on a Tofino running the
    TNA SwitchVM program: permissions, memory, code, prologs last."""
    if not program.isidentifier():
        raise UserError(f"--program must be a Python identifier, got `{program}`")
    profile = load_profile(target) if target is not None else None
    image = read_image(read_bytes(image_path), image_path, profile)
    try:
        script = bfrt_script(image, profile or image.profile, program)
    except LayoutError as exc:
        raise UserError(
            f"cannot generate the TNA program for `{image.profile.name}`: {exc}"
        ) from None
    except SwitchRefused as refused:
        raise DiagnosticError(Diagnostic(refused.code, refused.message)) from None
    if output is None:
        click.echo(script, nl=False)
        return
    write_file(output, script)


__all__ = ["bfrt_command", "p4_command"]
