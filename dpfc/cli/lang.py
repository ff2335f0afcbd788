"""``dpfc check FILE`` and ``dpfc compile FILE``: the DPF language, through the driver.

``check`` loads the file and its imports, resolves the target profile and runs every check
of :mod:`dpfc.sema`, printing ``FILE: ok (N DPFs)`` (warnings, if any, on stderr) or the
errors (exit 1). ``compile`` first validates every option (numbers, files, combinations)
so that a mistake is reported before any phase runs; then it asks the driver
(:mod:`dpfc.driver`) for as many phases as the emitted kind needs — the canonical source
(``ast``), the lowered or optimised IR (``ir``, ``opt-ir``), or machine code — and hands
the result to the emitter of that kind (:mod:`dpfc.cli.emitters`).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

import click

from dpfc.cli.emitters import EMITTERS, NEEDS_OUTPUT, EmitRequest, emit_text
from dpfc.cli.errors import UserError, handle_errors, report_diagnostics
from dpfc.cli.files import read_bytes, write_file
from dpfc.cli.numbers import number as _number
from dpfc.cli.numbers import parse_stack_text
from dpfc.codegen.report import format_report
from dpfc.driver import (
    CompiledUnit,
    CompileOptions,
    check_source,
    compile_checked,
    lower,
    optimise,
)
from dpfc.ir.printer import format_module as format_ir
from dpfc.objfile.model import ObjectFile
from dpfc.objfile.read import read_object
from dpfc.schedule.driver import DEFAULT_GUARD_S, ScheduleOptions
from dpfc.schedule.explain import format_grid
from dpfc.schedule.limits import Budget
from dpfc.schedule.picture import render_svg
from dpfc.schedule.picture_png import render_png, require_pillow
from dpfc.sema import CheckedProgram
from dpfc.syntax.printer import format_module as format_source
from dpfc.target.profile import TargetProfile, load_profile

TARGET_HELP = (
    "target profile: tofino1, tofino2, bmv2 or a .toml file; wins over @target "
    "(default: the profile @target names, else tofino1)"
)
FRONT_END = ("ast", "ir", "opt-ir")
EMITS = [*EMITTERS, *FRONT_END]


def _source_file(source: str) -> None:
    if not Path(source).is_file():
        raise UserError(f"cannot read {source}: no such file")


def _checked(source: str, profile: TargetProfile | None) -> CheckedProgram:
    checked = check_source(source, profile)
    if checked.warnings:
        report_diagnostics(checked.warnings)
    return checked


def _target(target: str | None) -> TargetProfile | None:
    return load_profile(target) if target is not None else None


@click.command("check")
@click.argument("source", metavar="FILE", type=click.Path(dir_okay=False))
@click.option("--target", "target", default=None, help=TARGET_HELP)
@click.option("-q", "--quiet", is_flag=True, help="print nothing when the file is fine")
@handle_errors
def check_command(source: str, target: str | None, quiet: bool) -> None:
    """Check a .dpf file and the modules it imports (names, types, rules)."""
    profile = _target(target)
    _source_file(source)
    checked = _checked(source, profile)
    if not quiet:
        count = len(checked.dpfs)
        click.echo(f"{source}: ok ({count} DPF{'s' if count != 1 else ''})")


@dataclass(frozen=True)
class CompileRequest:
    """Every option of ``dpfc compile``, validated."""

    source: str
    emit: str
    emit_request: EmitRequest
    options: CompileOptions
    explain: bool
    schedule_svg: str | None
    report: bool
    schedule_png: str | None = None


def _read_objects(paths: tuple[str, ...], profile: TargetProfile | None) -> tuple[ObjectFile, ...]:
    return tuple(read_object(read_bytes(path), path, profile) for path in paths)


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
@click.option("--target", "target", default=None, help=TARGET_HELP)
@click.option("--dpf", "only", default=None, help="compile only this DPF of the module")
@click.option(
    "--bindings",
    "bindings",
    multiple=True,
    type=click.Path(dir_okay=False),
    help="an object whose array placements this module must use (repeatable)",
)
@click.option(
    "--scheduler",
    type=click.Choice(["z3", "greedy"]),
    default="z3",
    show_default=True,
    help="z3: the fewest EUs it can prove or find, never worse than greedy; greedy: the "
    "fast list scheduler alone",
)
@click.option(
    "--effort",
    type=click.FloatRange(min=0.01, max=1000),
    default=1.0,
    show_default=True,
    help="scale Z3's deterministic resource limits (at one effort, the same input always "
    "gives the same output)",
)
@click.option(
    "--timeout",
    type=click.FloatRange(min=0),
    default=DEFAULT_GUARD_S,
    show_default=True,
    help="wall-clock guard in seconds per DPF, all its forms together (0: none); it only stops the compile "
    "(DPF6028), it never changes the schedule",
)
@click.option("--explain", is_flag=True, help="print each DPF's schedule as an EU x lane grid")
@click.option(
    "--schedule-svg",
    type=click.Path(dir_okay=False),
    default=None,
    help="draw the schedule as an SVG picture (one DPF: this file; several: FILE-<dpf>.svg)",
)
@click.option(
    "--schedule-png",
    type=click.Path(dir_okay=False),
    default=None,
    help="draw the same picture as a PNG, twice the SVG's size (needs Pillow: dpfc[png])",
)
@click.option("--stack", default=None, help="input stack of emitted packets, top first: 7,0x10")
@click.option("--tenant", default="1", show_default=True, help="tenant id of emitted packets")
@click.option("--report/--no-report", default=True, help="print the resource report (Table 4)")
@click.option(
    "--cache/--no-cache",
    "use_cache",
    default=True,
    help="reuse schedules of unchanged DPFs ($DPFC_CACHE_DIR, default ~/.cache/dpfc/schedules; "
    "safe to delete)",
)
@click.option("--print-after-all", is_flag=True, help="print the IR after every pass on stderr")
@click.option("--time-passes", is_flag=True, help="print the time each pass took on stderr")
@handle_errors
def compile_command(
    source: str,
    emit: str,
    output: str | None,
    target: str | None,
    only: str | None,
    bindings: tuple[str, ...],
    scheduler: str,
    effort: float,
    timeout: float,
    explain: bool,
    schedule_svg: str | None,
    schedule_png: str | None,
    stack: str | None,
    tenant: str,
    report: bool,
    use_cache: bool,
    print_after_all: bool,
    time_passes: bool,
) -> None:
    """Compile a .dpf file: schedule every DPF onto the target's EUs and emit machine code.

    Reports (the resource report, --explain) go to stdout when -o names the output, and
    to stderr when the output itself goes to stdout."""
    # Every option is validated here, before any phase runs.
    if emit in NEEDS_OUTPUT and output is None:
        raise UserError(f"--emit {emit} needs -o FILE")
    if schedule_svg is not None and schedule_svg.lower().endswith(".png"):
        raise UserError(
            f"--schedule-svg writes SVG, not PNG: use --schedule-png {schedule_svg} for a PNG"
        )
    if schedule_png is not None:
        require_pillow()
    profile = _target(target)
    emit_request = EmitRequest(
        output, parse_stack_text(stack), _number(tenant, "tenant id", (1 << 24) - 1)
    )
    _source_file(source)
    options = CompileOptions(
        target=profile,
        schedule=ScheduleOptions(
            scheduler=scheduler,
            budget=Budget().scaled(effort),
            guard_s=timeout or None,
            cache=use_cache,
        ),
        only=only,
        objects=_read_objects(bindings, profile),
        print_after_all=sys.stderr if print_after_all else None,
        time_passes=sys.stderr if time_passes else None,
    )
    run_compile(
        CompileRequest(
            source,
            emit,
            emit_request,
            options,
            explain,
            schedule_svg,
            report,
            schedule_png=schedule_png,
        )
    )


def run_compile(request: CompileRequest) -> None:
    """The phases ``request.emit`` needs, then its emitter."""
    options = request.options
    checked = _checked(request.source, options.target)
    if request.emit == "ast":
        emit_text(format_source(checked.main_module.tree), request.emit_request.output)
        return
    module = lower(checked)
    if request.emit != "ir":
        optimise(module, options)
    if request.emit in ("ir", "opt-ir"):
        emit_text(format_ir(module), request.emit_request.output)
        return
    names = [f.name for f in module.functions]
    if options.only is not None and options.only not in names:
        raise UserError(
            f"no DPF `{options.only}` in {request.source} (it has: {', '.join(names) or 'none'})"
        )
    compiled = compile_checked(checked, module, options)
    to_stdout = request.emit_request.output is None

    def say(text: str) -> None:
        click.echo(text, nl=False, err=to_stdout)

    units = compiled.units
    if request.report:
        for unit in units:
            say(_summary(unit) + format_report(unit.compiled) + "\n")
    if request.explain:
        for unit in units:
            say(format_grid(unit.result.schedule, result=unit.result) + "\n")
    if request.schedule_svg is not None:
        for unit in units:
            path = request.schedule_svg
            if len(units) != 1:
                path = _suffixed(path, unit.name)
            write_file(path, render_svg(unit.result.schedule, result=unit.result))
    if request.schedule_png is not None:
        for unit in units:
            path = request.schedule_png
            if len(units) != 1:
                path = _suffixed(path, unit.name, ".png")
            write_file(path, render_png(unit.result.schedule, result=unit.result))
    EMITTERS[request.emit](compiled, request.emit_request)


def _summary(unit: CompiledUnit) -> str:
    result = unit.result
    schedule = result.schedule
    greedy = "none" if result.greedy_eus is None else _eus(result.greedy_eus)
    eus = _eus(schedule.eus_used)
    solver = "cached schedule" if result.cached else f"Z3 {result.solve_seconds:.2f} s"
    bundles = schedule.bundle_count()
    selectors = schedule.selector_count()
    return (
        f"{unit.problem.module}.{unit.name}: {eus} on {unit.problem.profile.name}, "
        f"{bundles} EU bundle{'s' if bundles != 1 else ''}, "
        f"{selectors} selector{'s' if selectors != 1 else ''}, {solver}\n"
        f"  {result.status}; greedy: {greedy}\n"
    )


def _eus(count: int) -> str:
    return f"{count} EU{'s' if count != 1 else ''}"


def _suffixed(path: str, name: str, suffix: str = ".svg") -> str:
    p = Path(path)
    return str(p.with_name(f"{p.stem}-{name}{p.suffix or suffix}"))
