"""``dpfc opt FILE.ir``: run optimisation passes over textual IR and print the result.

``-p pass,pass`` picks the passes (default: the default pipeline), ``--print-after-all``
writes the IR after every pass to stderr, ``--time-passes`` a timing table to stderr,
``--list-passes`` the registered passes. The input is verified first and, with
``--verify-each``, after every pass. Exit 1 on a user error (bad IR, unknown pass), 2 on an
internal one (a pass that breaks the IR). ``FILE.ir`` may be ``-`` (standard input), as may
``-o``.

``--target`` is accepted and checked like every command's, but no pass depends on the
profile: the IR is target-independent (that is why ``constfold`` leaves ``hash`` alone,
whose CRC is the profile's), and the profile first matters when scheduling.
"""

from __future__ import annotations

import sys

import click

from dpfc.cli.conventions import TARGET
from dpfc.cli.errors import UserError, handle_errors, report_diagnostics
from dpfc.cli.files import output_option, read_source, write_file
from dpfc.ir import format_module, parse_ir
from dpfc.passes import (
    UnknownPassError,
    describe_passes,
    parse_pipeline,
    run_pipeline,
    verify_input,
)
from dpfc.target import load_profile


@click.command("opt")
@click.argument(
    "source", metavar="FILE.ir", required=False, type=click.Path(dir_okay=False, allow_dash=True)
)
@click.option(
    "-p",
    "--passes",
    "pipeline",
    default=None,
    help="comma-separated passes to run, in order (default: the default pipeline)",
)
@click.option("--print-after-all", is_flag=True, help="print the IR after every pass on stderr")
@click.option("--time-passes", is_flag=True, help="print the time each pass took on stderr")
@click.option("--list-passes", is_flag=True, help="list the passes and the default pipeline")
@click.option("--verify-each", is_flag=True, help="run the IR verifier after every pass")
@output_option("write the IR here (- for stdout)")
@click.option(
    "--target",
    "target",
    type=TARGET,
    default=None,
    help="target profile (checked; no pass depends on it: the IR is target-independent)",
)
@handle_errors
def opt_command(
    source: str | None,
    pipeline: str | None,
    print_after_all: bool,
    time_passes: bool,
    list_passes: bool,
    verify_each: bool,
    output: str | None,
    target: str | None,
) -> None:
    """Optimise textual IR (FILE.ir) with the given passes and print the IR."""
    if target is not None:
        load_profile(target)  # a broken .toml profile is an error here too
    if list_passes:
        click.echo(describe_passes(), nl=False)
        return
    if source is None:
        raise UserError("missing FILE.ir (or --list-passes)")
    try:
        passes = parse_pipeline(pipeline) if pipeline is not None else None
    except UnknownPassError as exc:
        raise UserError(str(exc)) from None
    source_file = read_source(source)
    module = parse_ir(source_file)
    warnings = verify_input(module)
    if warnings:
        report_diagnostics(warnings)
    run_pipeline(
        module,
        passes,
        verify=verify_each,
        print_after_all=sys.stderr if print_after_all else None,
        time_passes=sys.stderr if time_passes else None,
    )
    text = format_module(module)
    if output is None:
        click.echo(text, nl=False)
        return
    write_file(output, text)
