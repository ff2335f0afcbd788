"""``dpfc test FILE...``: run test files of DPFs and say which expectations hold.

Each test file (docs/testing.md; a directory: its ``*.toml`` files, subdirectories too) is read, every case
built afresh and run on the simulator (the interpreter; ``--jit``: its passes as native
code, as ``dpfc run --jit``), or on a switch (``--switch bmv2://HOST:PORT`` with
``--packet-in``, through the bmv2 control ``dpfc deploy`` uses; ``sim://``: a simulated
switch behind the same control protocol). A line per case (``PASS``, ``FAIL`` with a diff
per mismatch, ``ERROR``, ``SKIP``) and a summary go to stdout, or with ``--json`` one JSON
document; ``--junit-xml FILE`` also writes JUnit XML. ``--trace`` prints the traces of the
failing cases (``--trace-all``: of every case), as ``dpfc run --trace`` prints them.

Exit 0 when every case passed (or was skipped), 1 when one failed, could not run, or a file
could not be read (its error printed like a scenario's: ``file:line:col: error[DPF41xx]``);
2 only for an internal error.
"""

from __future__ import annotations

import socket
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from urllib.parse import urlparse

import click

from dpfc.backends import jit as native
from dpfc.backends.p4 import ToolchainMissing, find_toolchain
from dpfc.backends.scenario import ScenarioError
from dpfc.backends.testing import (
    Bmv2Device,
    CaseResult,
    Device,
    SimDevice,
    Summary,
    Target,
    TestFile,
    junit_xml,
    load_test_file,
    render_case,
    render_summary,
    results_json,
    run_case,
)
from dpfc.cli.errors import UserError, handle_errors, quiet, report_diagnostics
from dpfc.cli.files import write_file
from dpfc.cli.run import report_scenario_error
from dpfc.diagnostics import DiagnosticError
from dpfc.target import TargetProfile

Run = tuple[str, TestFile | None, list[CaseResult], ScenarioError | DiagnosticError | None]


def files_of(arguments: tuple[str, ...]) -> list[str]:
    """The files to run: each argument, a directory standing for its ``*.toml`` files and
    those of its subdirectories, in path order."""
    files: list[str] = []
    for argument in arguments:
        path = Path(argument)
        if path.is_dir():
            found = sorted(str(p) for p in path.rglob("*.toml"))
            if not found:
                raise UserError(f"{argument}: a directory without test files (*.toml)")
            files += found
        else:
            files.append(argument)
    return files


class Devices:
    """The switch ``--switch`` names, made for each file's profile (bmv2: one connection
    for every file), closed when the command ends."""

    def __init__(self, url: str, packet_in: str | None) -> None:
        self.where = where = urlparse(url)
        self.bmv2: Bmv2Device | None = None
        if where.scheme not in ("sim", "bmv2"):
            raise UserError(f"--switch takes bmv2://HOST:PORT or sim://, got `{url}`")
        if where.scheme == "sim":
            return
        if where.hostname is None or where.port is None:
            raise UserError(f"--switch bmv2://HOST:PORT, got `{url}`")
        if packet_in is None:
            raise UserError(
                "--switch bmv2://... needs --packet-in ADDRESS: the nanomsg address "
                "simple_switch was started with (simple_switch --packet-in ipc:///tmp/sv.ipc ...)"
            )
        self.packet_in = packet_in
        try:
            self.toolchain = find_toolchain()
        except ToolchainMissing as missing:
            raise UserError(str(missing)) from None

    def get(self, profile: TargetProfile) -> Device:
        where = self.where
        if where.scheme == "sim":
            return SimDevice(profile)
        if self.bmv2 is None:
            assert where.hostname is not None and where.port is not None
            try:  # first a plain connection: simple_switch_CLI's failing one prints and exits
                socket.create_connection((where.hostname, where.port), timeout=5).close()
            except OSError as exc:
                raise UserError(
                    f"cannot reach simple_switch at {where.netloc}: {exc.strerror or exc}"
                ) from None
            try:
                self.bmv2 = Bmv2Device(
                    self.toolchain, where.hostname, where.port, self.packet_in, profile
                )
            except (Exception, SystemExit) as exc:
                # Thrift or nanomsg: not a simple_switch (simple_switch_CLI's connect exits
                # the process when it cannot connect)
                reason = str(exc) if not isinstance(exc, SystemExit) else "no Thrift server there"
                raise UserError(f"cannot reach simple_switch at {where.netloc}: {reason}") from None
        self.bmv2.profile = profile
        return self.bmv2

    def close(self) -> None:
        if self.bmv2 is not None:
            self.bmv2.close()


