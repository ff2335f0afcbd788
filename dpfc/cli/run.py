"""``dpfc run SCENARIO``: build a simulated network from a scenario file, run it, report.

The command loads the scenario (and the frames of ``--pcap``; the ``.dpf`` files it names
are scheduled through the schedule cache ``dpfc compile`` uses, ``--no-cache`` turns it
off), chooses the interpreter or the JIT for the passes, runs the network up to
``--max-passes``, prints the report of :mod:`.scenario_report` — or, with ``--summary``, the
few lines of :mod:`.run_summary` however many packets ran — (text, or JSON with ``--json``)
and then writes the requested files (traces, one pcap per host). Traces, on stdout under
each pass or in ``--trace-file``, are printed by :func:`dpfc.backends.sim.render_trace`
with the source of the scenario's code
(:meth:`~dpfc.backends.scenario.Scenario.trace_sources`): each stage's DPF and bundle, the
source line of each instruction, the variables the registers hold. The same scenario gives
byte-identical output (seeded RNG, simulated clock), but for the wall-clock seconds of
``--summary``.

The warnings of the DPF-language sources the scenario compiles are reported on stderr
before the run, as ``dpfc compile`` reports them (``-W SPEC``: :mod:`.warning_flags`).

Errors: a scenario error prints ``file: error[DPF41xx]: key.path: message`` (with a source
excerpt when the position is known, i.e. for syntax errors); a refused control-plane call
its DPF40xx code; assembly errors the assembler's diagnostics. All exit 1.
"""

from __future__ import annotations

import functools
import json
import sys
import time
from pathlib import Path
from typing import Any

import click

from dpfc.backends import jit as native
from dpfc.backends.scenario import Scenario, ScenarioError, load_scenario
from dpfc.backends.sim import Network, render_trace
from dpfc.catalog import codes
from dpfc.cli.errors import (
    UserError,
    diagnostics_format,
    handle_errors,
    report_diagnostics,
    report_warnings,
)
from dpfc.cli.files import OutputPath, write_file, write_with
from dpfc.cli.options import cache_option
from dpfc.cli.run_summary import render_summary, summarize
from dpfc.cli.scenario_report import collect, render_text
from dpfc.cli.warning_flags import warning_option
from dpfc.diagnostics import Diagnostic, SourceFile
from dpfc.packet import write_pcap

MAX_PASSES = 1_000_000
LARGE_RUN = 10_000  # frames queued at the start from which the JIT runs the passes


def report_scenario_error(exc: ScenarioError) -> None:
    """``file: error[CODE]: message``; with a caret excerpt when the line is known."""
    if exc.line is not None:
        try:
            source = SourceFile(exc.file, Path(exc.file).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError):
            source = None
        if source is not None:
            span = source.span_at(exc.line, exc.column)
            report_diagnostics([Diagnostic(exc.code, exc.message, span)])
            return
    if diagnostics_format() == "json":
        entry: dict[str, Any] = {
            "code": exc.code,
            "severity": "error",
            "message": exc.message,
            "span": {"file": exc.file, "line": None, "column": None},
            "notes": [],
            "hint": None,
        }
        click.echo(json.dumps([entry], indent=2), err=True)
        return
    click.echo(f"{exc.file}: error[{exc.code}]: {exc.message}", err=True)


def _use_jit(network: Network, *, asked: bool) -> None:
    """Run every switch's passes with the llvmlite JIT (traced passes stay the
    interpreter's); where llvmlite cannot run, say so when --jit asked for it."""
    reason = native.missing()
    if reason is not None:
        if asked:
            click.echo(f"dpfc run: --jit: {reason}; the interpreter runs the passes", err=True)
        return
    for name, switch in network.switches.items():
        engine = native.JitSwitch(switch)
        network.set_processor(name, engine.process, batch=engine.run_frames)


def _write_traces(path: str, scenario: Scenario) -> None:
    sources = scenario.trace_sources()
    records = scenario.network.records
    text = "".join(render_trace(r.result.trace, sources) for r in records if r.result.trace)
    write_file(path, text)


def _pcap_to(path: str, *, frames: list[bytes]) -> None:
    write_pcap(path, frames)


