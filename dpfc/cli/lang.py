"""``dpfc check FILE`` and ``dpfc compile FILE --emit ast|ir|opt-ir``: the DPF language.

``check`` loads the file and its imports, runs every check of :mod:`dpfc.sema` and prints
``FILE: ok (N DPFs)`` (warnings, if any, on stderr) or the errors (exit 1). ``compile``
checks, then prints the canonical source (``ast``), the lowered SSA IR (``ir``) or the IR
after the default pass pipeline (``opt-ir``, the default), to stdout or ``-o FILE``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from dpfc.cli.errors import UserError, handle_errors, report_diagnostics
from dpfc.ir.printer import format_module as format_ir
from dpfc.lower import lower_program
from dpfc.passes.manager import DEFAULT_PIPELINE, run_pipeline
from dpfc.sema import CheckedProgram, check_file
from dpfc.syntax.printer import format_module as format_source
from dpfc.target.profile import TargetProfile, load_profile

TARGET_HELP = "default target profile of DPFs without @target: tofino1, tofino2, bmv2 or a .toml"


def _checked(source: str, target: str | None) -> CheckedProgram:
    if not Path(source).is_file():
        raise UserError(f"cannot read {source}: no such file")
    profile: TargetProfile | None = load_profile(target) if target is not None else None
    checked = check_file(source, profile)
    if checked.warnings:
        report_diagnostics(checked.warnings)
    return checked


@click.command("check")
@click.argument("source", metavar="FILE", type=click.Path(dir_okay=False))
@click.option("--target", "target", default=None, help=TARGET_HELP)
@click.option("-q", "--quiet", is_flag=True, help="print nothing when the file is fine")
@handle_errors
def check_command(source: str, target: str | None, quiet: bool) -> None:
    """Check a .dpf file and the modules it imports (names, types, rules)."""
    checked = _checked(source, target)
    if not quiet:
        count = len(checked.dpfs)
        click.echo(f"{source}: ok ({count} DPF{'s' if count != 1 else ''})")


@click.command("compile")
@click.argument("source", metavar="FILE", type=click.Path(dir_okay=False))
@click.option(
    "--emit",
    type=click.Choice(["ast", "ir", "opt-ir"]),
    default="opt-ir",
    show_default=True,
    help="ast: canonical source; ir: lowered SSA IR; opt-ir: after the default pipeline",
)
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="write here, not stdout")
@click.option("--target", "target", default=None, help=TARGET_HELP)
@click.option("--print-after-all", is_flag=True, help="print the IR after every pass on stderr")
@click.option("--time-passes", is_flag=True, help="print the time each pass took on stderr")
@handle_errors
def compile_command(
    source: str,
    emit: str,
    output: str | None,
    target: str | None,
    print_after_all: bool,
    time_passes: bool,
) -> None:
    """Compile a .dpf file to its canonical source, SSA IR or optimised IR."""
    checked = _checked(source, target)
    if emit == "ast":
        text = format_source(checked.main_module.tree)
    else:
        module = lower_program(checked)
        if emit == "opt-ir":
            run_pipeline(
                module,
                DEFAULT_PIPELINE,
                print_after_all=sys.stderr if print_after_all else None,
                time_passes=sys.stderr if time_passes else None,
            )
        text = format_ir(module)
    if output is None:
        click.echo(text, nl=False)
        return
    try:
        Path(output).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UserError(f"cannot write {output}: {exc.strerror}") from None
