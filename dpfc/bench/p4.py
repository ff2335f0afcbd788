"""``python -m dpfc.bench p4``: packets per second of the generated SwitchVM program on bmv2,
next to the simulator on the same packets.

Method: two programs are generated and compiled with p4c-bm2-ss: the SwitchVM program of
the default profile, tofino1 (``--json`` names a compiled one instead, and then it alone is
measured), and the stage-structured program of tofino1_fit (the Tofino design, rendered for
v1model). One simple_switch runs each (packets on a nanomsg socket, no logging). For each
case the DPF is compiled for the program's profile, linked for one tenant and deployed
through that program's control and through the simulator's; ``packets`` frames are sent back to back and the clock stops when the
last output arrived (bmv2) or the last ``switch.process`` returned (simulator). Each figure
is the median of ``runs`` runs; the outputs of the two targets are compared frame by frame
and the table says how many were identical. Cases:

* ``counter`` (examples/dpf/counter.dpf): in-switch code, one FAADD per packet;
* ``lb1`` (examples/dpf/lb1.dpf): in-packet code (decoded per packet), one HASH.

A baseline is measured the same way: simple_switch running :data:`ONE_TABLE_P4`, a
v1model program with one exact-match table on the ingress port whose action sets the
egress port (the "one-table program" docs/performance.md compares the JIT with), on the
counter's frames.

Numbers depend on the machine and its load; nothing asserts a speed.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

from dpfc.backends.p4 import (
    Cli,
    Toolchain,
    compile_program,
    control_for,
    find_toolchain,
    generate,
    generate_staged,
)
from dpfc.backends.p4 import Switch as Bmv2Switch
from dpfc.backends.sim import SimControl, Switch
from dpfc.deploy import Deployment
from dpfc.driver import CompileOptions, compile_source
from dpfc.encoding import SwitchVMHeader, decode_options, encode_options
from dpfc.isa import PC
from dpfc.link import Image, LinkInput, link
from dpfc.packet import build_frame, build_inner
from dpfc.switch import Destination, SwitchControl
from dpfc.target import BUILTIN_PROFILES, DEFAULT_PROFILE, TargetProfile

from .results import Result, rate_result

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "dpf"
TENANT = 7
OUT_PORT = 15
WINDOW = 32  # frames sent ahead of the outputs received (half an egress queue)
HEADER = ("program", "DPF", "placement", "bmv2 pkt/s", "simulator pkt/s", "identical outputs")
# The programs measured: the SwitchVM program of the default profile (its own wide tables),
# and the stage-structured program (the Tofino design) of tofino1_fit, its v1model rendering.
PROGRAMS = {"switchvm": DEFAULT_PROFILE, "staged": BUILTIN_PROFILES["tofino1_fit"]}


ONE_TABLE_P4 = """\
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dst; bit<48> src; bit<16> ether_type; }
struct headers_t { ethernet_t ethernet; }
struct metadata_t { }

parser OneParser(packet_in packet, out headers_t hdr, inout metadata_t meta,
                 inout standard_metadata_t standard_metadata) {
    state start { packet.extract(hdr.ethernet); transition accept; }
}
control OneVerify(inout headers_t hdr, inout metadata_t meta) { apply { } }
control OneIngress(inout headers_t hdr, inout metadata_t meta,
                   inout standard_metadata_t standard_metadata) {
    action set_port(bit<9> port) { standard_metadata.egress_spec = port; }
    action drop() { mark_to_drop(standard_metadata); }
    table forward {
        key = { standard_metadata.ingress_port : exact; }
        actions = { set_port; drop; }
        default_action = drop();
        size = 64;
    }
    apply { forward.apply(); }
}
control OneEgress(inout headers_t hdr, inout metadata_t meta,
                  inout standard_metadata_t standard_metadata) { apply { } }
control OneCompute(inout headers_t hdr, inout metadata_t meta) { apply { } }
control OneDeparser(packet_out packet, in headers_t hdr) { apply { packet.emit(hdr.ethernet); } }