def _pcap_paths(directory: str, network: Network) -> dict[str, str]:
    """Host -> the pcap it gets in ``directory`` (created here, so that a directory that
    cannot be is reported before the report is printed)."""
    out = Path(directory)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(f"cannot write to {directory}: {exc.strerror}") from None
    return {name: str(out / f"{name}.pcap") for name in network.hosts}


@click.command("run")
@click.argument("scenario_file", metavar="SCENARIO", type=click.Path(dir_okay=False))
@click.option("--pcap", type=click.Path(dir_okay=False), help="also send the frames of this pcap")
@click.option("--from", "from_host", metavar="HOST", help="the host that sends the --pcap frames")
@click.option("--trace", is_flag=True, help="print the per-pass execution traces")
@click.option(
    "--trace-file", type=OutputPath(allow_dash=False), help="write the traces to FILE instead"
)
@click.option(
    "--out-dir",
    type=OutputPath(directory=True, allow_dash=False),
    help="write one pcap per host (HOST.pcap) with the frames it received",
)
@click.option("--json", "as_json", is_flag=True, help="print a machine-readable report")
@click.option(
    "--summary",
    is_flag=True,
    help="instead of every packet's passes, print a summary: totals, verdicts, frames in "
    "and out per port, faults, per-tenant counters, time (also with --json)",
)
@cache_option()
@click.option(
    "--jit/--no-jit",
    default=None,
    help=(
        "run the switches' passes as native code (llvmlite), with the same results; "
        f"default: when the scenario queues {LARGE_RUN:,} frames or more"
    ),
)
@click.option(
    "--max-passes",
    type=click.IntRange(min=1),
    default=MAX_PASSES,
    show_default=True,
    help="stop the network after this many pipe passes",
)
@warning_option
@handle_errors
def run_command(
    scenario_file: str,
    pcap: str | None,
    from_host: str | None,
    trace: bool,
    trace_file: str | None,
    out_dir: str | None,
    as_json: bool,
    summary: bool,
    use_cache: bool,
    jit: bool | None,
    max_passes: int,
) -> None:
    """Run a scenario (.toml or .json) in the simulator; report what came out where."""
    if (pcap is None) != (from_host is None):
        raise UserError("--pcap FILE and --from HOST go together")
    if summary and trace:
        raise UserError(
            "--trace prints each pass under its packet: with --summary, use --trace-file"
        )
    started = time.perf_counter()
    try:
        scenario = load_scenario(scenario_file, cache=use_cache)
    except ScenarioError as exc:
        report_scenario_error(exc)
        sys.exit(1)
    report_warnings(scenario.warnings)
    if pcap is not None and from_host is not None:
        try:
            scenario.send_pcap(pcap, from_host)
        except ScenarioError as exc:
            raise UserError(f"--pcap {pcap} --from {from_host}: {exc.message}") from None
    network = scenario.network
    if jit if jit is not None else len(network.queue) >= LARGE_RUN:
        _use_jit(network, asked=jit is True)
    tracing = trace or trace_file is not None
    loaded = time.perf_counter()
    network.run(trace=tracing, max_passes=max_passes)
    ran = time.perf_counter()
    settled = not network.queue
    if summary:
        report = summarize(
            scenario, settled=settled, load_seconds=loaded - started, run_seconds=ran - loaded
        )
    else:
        report = collect(scenario, settled=settled, trace=trace and trace_file is None)
    pcaps = _pcap_paths(out_dir, network) if out_dir is not None else {}
    if as_json:
        report["pcaps"] = list(pcaps.values())
        click.echo(json.dumps(report, indent=2))
    elif summary:
        click.echo(render_summary(report), nl=False)
    else:
        click.echo(render_text(report, trace=trace and trace_file is None), nl=False)
    # Files after the report: their "wrote" lines (stderr) follow it on a terminal.
    if trace_file is not None:
        _write_traces(trace_file, scenario)
    for name, path in pcaps.items():
        write_with(path, functools.partial(_pcap_to, frames=list(network.hosts[name].received)))
    if not settled:
        click.echo(
            f"{scenario_file}: error[{codes.SCENARIO_NOT_SETTLED}]: the network did not settle within {max_passes} "
            f"passes ({len(network.queue)} frames still queued; --max-passes raises the limit)",
            err=True,
        )
        sys.exit(1)
