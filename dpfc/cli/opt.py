"""``dpfc opt FILE.ir``: run optimisation passes over textual IR and print the result.

``-p pass,pass`` picks the passes (default: the default pipeline), ``--print-after-all``
writes the IR after every pass to stderr, ``--time-passes`` a timing table to stderr,
``--list-passes`` the registered passes. The input is verified first (when the verifier is
present) and, with ``--verify-each``, after every pass. Exit 1 on a user error (bad IR,
unknown pass), 2 on an internal one (a pass that breaks the IR).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from pathlib import Path

import click

from dpfc.cli.errors import UserError, handle_errors
from dpfc.diagnostics import SourceFile
from dpfc.ir.core import Module
from dpfc.ir.printer import format_module
from dpfc.passes import (
    UnknownPassError,
    describe_passes,
    parse_pipeline,
    run_pipeline,
    verify_input,
)


def _parser() -> Callable[[SourceFile], Module]:
    # dpfc.ir.parser is the inverse of the printer; imported lazily so `--list-passes`
    # works on its own.
    try:
        module = importlib.import_module("dpfc.ir.parser")
    except ImportError:
        raise UserError("reading textual IR needs dpfc.ir.parser, which is missing") from None
    parse: Callable[[SourceFile], Module] = module.parse_ir
    return parse


def _read(path: str) -> SourceFile:
    try:
        return SourceFile(path, Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"cannot read {path}: {getattr(exc, 'strerror', None) or exc}") from None


@click.command("opt")
@click.argument("source", metavar="FILE.ir", required=False, type=click.Path(dir_okay=False))
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
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="write the IR here")
@handle_errors
def opt_command(
    source: str | None,
    pipeline: str | None,
    print_after_all: bool,
    time_passes: bool,
    list_passes: bool,
    verify_each: bool,
    output: str | None,
) -> None:
    """Optimise textual IR (FILE.ir) with the given passes and print the IR."""
    if list_passes:
        click.echo(describe_passes(), nl=False)
        return
    if source is None:
        raise UserError("missing FILE.ir (or --list-passes)")
    try:
        passes = parse_pipeline(pipeline) if pipeline is not None else None
    except UnknownPassError as exc:
        raise UserError(str(exc)) from None
    source_file = _read(source)
    module = _parser()(source_file)
    verify_input(module)
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
    try:
        Path(output).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UserError(f"cannot write {output}: {exc.strerror}") from None