V1Switch(OneParser(), OneVerify(), OneIngress(), OneEgress(), OneCompute(), OneDeparser()) main;
"""
IN_PORT = 3


@dataclass(frozen=True)
class Baseline:
    """simple_switch running :data:`ONE_TABLE_P4` on ``packets`` frames."""

    pps: float
    forwarded: int  # outputs of the last run equal to their frame, on OUT_PORT
    packets: int
    seconds: tuple[float, ...]


@dataclass(frozen=True)
class Row:
    program: str  # PROGRAMS' name
    dpf: str
    placement: str
    bmv2_pps: float
    sim_pps: float
    identical: int
    packets: int
    bmv2_seconds: tuple[float, ...] = ()  # each timed run
    sim_seconds: tuple[float, ...] = ()


def _image(name: str, profile: TargetProfile) -> Image:
    module = compile_source(EXAMPLES / f"{name}.dpf", CompileOptions(target=profile))
    return link([LinkInput(module.object(), TENANT)])


def _frames(image: Image, profile: TargetProfile, packets: int) -> list[bytes]:
    dpf = image.dpfs[0]
    frames = []
    for n in range(packets):
        stack = (n % 64,)
        if dpf.in_packet_options is not None:
            header = replace(decode_options(dpf.in_packet_options, profile), stack=stack)
        else:
            header = SwitchVMHeader(
                app_id=dpf.app_id, dpf_ptr=PC(False, dpf.entry or 0), stack=stack
            )
        options = encode_options(header, profile).data
        frames.append(build_frame(tenant_id=TENANT, options=options, inner=build_inner(b"bench")))
    return frames


def _steer(control: SwitchControl) -> None:
    for index in range(8):
        control.set_forwarding(TENANT, index, Destination(port=OUT_PORT), [0])


@dataclass(frozen=True)
class P4Figures:
    rows: list[Row]
    baseline: Baseline
    compile_seconds: float  # p4c-bm2-ss on the SwitchVM program; 0 when it was given


def p4_rows(packets: int, runs: int, program_json: Path | None) -> P4Figures:
    """The rows of each program (:data:`PROGRAMS`; ``program_json``: a compiled SwitchVM
    program of the default profile, then the staged one is not measured), the one-table
    baseline, and p4c-bm2-ss's compile time of the SwitchVM program."""
    toolchain = find_toolchain()
    seconds = 0.0
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="dpfc-bench-p4-") as directory:
        programs = dict(PROGRAMS) if program_json is None else {"switchvm": DEFAULT_PROFILE}
        for label, profile in programs.items():
            if label != "switchvm" or program_json is None:
                source = Path(directory) / f"{label}.p4"
                text = (
                    generate(profile)
                    if label == "switchvm"
                    else generate_staged(profile, "v1model")
                )
                source.write_text(text, encoding="utf-8")
                compiled = compile_program(toolchain, source, Path(directory) / f"{label}.json")
                json_file = compiled.json
                seconds = compiled.seconds if label == "switchvm" else seconds
            else:
                json_file = program_json
            rows += [
                _case(label, name, profile, toolchain, json_file, packets, runs)
                for name in ("counter", "lb1")
            ]
        profile = DEFAULT_PROFILE
        one_table = Path(directory) / "one_table.p4"
        one_table.write_text(ONE_TABLE_P4, encoding="utf-8")
        one_json = compile_program(toolchain, one_table, Path(directory) / "one_table.json").json
        frames = _frames(_image("counter", profile), profile, packets)
        baseline = one_table_baseline(toolchain, one_json, frames, runs)
    return P4Figures(rows, baseline, seconds)


def baseline_result(baseline: Baseline) -> Result:
    what = "one-table forwarding program (baseline)"
    return rate_result("p4", what, "bmv2", baseline.packets, list(baseline.seconds))


def _send_all(bmv2: Bmv2Switch, frames: list[bytes], expected: int) -> list[tuple[int, bytes]]:
    """Sends ``frames`` on IN_PORT and returns the outputs once ``expected`` arrived."""
    out: list[tuple[int, bytes]] = []
    for number, frame in enumerate(frames):
        bmv2.send(IN_PORT, frame)
        # At most WINDOW frames in flight: simple_switch drops what its queues cannot
        # hold (an egress queue holds 64 packets), and a dropped frame is not a speed.
        if number + 1 - len(out) > WINDOW:
            out += bmv2.receive(1, timeout=10.0, grace=0.0)
    return out + bmv2.receive(expected - len(out), timeout=10.0, grace=0.0)


