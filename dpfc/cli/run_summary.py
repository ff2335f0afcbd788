"""What ``dpfc run --summary`` prints: a run in a screenful, whatever its number of packets.

Contract: :func:`summarize` is the report of :mod:`.scenario_report` without its per-packet
part (:func:`~.scenario_report.overview`: the network, watched memory, per-tenant counters,
reports, totals and verdict counts) plus

* ``ports``: every switch port frames entered (a pass began there) or left by, with the
  frames in and out and what is wired to it;
* ``faults``: the pipes' problem reports (faults, refusals, unauthorized packets, gas, hop
  limits) grouped by switch and kind, each group's count and its first report's detail;
* ``time``: the simulated clock at the end, and the wall-clock seconds of loading the
  scenario (compiling, linking, deploying its code) and of the run.

:func:`render_summary` prints it as text; ``--json`` prints the data. Everything but the
wall-clock seconds is the same for the same scenario.
"""

from __future__ import annotations

from typing import Any

from dpfc.backends.scenario import Scenario
from dpfc.cli.scenario_report import (
    header_lines,
    memory_lines,
    overview,
    plural,
    summary_lines,
)


def summarize(
    scenario: Scenario, *, settled: bool, load_seconds: float, run_seconds: float
) -> dict[str, Any]:
    """The summary as JSON-compatible data (see the module docstring)."""
    network = scenario.network
    report = overview(scenario, settled=settled, packets=None)
    frames_in: dict[tuple[str, int], int] = {}
    frames_out: dict[tuple[str, int], int] = {}
    for record in network.records:
        key = (record.switch, record.port)
        frames_in[key] = frames_in.get(key, 0) + 1
    for sent in network.transmissions:
        key = (sent.switch, sent.port)
        frames_out[key] = frames_out.get(key, 0) + 1
    order = {name: index for index, name in enumerate(network.switches)}
    ports = []
    for switch, port in sorted({*frames_in, *frames_out}, key=lambda k: (order[k[0]], k[1])):
        peer = network.wires.get((switch, port))
        to = "" if peer is None else peer[0] if peer[1] is None else f"{peer[0]}:{peer[1]}"
        ports.append(
            {
                "switch": switch,
                "port": port,
                "to": to,
                "in": frames_in.get((switch, port), 0),
                "out": frames_out.get((switch, port), 0),
            }
        )
    faults: dict[tuple[str, str], dict[str, Any]] = {}
    for item in report["reports"]:
        group = faults.setdefault(
            (item["switch"], item["kind"]),
            {"switch": item["switch"], "kind": item["kind"], "count": 0, "first": item["detail"]},
        )
        group["count"] += 1
    del report["reports"]  # the groups say it in a few lines
    report["ports"] = ports
    report["faults"] = list(faults.values())
    report["time"] = {
        "simulated_ns": network.now_ns,
        "load_seconds": round(load_seconds, 3),
        "run_seconds": round(run_seconds, 3),
    }
    return report


def render_summary(report: dict[str, Any]) -> str:
    """The summary as text."""
    lines = header_lines(report) + memory_lines(report)
    lines += summary_lines(report, reports=False)  # the faults below, with their details
    lines += ["", "ports (frames in, out):"]
    width = max((len(f"{p['switch']}:{p['port']}") for p in report["ports"]), default=0)
    for port in report["ports"]:
        name = f"{port['switch']}:{port['port']}".ljust(width)
        to = f"  -> {port['to']}" if port["to"] else "  (not connected)"
        lines.append(f"  {name} {port['in']:>8} in {port['out']:>8} out{to}")
    if not report["ports"]:
        lines.append("  none")
    lines += ["", f"faults and reports: {report['summary']['reports']}"]
    for group in report["faults"]:
        lines.append(
            f"  {group['switch']} {group['kind']}: {group['count']}, first: {group['first']}"
        )
    time = report["time"]
    lines += [
        "",
        f"time: {time['simulated_ns']:,} ns simulated ({plural(report['summary']['passes'], 'pass', 'passes')}); "
        f"loaded in {time['load_seconds']:.2f} s, ran in {time['run_seconds']:.2f} s",
    ]
    return "\n".join(lines) + "\n"


__all__ = ["render_summary", "summarize"]