def report_error(error: ScenarioError | DiagnosticError) -> None:
    if isinstance(error, DiagnosticError):
        report_diagnostics(error.diagnostics)
    else:
        report_scenario_error(error)


@dataclass(frozen=True)
class Show:
    """What the command prints as it goes."""

    as_json: bool  # nothing: the JSON at the end
    quiet: bool  # failures and errors only
    trace: bool  # the traces of the failing cases
    trace_all: bool  # the traces of every case


def run_file(
    file: str,
    devices: Devices | None,
    target: Target,
    summary: Summary,
    runs: list[Run],
    show: Show,
) -> None:
    """Read ``file`` and run its cases on ``target`` (its device made for the file's
    profile), printing each case's line; the results go to ``summary`` and ``runs``."""
    summary.files += 1
    try:
        test = load_test_file(file)
    except (ScenarioError, DiagnosticError) as exc:
        summary.file_errors += 1
        runs.append((file, None, [], exc))
        report_error(exc)
        return
    if devices is not None:
        target = replace(target, device=devices.get(test.profile))
    results: list[CaseResult] = []
    for case in test.cases:
        result = run_case(test, case, target)
        results.append(result)
        summary.add(result)
        traced = show.trace_all or (show.trace and result.status == "fail")
        if not show.as_json and not (show.quiet and result.status in ("pass", "skip")):
            click.echo(render_case(test, result, trace=traced), nl=False)
        if result.error is not None:
            report_error(result.error)
    runs.append((file, test, results, None))


@click.command("test")
@click.argument("arguments", metavar="FILE...", nargs=-1, required=True, type=click.Path())
@click.option(
    "--jit/--no-jit",
    default=False,
    help="run the simulator's passes as native code (llvmlite), as dpfc run --jit does",
)
@click.option(
    "--switch",
    "url",
    default=None,
    metavar="URL",
    help="run on a switch: bmv2://HOST:PORT (with --packet-in), or sim:// (a dry run)",
)
@click.option(
    "--packet-in",
    default=None,
    metavar="ADDRESS",
    help="bmv2: the nanomsg address simple_switch was started with (--packet-in)",
)
@click.option("--trace", is_flag=True, help="print the traces of the failing cases")
@click.option("--trace-all", is_flag=True, help="print the traces of every case")
@click.option("--json", "as_json", is_flag=True, help="print the results as JSON")
@click.option(
    "--junit-xml",
    "junit_path",
    type=click.Path(dir_okay=False),
    default=None,
    help="also write the results as JUnit XML to FILE",
)
@handle_errors
def dpftest_command(
    arguments: tuple[str, ...],
    jit: bool,
    url: str | None,
    packet_in: str | None,
    trace: bool,
    trace_all: bool,
    as_json: bool,
    junit_path: str | None,
) -> None:
    """Run test files of DPFs on the simulator, its JIT or a switch; diff what differs."""
    if url is not None and (trace or trace_all):
        raise UserError("--trace shows the simulator's passes; it does not go with --switch")
    if url is not None and jit:
        raise UserError("--jit runs the simulator's passes; it does not go with --switch")
    devices = Devices(url, packet_in) if url is not None else None
    if jit and native.missing() is not None:
        click.echo(
            f"dpfc test: --jit: {native.missing()}; the interpreter runs the passes", err=True
        )
        jit = False
    files = files_of(arguments)
    name = url if url is not None else ("jit" if jit else "sim")
    summary = Summary(name)
    runs: list[Run] = []
    show = Show(as_json, quiet(), trace, trace_all)
    try:
        for file in files:
            run_file(file, devices, Target(jit=jit, trace=trace or trace_all), summary, runs, show)
    finally:
        if devices is not None:
            devices.close()
    if as_json:
        shown = "all" if trace_all else ("failed" if trace else "")
        click.echo(results_json(runs, summary, trace=shown), nl=False)
    else:
        click.echo(render_summary(summary), nl=False)
    if junit_path is not None:
        write_file(junit_path, junit_xml(runs, summary))
    if summary.failed:
        sys.exit(1)
