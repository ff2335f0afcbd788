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
from dpfc.cli.numbers import number as _number
from dpfc.cli.numbers import parse_stack_text
from dpfc.codegen.emit import format_with_source
from dpfc.codegen.objfile import write_module_object
from dpfc.codegen.report import format_report
from dpfc.ir.printer import format_module as format_ir
from dpfc.lower import lower_program
from dpfc.packet.build import PacketSpec, build_packet
from dpfc.packet.layers import write_pcap
from dpfc.passes.manager import DEFAULT_PIPELINE, run_pipeline
from dpfc.pipeline import CompiledUnit, compile_module
from dpfc.schedule.driver import ScheduleOptions
from dpfc.schedule.explain import format_grid, render_svg
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


EMITS = ["obj", "asm", "header", "pcap", "schedule", "ast", "ir", "opt-ir"]


@click.command("compile")
@click.argument("source", metavar="FILE", type=click.Path(dir_okay=False))
@click.option(
    "--emit",
    type=click.Choice(EMITS),
    default="obj",
    show_default=True,
    help="obj: object file for the linker; asm: assembly; header: the in-packet SwitchVM "
    "options (hex); pcap: one packet per in-packet DPF; schedule: the EU x lane grid; "
    "ast / ir / opt-ir: the front end's output",
)
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="write here, not stdout")
@click.option("--target", "target", default=None, help=TARGET_HELP + " (overrides @target)")
@click.option("--dpf", "only", default=None, help="compile only this DPF of the module")
@click.option(
    "--scheduler",
    type=click.Choice(["z3", "greedy"]),
    default="z3",
    show_default=True,
    help="z3: proven-optimal schedules; greedy: the fast list scheduler",
)
@click.option(
    "--timeout",
    type=click.FloatRange(min=0.1),
    default=20.0,
    show_default=True,
    help="seconds Z3 may spend per DPF before the greedy schedule is used",
)
@click.option("--explain", is_flag=True, help="print each DPF's schedule as an EU x lane grid")
@click.option(
    "--schedule-svg",
    type=click.Path(dir_okay=False),
    default=None,
    help="draw the schedule as an SVG picture (one DPF: this file; several: FILE-<dpf>.svg)",
)
@click.option("--stack", default=None, help="input stack of emitted packets, top first: 7,0x10")
@click.option("--tenant", default="1", show_default=True, help="tenant id of emitted packets")
@click.option("--report/--no-report", default=True, help="print the resource report (Table 4)")
@click.option("--print-after-all", is_flag=True, help="print the IR after every pass on stderr")
@click.option("--time-passes", is_flag=True, help="print the time each pass took on stderr")
@handle_errors
def compile_command(
    source: str,
    emit: str,
    output: str | None,
    target: str | None,
    only: str | None,
    scheduler: str,
    timeout: float,
    explain: bool,
    schedule_svg: str | None,
    stack: str | None,
    tenant: str,
    report: bool,
    print_after_all: bool,
    time_passes: bool,
) -> None:
    """Compile a .dpf file: schedule every DPF onto the target's EUs and emit machine code.

    Reports (the resource report, --explain) go to stdout when -o names the output, and
    to stderr when the output itself goes to stdout."""
    checked = _checked(source, target)
    if emit == "ast":
        _emit_text(format_source(checked.main_module.tree), output)
        return
    module = lower_program(checked)
    if emit != "ir":
        run_pipeline(
            module,
            DEFAULT_PIPELINE,
            print_after_all=sys.stderr if print_after_all else None,
            time_passes=sys.stderr if time_passes else None,
        )
    if emit in ("ir", "opt-ir"):
        _emit_text(format_ir(module), output)
        return
    if only is not None:
        names = [f.name for f in module.functions]
        if only not in names:
            raise UserError(f"no DPF `{only}` in {source} (it has: {', '.join(names)})")
    profile = load_profile(target) if target is not None else None
    options = ScheduleOptions(scheduler=scheduler, timeout_ms=int(timeout * 1000))
    compiled = compile_module(checked, module, profile, options)
    units = [u for u in compiled.units if only is None or u.name == only]
    to_stdout = output is None and emit != "pcap"
    if emit == "pcap" and output is None:
        raise UserError("--emit pcap needs -o FILE")

    def say(text: str) -> None:
        click.echo(text, nl=False, err=to_stdout)

    if report:
        for unit in units:
            say(_summary(unit) + format_report(unit.compiled) + "\n")
    if explain:
        for unit in units:
            say(format_grid(unit.result.schedule, result=unit.result) + "\n")
    if schedule_svg is not None:
        for unit in units:
            path = schedule_svg if len(units) == 1 else _suffixed(schedule_svg, unit.name)
            _write_file(path, render_svg(unit.result.schedule, result=unit.result))
    stack_values = parse_stack_text(stack)
    if emit == "obj":
        _emit_bytes(write_module_object([u.compiled for u in units]), output)
    elif emit == "asm":
        _emit_text("\n".join(format_with_source(u.compiled) for u in units), output)
    elif emit == "schedule":
        text = "\n".join(format_grid(u.result.schedule, result=u.result) for u in units)
        _emit_text(text, output)
    elif emit in ("header", "pcap"):
        packets = [u for u in units if u.compiled.program.placement.value == "packet"]
        if not packets:
            raise UserError(
                "no in-packet DPF to emit: in-switch code is installed, not sent "
                "(use --emit obj for the linker)"
            )
        tenant_id = _number(tenant, "tenant id", (1 << 24) - 1)
        frames = []
        lines = []
        for unit in packets:
            program = unit.compiled.program
            header = program.header(stack_values)
            built = build_packet(PacketSpec(tenant_id, header, b""), program.profile)
            frames.append(built.frame)
            lines.append(f"{unit.name}: {built.options.data.hex()}\n")
        if emit == "pcap":
            assert output is not None
            try:
                write_pcap(output, frames)
            except OSError as exc:
                raise UserError(f"cannot write {output}: {exc.strerror}") from None
        else:
            _emit_text("".join(lines), output)


def _summary(unit: CompiledUnit) -> str:
    result = unit.result
    schedule = result.schedule
    greedy = "none" if result.greedy_eus is None else str(result.greedy_eus)
    return (
        f"{unit.problem.module}.{unit.name}: {schedule.eus_used} EU"
        f"{'s' if schedule.eus_used != 1 else ''} on {unit.problem.profile.name} "
        f"({result.status}; greedy: {greedy}), {schedule.bundle_count()} EU bundles, "
        f"{schedule.selector_count()} selectors, Z3 {result.solve_seconds:.2f} s\n"
    )


def _suffixed(path: str, name: str) -> str:
    p = Path(path)
    return str(p.with_name(f"{p.stem}-{name}{p.suffix or '.svg'}"))


def _write_file(path: str, data: str | bytes) -> None:
    try:
        if isinstance(data, str):
            Path(path).write_text(data, encoding="utf-8")
        else:
            Path(path).write_bytes(data)
    except OSError as exc:
        raise UserError(f"cannot write {path}: {exc.strerror}") from None


def _emit_text(text: str, output: str | None) -> None:
    if output is None:
        click.echo(text, nl=False)
    else:
        _write_file(output, text)


def _emit_bytes(data: bytes, output: str | None) -> None:
    if output is None:
        click.echo(data.decode("utf-8"), nl=False)
    else:
        _write_file(output, data)
