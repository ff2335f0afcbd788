"""``dpfc check FILE`` and ``dpfc compile FILE``: the DPF language, through the driver.

``check`` loads the file and its imports, resolves the target profile and runs every check
of :mod:`dpfc.sema`, printing ``FILE: ok (N DPFs)`` (warnings, if any, on stderr) or the
errors (exit 1). Both take ``-W SPEC`` (:mod:`dpfc.cli.warning_flags`): which warnings are
shown, and which are errors. ``compile`` first validates every option (numbers, files, combinations)
so that a mistake is reported before any phase runs; then it asks the driver
(:mod:`dpfc.driver`) to stop after the last phase the emitted kinds need — the canonical
source (``ast``), the lowered or optimised IR (``ir``, ``opt-ir``), or machine code —
writes each front-end kind as the driver reports its phase done, and hands the compiled
module to the emitter of each back-end kind asked for (``--emit obj,asm,pcap``: one
compile, several files; :mod:`dpfc.cli.emitters`). ``FILE`` may be ``-`` (standard input; imports
are found from the current directory). While the scheduler runs longer than a second, a
progress line is shown on stderr (:mod:`dpfc.cli.progress`; ``--no-progress`` hides it, and
``-q`` hides it with the resource report and the "wrote" lines).
"""

from __future__ import annotations

import sys
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, replace
from pathlib import Path

import click

from dpfc.cli.conventions import TARGET, Choice, ChoiceList
from dpfc.cli.emitters import EMITTERS, EmitRequest, emit_text, output_paths
from dpfc.cli.errors import (
    UserError,
    diagnostics_format,
    handle_errors,
    quiet,
    report_warnings,
)
from dpfc.cli.files import (
    OutputPath,
    display_name,
    is_stdio,
    read_bytes,
    read_source,
    write_file,
)
from dpfc.cli.numbers import number as _number
from dpfc.cli.numbers import parse_stack_text
from dpfc.cli.options import cache_option
from dpfc.cli.progress import Progress, wanted
from dpfc.cli.validation import validate_units
from dpfc.cli.warning_flags import warning_option
from dpfc.codegen import format_report
from dpfc.diagnostics import SourceFile
from dpfc.driver import (
    Compilation,
    CompiledUnit,
    CompileOptions,
    Phase,
    UnknownDpfError,
    check_source,
    compile_program,
)
from dpfc.ir import format_module as format_ir
from dpfc.objfile import ObjectFile, read_object
from dpfc.schedule import (
    DEFAULT_GUARD_S,
    Budget,
    ScheduleOptions,
    format_grid,
    render_png,
    render_svg,
    require_pillow,
)
from dpfc.sema import CheckedProgram
from dpfc.syntax import format_module as format_source
from dpfc.target import BUILTIN_PROFILES, DEFAULT_PROFILE, TargetProfile, load_profile

TARGET_HELP = (
    f"target profile: {', '.join(BUILTIN_PROFILES)} or a .toml file; wins over @target "
    f"(default: the profile @target names, else {DEFAULT_PROFILE.name})"
)
# The front-end kinds, each written once the driver reports the phase that makes it.
FRONT_END = {"ast": Phase.CHECK, "ir": Phase.LOWER, "opt-ir": Phase.OPTIMISE}
EMITS = [*EMITTERS, *FRONT_END]


def _source_file(source: str) -> str | SourceFile:
    """The path to load, or the text of standard input (``-``)."""
    if is_stdio(source):
        return read_source(source)
    if not Path(source).is_file():
        raise UserError(f"cannot read {source}: no such file")
    return source


def _checked(source: str | SourceFile, profile: TargetProfile | None) -> CheckedProgram:
    checked = check_source(source, profile)
    report_warnings(checked.warnings)
    return checked


def _target(target: str | None) -> TargetProfile | None:
    return load_profile(target) if target is not None else None


