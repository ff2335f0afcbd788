"""What ``dpfc run`` reports about a scenario's run: as data, and as text.

Contract: the report is built once, as plain JSON-compatible data (:func:`collect`), and
printed either as text (:func:`render_text`) or as JSON, so both always say the same thing;
:func:`overview` is the same report without its per-packet part (``dpfc run --summary``,
:mod:`.run_summary`).
It lists, per injected packet, every pipe pass it caused (its number counts every pass of the
network in the order they ran, so a packet's later passes follow those of the packets queued
before them, which the text says under its header when it happens; switch, pipe, ingress
port, verdict, reason), the egress DPF runs of the frames it sent (port, verdict, reason; only
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
from itertools import pairwise
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
    return overview(scenario, settled=settled, packets=packets)


def overview(
    scenario: Scenario, *, settled: bool, packets: list[dict[str, Any]] | None
) -> dict[str, Any]:
    """The report without its per-packet part (``packets``: that part, or None to leave
    the key out): the network, watched memory, per-tenant counters, reports, totals."""
    network = scenario.network
    reports = problem_reports(network)
    verdicts: dict[str, int] = {}
    for record in network.records:
        verdicts[record.result.verdict] = verdicts.get(record.result.verdict, 0) + 1
    delivered = sum(len(h.received) for h in network.hosts.values())
    unconnected = sum(1 for t in network.transmissions if not t.to)
    out: dict[str, Any] = {
        "scenario": scenario.file,
        "target": scenario.profile.name,
        "seed": network.seed,
        "switches": len(network.switches),
        "hosts": {name: len(host.received) for name, host in network.hosts.items()},
    }
    if packets is not None:
        out["packets"] = packets
    out |= {
        "memory": watched_memory(scenario),
        "tenants": tenant_counters(network),
        "reports": reports,
        "summary": {
            "packets": len(scenario.packets),
            "passes": network.passes,
            "delivered": delivered,
            "unconnected": unconnected,
            "verdicts": dict(sorted(verdicts.items())),
            "reports": len(reports),
            "hop_limited": len(set(network.hop_limited)),
            "settled": settled,
        },
    }
    return out


def tenant_counters(network: Network) -> list[dict[str, Any]]:
    """Each switch's tenants with their non-zero counters, summed over pipes."""
    tenants: list[dict[str, Any]] = []
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
    return tenants


def problem_reports(network: Network) -> list[dict[str, Any]]:
    """What the pipes reported (faults, refusals, unauthorized packets, ...), in order."""
    return [
        {
            "switch": name,
            "pipe": pipe.index,
            "tenant": report.tenant,
            "kind": report.kind,
            "detail": report.detail,
        }
        for name, switch in network.switches.items()
        for pipe in switch.pipes
        for report in pipe.reports
    ]


def watched_memory(scenario: Scenario) -> list[dict[str, Any]]:
    """The words of every ``[[watch]]``, read after the run."""
    memory = []
    for watch in scenario.watches:
        control = scenario.network.switches[watch.switch].control
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
    return memory


# -- text ------------------------------------------------------------------------------------


def _frame_text(frame: dict[str, Any]) -> str:
    size = f"frame {frame['bytes']} bytes"
    if "error" in frame:
        return f"not a SwitchVM packet ({frame['error']}), {size}"
    if not frame["switchvm"]:
        return f"tenant {frame['tenant']}, no SwitchVM option, {size}"
    code = ""
    if frame["code_bundles"]:
        bundles = plural(frame["code_bundles"], "bundle")
        code = f", code {bundles} ({frame['code_bytes']} bytes)"
    egress = f", egress {frame['egress']}" if "egress" in frame else ""
    return (
        f"tenant {frame['tenant']}, dpf {frame['dpf']}{egress}, "
        f"stack {_hex_list(frame['stack'])}{code}, {size}"
    )


def plural(count: int, word: str, words: str | None = None) -> str:
    """``1 frame``, ``2 frames`` (``words``: an irregular plural)."""
    return f"{count} {word if count == 1 else words or word + 's'}"


# Said under the header when a packet's passes are not numbered one after the other.
PASS_ORDER = "passes are numbered in the order the network ran them, all packets together"


def render_text(report: dict[str, Any], *, trace: bool) -> str:
    lines = header_lines(report)
    if any(_interleaved(packet) for packet in report["packets"]):
        lines.append(PASS_ORDER)
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
    return "\n".join(lines + memory_lines(report) + summary_lines(report)) + "\n"


def _interleaved(packet: dict[str, Any]) -> bool:
    """Whether other packets' passes ran between this packet's (a frame it sent waited in
    the network's one queue behind those queued before it)."""
    numbers = [entry["sequence"] for entry in packet["passes"]]
    return any(later != earlier + 1 for earlier, later in pairwise(numbers))


def header_lines(report: dict[str, Any]) -> list[str]:
    summary = report["summary"]
    return [
        f"scenario {report['scenario']}: target {report['target']}, seed {report['seed']}, "
        f"{plural(report['switches'], 'switch', 'switches')}, "
        f"{plural(len(report['hosts']), 'host')}, {plural(summary['packets'], 'packet')}"
    ]


def memory_lines(report: dict[str, Any]) -> list[str]:
    if not report["memory"]:
        return []
    lines = ["", "memory:"]
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
    return lines


def summary_lines(report: dict[str, Any], *, reports: bool = True) -> list[str]:
    """The totals, verdicts, hosts and tenants; the reports by kind unless ``reports`` is
    false (``--summary`` lists them with their details)."""
    summary = report["summary"]
    lines = [
        "",
        f"summary: {plural(summary['packets'], 'packet')}, "
        f"{plural(summary['passes'], 'pass', 'passes')}, {plural(summary['delivered'], 'frame')} delivered to hosts, "
        f"{summary['unconnected']} sent to unconnected ports",
    ]
    verdicts = ", ".join(f"{k} {v}" for k, v in summary["verdicts"].items()) or "none"
    lines.append(f"  verdicts: {verdicts}")
    for name, count in report["hosts"].items():
        lines.append(f"  host {name}: received {plural(count, 'frame')}")
    for tenant in report["tenants"]:
        counters = ", ".join(f"{k} {v}" for k, v in tenant["stats"].items()) or "no packets"
        lines.append(f"  {tenant['switch']} tenant {tenant['tenant']}: {counters}")
    if reports:
        kinds: dict[str, int] = {}
        for item in report["reports"]:
            key = f"{item['switch']} {item['kind']}"
            kinds[key] = kinds.get(key, 0) + 1
        listed = ", ".join(f"{k} {v}" for k, v in sorted(kinds.items()))
        lines.append(f"  reports: {summary['reports']}" + (f" ({listed})" if kinds else ""))
    if summary["hop_limited"]:
        lines.append(f"  hop limit reached by {plural(summary['hop_limited'], 'packet')}")
    return lines