@contextmanager
def _running(toolchain: Toolchain, program_json: Path) -> Iterator[tuple[Bmv2Switch, Cli]]:
    """A fresh simple_switch running ``program_json`` and its CLI, stopped on the way out."""
    bmv2 = Bmv2Switch(toolchain, program_json)
    try:
        cli = Cli(toolchain, bmv2.thrift_port)
        try:
            yield bmv2, cli
        finally:
            cli.close()
    finally:
        bmv2.stop()


def one_table_baseline(
    toolchain: Toolchain, program_json: Path, frames: list[bytes], runs: int
) -> Baseline:
    seconds: list[float] = []
    out: list[tuple[int, bytes]] = []
    for _ in range(runs):
        with _running(toolchain, program_json) as (bmv2, cli):
            cli.run(f"table_add OneIngress.forward OneIngress.set_port {IN_PORT} => {OUT_PORT}")
            started = time.perf_counter()
            out = _send_all(bmv2, frames, len(frames))
            seconds.append(time.perf_counter() - started)
    forwarded = sum(
        1
        for (port, data), frame in zip(out, frames, strict=False)
        if (port, data) == (OUT_PORT, frame)
    )
    return Baseline(
        len(frames) / statistics.median(seconds), forwarded, len(frames), tuple(seconds)
    )


def _case(
    program: str,
    name: str,
    profile: TargetProfile,
    toolchain: Toolchain,
    program_json: Path,
    packets: int,
    runs: int,
) -> Row:
    image = _image(name, profile)
    frames = _frames(image, profile, packets)
    sim_seconds: list[float] = []
    bmv2_seconds: list[float] = []
    sim_out: list[tuple[int, bytes]] = []
    bmv2_out: list[tuple[int, bytes]] = []
    for _ in range(runs):
        switch = Switch("bench", profile, switch_id=1)
        sim = SimControl(switch.control)
        Deployment(sim).apply(image)
        _steer(sim)
        switch.control.set_default_port(OUT_PORT)
        started = time.perf_counter()
        sim_out = [o for frame in frames for o in switch.process(frame, IN_PORT).outputs]
        sim_seconds.append(time.perf_counter() - started)
        with _running(toolchain, program_json) as (bmv2, cli):
            target = control_for(cli, profile, program_json)
            target.configure(switch_id=1, ports=16)
            Deployment(target).apply(image)
            _steer(target)
            target.set_default_port(OUT_PORT)
            started = time.perf_counter()
            bmv2_out = _send_all(bmv2, frames, len(sim_out))
            bmv2_seconds.append(time.perf_counter() - started)
    same = sum(1 for a, b in zip(sim_out, bmv2_out, strict=False) if a == b)
    placement = image.dpfs[0].placement
    return Row(
        program,
        name,
        placement,
        packets / statistics.median(bmv2_seconds),
        packets / statistics.median(sim_seconds),
        same,
        packets,
        tuple(bmv2_seconds),
        tuple(sim_seconds),
    )


def format_p4_table(figures: P4Figures, *, packets: int, runs: int) -> str:
    rows, compile_seconds, baseline = figures.rows, figures.compile_seconds, figures.baseline
    cells = [
        (
            r.program,
            r.dpf,
            r.placement,
            f"{r.bmv2_pps:,.0f}",
            f"{r.sim_pps:,.0f}",
            f"{r.identical}/{r.packets}",
        )
        for r in rows
    ]
    widths = [max(len(h), *(len(c[i]) for c in cells)) for i, h in enumerate(HEADER)]
    lines = [
        f"SwitchVM on bmv2 (simple_switch: the tofino1 program, switchvm, and tofino1_fit's "
        f"stage-structured program, staged) vs the simulator: {packets} packets, "
        f"median of {runs} runs"
        + (
            f"; p4c-bm2-ss compiled the program in {compile_seconds:.1f} s"
            if compile_seconds
            else ""
        ),
        "  ".join(h.ljust(w) for h, w in zip(HEADER, widths, strict=True)),
    ]
    lines += ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) for row in cells]
    lines.append(
        f"baseline: simple_switch running a one-table forwarding program: "
        f"{baseline.pps:,.0f} pkt/s ({baseline.forwarded}/{baseline.packets} forwarded)"
    )
    return "\n".join(lines) + "\n"