@click.command("check")
@click.argument("source", metavar="FILE", type=click.Path(dir_okay=False, allow_dash=True))
@click.option("--target", "target", type=TARGET, default=None, help=TARGET_HELP)
@warning_option
@handle_errors
def check_command(source: str, target: str | None) -> None:
    """Check a .dpf file and the modules it imports (names, types, rules)."""
    profile = _target(target)
    checked = _checked(_source_file(source), profile)
    if not quiet():
        count = len(checked.dpfs)
        click.echo(f"{display_name(source)}: ok ({count} DPF{'s' if count != 1 else ''})")


@dataclass(frozen=True)
class CompileRequest:
    """Every option of ``dpfc compile``, validated."""

    source: str | SourceFile  # a path, or the text of standard input
    emits: tuple[str, ...]  # in the order asked for
    emit_request: EmitRequest  # the stack and tenant of emitted packets
    outputs: dict[str, str | None]  # kind -> file (None: stdout)
    options: CompileOptions
    explain: bool
    schedule_svg: str | None
    report: bool
    schedule_png: str | None = None
    validate: bool = False


def _read_objects(paths: tuple[str, ...], profile: TargetProfile | None) -> tuple[ObjectFile, ...]:
    return tuple(read_object(read_bytes(path), path, profile) for path in paths)


@click.command("compile")
@click.argument("source", metavar="FILE", type=click.Path(dir_okay=False, allow_dash=True))
@click.option(
    "--emit",
    type=ChoiceList(EMITS),
    default="obj",
    show_default=True,
    help="obj: object file for the linker; asm: assembly; header: the in-packet SwitchVM "
    "options (hex); pcap: one packet per in-packet DPF; schedule: the EU x lane grid; "
    "ast / ir / opt-ir: the front end's output. Several, comma-separated, from one "
    "compile: -o STEM writes STEM.dpfo, STEM.s, STEM.hex, STEM.pcap, STEM.schedule.txt, "
    "STEM.canonical.dpf, STEM.ir, STEM.opt.ir",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(allow_dash=True),
    help="write here, not stdout (- for stdout); with several --emit kinds, a stem or a directory",
)
@click.option("--target", "target", type=TARGET, default=None, help=TARGET_HELP)
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
    type=Choice(["z3", "greedy"]),
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
    type=OutputPath(allow_dash=False),
    default=None,
    help="draw the schedule as an SVG picture (one DPF: this file; several: FILE-<dpf>.svg)",
)
@click.option(
    "--schedule-png",
    type=OutputPath(allow_dash=False),
    default=None,
    help="draw the same picture as a PNG, twice the SVG's size (needs Pillow: dpfc[png])",
)
@click.option("--stack", default=None, help="input stack of emitted packets, top first: 7,0x10")
@click.option("--tenant", default="1", show_default=True, help="tenant id of emitted packets")
@click.option("--report/--no-report", default=True, help="print the resource report (Table 4)")
@click.option(
    "--validate",
    is_flag=True,
    help="prove each DPF's machine code equal to its unoptimised IR for all inputs (Z3)",
)
@cache_option()
@click.option("--print-after-all", is_flag=True, help="print the IR after every pass on stderr")
@click.option(
    "--time-passes",
    is_flag=True,
    help="print the time each pass, the scheduler and code generation took on stderr",
)
@click.option(
    "--progress/--no-progress",
    "show_progress",
    default=True,
    help="show a progress line on stderr while scheduling takes over a second, on a "
    "terminal (DPFC_PROGRESS=always|never overrides the terminal test)",
)
@warning_option
@handle_errors
def compile_command(
    source: str,
    emit: tuple[str, ...],
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
    validate: bool,
    use_cache: bool,
    print_after_all: bool,
    time_passes: bool,
    show_progress: bool,
) -> None:
    """Compile a .dpf file: schedule every DPF onto the target's EUs and emit machine code.

    Reports (the resource report, --explain) go to stdout when -o names the output, and
    to stderr when the output itself goes to stdout."""
    # Every option is validated here, before any phase runs.
    outputs = output_paths(emit, output, source)
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
    loaded = _source_file(source)
    progress = None
    hidden = quiet() or not show_progress
    if wanted(sys.stderr, quiet=hidden, diagnostics_format=diagnostics_format()):
        progress = Progress(sys.stderr, rewrite=sys.stderr.isatty())
    options = CompileOptions(
        target=profile,
        schedule=ScheduleOptions(
            scheduler=scheduler,
            budget=Budget().scaled(effort),
            guard_s=timeout or None,
            cache=use_cache,
            progress=progress,
        ),
        only=only,
        objects=_read_objects(bindings, profile),
        print_after_all=sys.stderr if print_after_all else None,
        time_passes=sys.stderr if time_passes else None,
    )
    request = CompileRequest(
        loaded,
        emit,
        emit_request,
        outputs,
        options,
        explain,
        schedule_svg,
        report and not quiet(),
        schedule_png=schedule_png,
        validate=validate,
    )
    run_compile(request)


