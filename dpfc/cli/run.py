"""``dpfc run SCENARIO``: build a simulated network from a scenario file, run it, report.

The report is built once, as plain data (:func:`collect`), and printed either as text
(:func:`render_text`) or as JSON (``--json``), so both always say the same thing. It lists,
per injected packet, every pipe pass it caused (switch, pipe, ingress port, verdict, reason),
the egress DPF runs of the frames it sent (port, verdict, reason; only when there were any)
and where each output frame went (a host, another ``switch:port``, or an unconnected port)
with its tenant, DPF pointer (and egress pointer, when set) and stack; then the memory words the scenario watches; then a
summary (passes, frames delivered, verdict counts, per-tenant counters, reports). The same
scenario gives byte-identical output (seeded RNG, simulated clock).

Errors: a scenario error prints ``file: error[DPF41xx]: key.path: message`` (with a source
excerpt when the position is known, i.e. for syntax errors); a refused control-plane call
its DPF40xx code; assembly errors the assembler's diagnostics. All exit 1.
"""

from __future__ import annotations

import functools
import json
import sys
from dataclasses import fields
from pathlib import Path
from typing import Any

import click

from dpfc.backends import jit as native
from dpfc.backends.scenario import Scenario, ScenarioError, load_scenario
from dpfc.backends.sim import Network, PassRecord
from dpfc.catalog import codes
from dpfc.cli.errors import UserError, diagnostics_format, handle_errors, report_diagnostics
from dpfc.cli.files import write_file, write_with
from dpfc.diagnostics import Diagnostic, SourceFile
from dpfc.encoding import OPTION_CLASS, TYPE_CODE, DecodeError, split_options
from dpfc.packet import parse_packet, write_pcap
from dpfc.target import TargetProfile

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


# -- the report as data ------------------------------------------------------------------------


def _hex_list(values: tuple[int, ...] | list[int]) -> str:
    return "[" + ", ".join(f"{v:#x}" for v in values) + "]"


def describe_frame(frame: bytes, profile: TargetProfile) -> dict[str, Any]:
    """What a frame carries, as far as SwitchVM is concerned."""
    out: dict[str, Any] = {"bytes": len(frame)}
    try:
        parsed = parse_packet(frame, profile)
    except DecodeError as exc:
        out["error"] = f"{exc.message} [{exc.code}]"
        return out
    out["tenant"] = parsed.tenant_id
    header = parsed.header
    if header is None:
        out["switchvm"] = False
        return out
    out["switchvm"] = True
    out["dpf"] = "none" if header.dpf_ptr is None else str(header.dpf_ptr)
    if header.egress_ptr is not None:  # listed only when set: most packets name none
        out["egress"] = str(header.egress_ptr)
    out["stack"] = list(header.stack)
    out["code_bundles"] = sum(len(bundles) for _, bundles in header.code.stages())
    # The code options' bytes (with their option headers), not the frame's: both are said.
    out["code_bytes"] = sum(
        len(data) + 4
        for _, option_class, option_type, data in split_options(parsed.options)
        if option_class == OPTION_CLASS and option_type == TYPE_CODE
    )
    return out


def _peer(network: Network, switch: str, port: int) -> str:
    peer = network.wires.get((switch, port))
    if peer is None:
        return ""
    name, peer_port = peer
    return name if peer_port is None else f"{name}:{peer_port}"


def _pass(network: Network, record: PassRecord, trace: bool) -> dict[str, Any]:
    result = record.result
    entry: dict[str, Any] = {
        "sequence": record.sequence,
        "switch": record.switch,
        "pipe": record.pipe,
        "port": record.port,
        "tenant": result.tenant,
        "verdict": result.verdict,
        "reason": result.reason,
        "outputs": [
            {
                "port": port,
                "to": _peer(network, record.switch, port),
                "frame": describe_frame(frame, network.profile),
            }
            for port, frame in result.outputs
        ],
        "recirculated": result.recirculated is not None,
    }
    if result.egress:
        entry["egress"] = [
            {"port": run.port, "pipe": run.pipe, "verdict": run.verdict, "reason": run.reason}
            for run in result.egress
        ]
    if trace and result.trace is not None:
        entry["trace"] = result.trace.render()
    return entry


