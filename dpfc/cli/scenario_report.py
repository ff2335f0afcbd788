"""What ``dpfc run`` reports about a scenario's run: as data, and as text.

Contract: the report is built once, as plain JSON-compatible data (:func:`collect`), and
printed either as text (:func:`render_text`) or as JSON, so both always say the same thing.
It lists, per injected packet, every pipe pass it caused (switch, pipe, ingress port,
verdict, reason), the egress DPF runs of the frames it sent (port, verdict, reason; only
when there were any) and where each output frame went (a host, another ``switch:port``, or
an unconnected port) with its tenant, DPF pointer (and egress pointer, when set) and stack
(:func:`describe_frame`); then the memory words the scenario watches; then a summary
(passes, frames delivered, verdict counts, per-tenant counters, reports). With traces, each
pass's trace is rendered by :func:`dpfc.backends.sim.render_trace` with the source of the
scenario's code (:meth:`~dpfc.backends.scenario.Scenario.trace_sources`). Reading the
network changes nothing in it.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from dpfc.backends.scenario import Scenario
from dpfc.backends.sim import Network, PassRecord, TraceSources, render_trace
from dpfc.encoding import OPTION_CLASS, TYPE_CODE, DecodeError, split_options
from dpfc.packet import parse_packet
from dpfc.target import TargetProfile

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


def _pass(network: Network, record: PassRecord, sources: TraceSources | None) -> dict[str, Any]:
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
    if sources is not None and result.trace is not None:
        entry["trace"] = render_trace(result.trace, sources)
    return entry


def collect(scenario: Scenario, *, settled: bool, trace: bool) -> dict[str, Any]:
    """Everything ``dpfc run`` prints, as JSON-compatible data."""
    network = scenario.network
    sources = scenario.trace_sources() if trace else None
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
            "passes": [_pass(network, r, sources) for r in by_packet.get(queued.id, [])],
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