def run_compile(request: CompileRequest) -> None:
    """The driver's phases up to the last one the kinds of ``request.emits`` need, each
    run once; each front-end kind written when its phase is done, then each back-end
    kind's emitter."""
    options = request.options
    outputs = request.outputs
    back_end = [kind for kind in request.emits if kind in EMITTERS]
    stop_after = Phase.CODE if back_end else max(FRONT_END[kind] for kind in outputs)

    def show(done: Compilation) -> None:
        if done.phase is Phase.CHECK:
            report_warnings(done.checked.warnings)
        for kind, phase in FRONT_END.items():
            if phase is done.phase and kind in outputs:
                emit_text(_front_end_text(done), outputs[kind])

    progress = options.schedule.progress
    showing: AbstractContextManager[object] = nullcontext()
    if back_end and isinstance(progress, Progress):
        showing = progress  # shown while scheduling, erased before any output
    try:
        with showing:
            done = compile_program(
                request.source, replace(options, stop_after=stop_after, observe=show)
            )
    except UnknownDpfError as unknown:
        source = request.source
        name = source.name if isinstance(source, SourceFile) else source
        available = ", ".join(unknown.available) or "none"
        raise UserError(f"no DPF `{unknown.name}` in {name} (it has: {available})") from None
    compiled = done.compiled
    if compiled is None:
        return
    # Reports go to stderr when the output itself goes to stdout.
    to_stdout = any(path is None or is_stdio(path) for path in outputs.values())

    def say(text: str) -> None:
        click.echo(text, nl=False, err=to_stdout)

    units = compiled.units
    if request.report:
        for unit in units:
            say(_summary(unit) + format_report(unit.compiled) + "\n")
    if request.validate:
        validate_units(compiled, say)
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
    for kind in back_end:
        EMITTERS[kind](compiled, replace(request.emit_request, output=outputs[kind]))


def _front_end_text(done: Compilation) -> str:
    """What ``--emit ast``, ``ir`` or ``opt-ir`` writes once ``done.phase`` is done."""
    if done.phase is Phase.CHECK:
        return format_source(done.checked.main_module.tree)
    return format_ir(done.ir())


def _summary(unit: CompiledUnit) -> str:
    result = unit.result
    schedule = result.schedule
    eus = _eus(schedule.eus_used)
    solver = "cached schedule" if result.cached else f"Z3 {result.solve_seconds:.2f} s"
    status = f"{result.status}; greedy: {result.greedy}"
    if result.secondary == "":  # --scheduler greedy: no solver ran, nothing to compare
        solver, status = "no solver", "greedy scheduler: EUs not proven minimal"
    bundles = schedule.bundle_count()
    selectors = schedule.selector_count()
    return (
        f"{unit.problem.module}.{unit.name}: {eus} on {unit.problem.profile.name}, "
        f"{bundles} EU bundle{'s' if bundles != 1 else ''}, "
        f"{selectors} selector{'s' if selectors != 1 else ''}, {solver}\n"
        f"  {status}\n"
    )


def _eus(count: int) -> str:
    return f"{count} EU{'s' if count != 1 else ''}"


def _suffixed(path: str, name: str, suffix: str = ".svg") -> str:
    p = Path(path)
    return str(p.with_name(f"{p.stem}-{name}{p.suffix or suffix}"))