def collect(scenario: Scenario, *, settled: bool, trace: bool) -> dict[str, Any]:
    """Everything ``dpfc run`` prints, as JSON-compatible data."""
    network = scenario.network
    by_packet: dict[int, list[PassRecord]] = {}
    for record in network.records:
        by_packet.setdefault(record.packet, []).append(record)
    limited = set(network.hop_limited)
    packets = [
        {
            "id": queued.id,
            "from": queued.host,
            "origin": queued.origin,
            "summary": queued.summary,
            "passes": [_pass(network, r, trace) for r in by_packet.get(queued.id, [])],
            "hop_limited": queued.id in limited,
        }
        for queued in scenario.packets
    ]
    tenants: list[dict[str, Any]] = []
    reports: list[dict[str, Any]] = []
    for name, switch in network.switches.items():
        ids = sorted({t for pipe in switch.pipes for t in (*pipe.permissions, *pipe.stats)})
        for tenant in ids:
            stats = switch.control.stats(tenant)
            counters = {f.name: getattr(stats, f.name) for f in fields(stats)}
            tenants.append(
                {
                    "switch": name,
                    "tenant": tenant,
                    "stats": {k: v for k, v in counters.items() if v},
                }
            )
        for pipe in switch.pipes:
            reports.extend(
                {
                    "switch": name,
                    "pipe": pipe.index,
                    "tenant": report.tenant,
                    "kind": report.kind,
                    "detail": report.detail,
                }
                for report in pipe.reports
            )
    memory = []
    for watch in scenario.watches:
        control = network.switches[watch.switch].control
        values = control.read_memory(
            watch.tenant,
            watch.eu,
            watch.lane,
            watch.vaddr,
            watch.count,
            pipe=watch.pipe,
            pipeline=watch.pipeline,
        )
        memory.append({**watch.__dict__, "values": values})
    verdicts: dict[str, int] = {}
    for record in network.records:
        verdicts[record.result.verdict] = verdicts.get(record.result.verdict, 0) + 1
    delivered = sum(len(h.received) for h in network.hosts.values())
    unconnected = sum(1 for t in network.transmissions if not t.to)
    return {
        "scenario": scenario.file,
        "target": scenario.profile.name,
        "seed": network.seed,
        "switches": len(network.switches),
        "hosts": {name: len(host.received) for name, host in network.hosts.items()},
        "packets": packets,
        "memory": memory,
        "tenants": tenants,
        "reports": reports,
        "summary": {
            "packets": len(scenario.packets),
            "passes": network.passes,
            "delivered": delivered,
            "unconnected": unconnected,
            "verdicts": dict(sorted(verdicts.items())),
            "reports": len(reports),
            "hop_limited": len(limited),
            "settled": settled,
        },
    }


# -- text ------------------------------------------------------------------------------------


def _frame_text(frame: dict[str, Any]) -> str:
    size = f"frame {frame['bytes']} bytes"
    if "error" in frame:
        return f"not a SwitchVM packet ({frame['error']}), {size}"
    if not frame["switchvm"]:
        return f"tenant {frame['tenant']}, no SwitchVM option, {size}"
    code = ""
    if frame["code_bundles"]:
        bundles = _plural(frame["code_bundles"], "bundle")
        code = f", code {bundles} ({frame['code_bytes']} bytes)"
    egress = f", egress {frame['egress']}" if "egress" in frame else ""
    return (
        f"tenant {frame['tenant']}, dpf {frame['dpf']}{egress}, "
        f"stack {_hex_list(frame['stack'])}{code}, {size}"
    )


def _plural(count: int, word: str, words: str | None = None) -> str:
    return f"{count} {word if count == 1 else words or word + 's'}"


