"""Throughput benchmarks of dpfc's back ends (``python -m dpfc.bench sim``).

:func:`simulator_rows` measures packets per second of the SwitchVM simulator on the
paper's example DPFs, each on one tofino1 switch:

* ``counter`` (``examples/asm/counter.dpfasm``): in-switch code, FAADD on a per-ID counter;
* ``cache_get`` (``examples/asm/cache_get.dpfasm``): in-packet code, with cached keys
  (hits: values loaded, hit counter incremented, returned to the sender) and uncached keys
  (misses: the null segment's invalid tuple; the key is pushed and the packet passed on).

Each case runs two ways: ``switch.process`` (one pass: the data path alone) and the
:class:`~dpfc.backends.sim.Network` loop (``send`` then ``run``: queueing, wiring and
delivery to hosts included). Each figure is the median of ``runs`` timed runs of
``packets`` packets, on fresh switches. Numbers depend on the machine; nothing here
asserts a speed.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from dpfc.asm import assemble_text
from dpfc.backends.sim import Network, SimDriver, Switch
from dpfc.deploy import Deployment
from dpfc.encoding import SwitchVMHeader, encode_options
from dpfc.isa.bundle import PC
from dpfc.link import LinkInput
from dpfc.machine import MachineProgram, encode_program
from dpfc.objfile import ObjectFile
from dpfc.packet import build_frame, build_inner
from dpfc.target import BUILTIN_PROFILES, TargetProfile

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "asm"
TENANT = 7
CACHE_APP = 0x4B5601
CACHED = {100: 1, 200: 2, 300: 3}  # key -> tuple index
HEADER = ("DPF", "placement", "case", "switch.process", "Network loop")


@dataclass(frozen=True)
class Row:
    dpf: str
    placement: str
    case: str
    process_pps: float
    network_pps: float


def _program(name: str, profile: TargetProfile) -> MachineProgram:
    path = EXAMPLES / f"{name}.dpfasm"
    if not path.exists():
        raise SystemExit(f"dpfc.bench: {path} not found (run from a clone of the repository)")
    return assemble_text(path.read_text(encoding="utf-8"), str(path), profile)


def _network(profile: TargetProfile) -> tuple[Network, Switch]:
    """One switch, a client on port 0 and a server on port 1, routes to both."""
    network = Network(profile, seed=1)
    switch = network.add_switch("s1")
    network.add_host(
        "client", mac=bytes([2, 0, 0, 0, 0, 1]), ip=bytes([10, 0, 0, 1]), switch="s1", port=0
    )
    network.add_host(
        "server", mac=bytes([2, 0, 0, 0, 0, 2]), ip=bytes([10, 0, 0, 2]), switch="s1", port=1
    )
    switch.control.set_route(bytes([10, 0, 0, 1]), 0)
    switch.control.set_route(bytes([10, 0, 0, 2]), 1)
    return network, switch


def _frame(header: SwitchVMHeader, profile: TargetProfile) -> bytes:
    return build_frame(
        tenant_id=TENANT,
        options=encode_options(header, profile).data,
        inner=build_inner(b"bench"),
        eth_src="02:00:00:00:00:01",
        eth_dst="02:00:00:00:00:02",
        ip_src="10.0.0.1",
        ip_dst="10.0.0.2",
    )


def counter_setup(profile: TargetProfile) -> tuple[Network, Switch, list[bytes]]:
    network, switch = _network(profile)
    control = switch.control
    program = _program("counter", profile)
    # The hand-written counter is shared code (tenant None); its memory is mapped by hand.
    image = Deployment(SimDriver(switch.control)).link(
        [LinkInput(ObjectFile.of_program(encode_program(program)), None)]
    )
    entry = PC(False, image.dpf(program.name, None).entry or 0)
    control.authorize(TENANT)
    control.map_segment(TENANT, 0, 0, 0, 16)
    frames = [_frame(SwitchVMHeader(dpf_ptr=entry, stack=(ident,)), profile) for ident in range(16)]
    return network, switch, frames


def cache_setup(profile: TargetProfile, *, hits: bool) -> tuple[Network, Switch, list[bytes]]:
    network, switch = _network(profile)
    control = switch.control
    program = _program("cache_get", profile)
    control.authorize(TENANT, app_id=program.app_id)
    for key, index in CACHED.items():
        control.map_direct(TENANT, 0, 0, key, value=0x8000_0000 | index)
    control.map_null_segment(TENANT, 0, 0)
    for lane in range(3):
        control.map_segment(TENANT, 2, lane, 0, 4)
        control.write_memory(TENANT, 2, lane, 0, [0, 0x11 + lane, 0x21 + lane, 0x31 + lane])
    control.map_segment(TENANT, 3, 0, 0, 4)
    keys = list(CACHED) if hits else [400, 500, 600]
    frames = [_frame(program.header(stack=(key,)), profile) for key in keys]
    return network, switch, frames


Setup = Callable[[], tuple[Network, Switch, list[bytes]]]


def _time_process(setup: Setup, packets: int) -> float:
    _, switch, frames = setup()
    process = switch.process
    count = len(frames)
    start = time.perf_counter()
    for index in range(packets):
        process(frames[index % count], 0)
    return time.perf_counter() - start


def _time_network(setup: Setup, packets: int) -> float:
    network, _, frames = setup()
    count = len(frames)
    start = time.perf_counter()
    for index in range(packets):
        network.send("client", frames[index % count])
    network.run(keep=False)
    return time.perf_counter() - start


def _rate(measure: Callable[[Setup, int], float], setup: Setup, packets: int, runs: int) -> float:
    measure(setup, min(packets, 100))  # warm-up: first-use costs (caches, lazy imports)
    seconds = statistics.median(measure(setup, packets) for _ in range(runs))
    return packets / seconds if seconds > 0 else float("inf")


def simulator_rows(packets: int = 2000, runs: int = 5, profile_name: str = "tofino1") -> list[Row]:
    profile = BUILTIN_PROFILES[profile_name]
    cases: list[tuple[str, str, str, Setup]] = [
        ("counter", "in-switch", "per-ID count", lambda: counter_setup(profile)),
        ("cache_get", "in-packet", "hits", lambda: cache_setup(profile, hits=True)),
        ("cache_get", "in-packet", "misses", lambda: cache_setup(profile, hits=False)),
    ]
    return [
        Row(
            dpf,
            placement,
            case,
            _rate(_time_process, setup, packets, runs),
            _rate(_time_network, setup, packets, runs),
        )
        for dpf, placement, case, setup in cases
    ]


def format_table(rows: list[Row], *, packets: int, runs: int, profile: str = "tofino1") -> str:
    body = [
        (r.dpf, r.placement, r.case, f"{r.process_pps:,.0f} pkt/s", f"{r.network_pps:,.0f} pkt/s")
        for r in rows
    ]
    widths = [max(len(line[i]) for line in [HEADER, *body]) for i in range(len(HEADER))]

    def line(cells: tuple[str, ...]) -> str:
        text = [
            c.ljust(w) if i < 3 else c.rjust(w)
            for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        ]
        return "  ".join(text).rstrip()

    title = (
        f"SwitchVM simulator throughput: {profile}, one switch, {packets} packets per run, "
        f"median of {runs} run(s)"
    )
    rule = "  ".join("-" * w for w in widths)
    return "\n".join([title, line(HEADER), rule, *(line(cells) for cells in body)]) + "\n"


__all__ = ["Row", "cache_setup", "counter_setup", "format_table", "simulator_rows"]