def render_text(report: dict[str, Any], *, trace: bool) -> str:
    summary = report["summary"]
    lines = [
        f"scenario {report['scenario']}: target {report['target']}, seed {report['seed']}, "
        f"{_plural(report['switches'], 'switch', 'switches')}, "
        f"{_plural(len(report['hosts']), 'host')}, {_plural(summary['packets'], 'packet')}"
    ]
    for packet in report["packets"]:
        lines.append("")
        lines.append(
            f"packet {packet['id']} from {packet['from']} ({packet['origin']}): {packet['summary']}"
        )
        if not packet["passes"]:
            lines.append("  not processed (the run stopped first)")
        for entry in packet["passes"]:
            lines.append(
                f"  pass {entry['sequence']} at {entry['switch']} pipe {entry['pipe']} port "
                f"{entry['port']}: {entry['verdict']}: {entry['reason']}"
            )
            if trace and "trace" in entry:
                lines.extend("    | " + line for line in entry["trace"].splitlines())
            for run in entry.get("egress", ()):
                lines.append(
                    f"    egress pipe {run['pipe']} port {run['port']}: {run['verdict']}: "
                    f"{run['reason']}"
                )
            for output in entry["outputs"]:
                to = output["to"] or "nowhere (port not connected)"
                lines.append(f"    port {output['port']} -> {to}: {_frame_text(output['frame'])}")
            if entry["recirculated"]:
                lines.append("    -> recirculated into the same pipe")
        if packet["hop_limited"]:
            lines.append("  hop limit reached: the last outputs were discarded")
    if report["memory"]:
        lines.append("")
        lines.append("memory:")
        for watch in report["memory"]:
            label = f"{watch['label']}: " if watch["label"] else ""
            end = watch["vaddr"] + watch["count"] - 1
            where = f"{watch['vaddr']:#x}" + (f"..{end:#x}" if watch["count"] > 1 else "")
            values = " ".join(f"{v:#x}" for v in watch["values"])
            egress = " (egress)" if watch["pipeline"] == "egress" else ""
            lines.append(
                f"  {label}{watch['switch']} pipe {watch['pipe']} tenant {watch['tenant']} "
                f"EU{watch['eu']} lane {watch['lane']}{egress} [{where}] = {values}"
            )
    lines.append("")
    lines.append(
        f"summary: {_plural(summary['packets'], 'packet')}, "
        f"{_plural(summary['passes'], 'pass', 'passes')}, {_plural(summary['delivered'], 'frame')} delivered to hosts, "
        f"{summary['unconnected']} sent to unconnected ports"
    )
    verdicts = ", ".join(f"{k} {v}" for k, v in summary["verdicts"].items()) or "none"
    lines.append(f"  verdicts: {verdicts}")
    for name, count in report["hosts"].items():
        lines.append(f"  host {name}: received {_plural(count, 'frame')}")
    for tenant in report["tenants"]:
        counters = ", ".join(f"{k} {v}" for k, v in tenant["stats"].items()) or "no packets"
        lines.append(f"  {tenant['switch']} tenant {tenant['tenant']}: {counters}")
    kinds: dict[str, int] = {}
    for item in report["reports"]:
        key = f"{item['switch']} {item['kind']}"
        kinds[key] = kinds.get(key, 0) + 1
    detail = " (" + ", ".join(f"{k} {v}" for k, v in sorted(kinds.items())) + ")" if kinds else ""
    lines.append(f"  reports: {summary['reports']}{detail}")
    if summary["hop_limited"]:
        lines.append(f"  hop limit reached by {_plural(summary['hop_limited'], 'packet')}")
    return "\n".join(lines) + "\n"


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


def _write_traces(path: str, network: Network) -> None:
    text = "".join(r.result.trace.render() for r in network.records if r.result.trace)
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
    "--trace-file", type=click.Path(dir_okay=False), help="write the traces to FILE instead"
)
@click.option(
    "--out-dir",
    type=click.Path(file_okay=False),
    help="write one pcap per host (HOST.pcap) with the frames it received",
)
@click.option("--json", "as_json", is_flag=True, help="print a machine-readable report")
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
@handle_errors
def run_command(
    scenario_file: str,
    pcap: str | None,
    from_host: str | None,
    trace: bool,
    trace_file: str | None,
    out_dir: str | None,
    as_json: bool,
    jit: bool | None,
    max_passes: int,
) -> None:
    """Run a scenario (.toml or .json) in the simulator; report what came out where."""
    if (pcap is None) != (from_host is None):
        raise UserError("--pcap FILE and --from HOST go together")
    try:
        scenario = load_scenario(scenario_file)
    except ScenarioError as exc:
        report_scenario_error(exc)
        sys.exit(1)
    if pcap is not None and from_host is not None:
        try:
            scenario.send_pcap(pcap, from_host)
        except ScenarioError as exc:
            raise UserError(f"--pcap {pcap} --from {from_host}: {exc.message}") from None
    network = scenario.network
    if jit if jit is not None else len(network.queue) >= LARGE_RUN:
        _use_jit(network, asked=jit is True)
    tracing = trace or trace_file is not None
    network.run(trace=tracing, max_passes=max_passes)
    settled = not network.queue
    report = collect(scenario, settled=settled, trace=trace and trace_file is None)
    pcaps = _pcap_paths(out_dir, network) if out_dir is not None else {}
    if as_json:
        report["pcaps"] = list(pcaps.values())
        click.echo(json.dumps(report, indent=2))
    else:
        click.echo(render_text(report, trace=trace and trace_file is None), nl=False)
    # Files after the report: their "wrote" lines (stderr) follow it on a terminal.
    if trace_file is not None:
        _write_traces(trace_file, network)
    for name, path in pcaps.items():
        write_with(path, functools.partial(_pcap_to, frames=list(network.hosts[name].received)))
    if not settled:
        click.echo(
            f"{scenario_file}: error[{codes.SCENARIO_NOT_SETTLED}]: the network did not settle within {max_passes} "
            f"passes ({len(network.queue)} frames still queued; --max-passes raises the limit)",
            err=True,
        )
        sys.exit(1)
