"""The packets the simulator benchmarks send, and the switches they are sent to.

A workload is a name and a ``setup``: a function that builds one tofino1 switch (inside a
:class:`~dpfc.backends.sim.Network` with a client on port 0 and a server on port 1), installs
a DPF on it for its tenant(s), maps the DPF's memory, and returns the frames that invoke it.
Nothing here is timed; :mod:`dpfc.bench.sim` and :mod:`dpfc.bench.scaling` time what an
engine does with the frames. The DPFs are the paper's hand-written examples
(``examples/asm``) plus generated ones (``eu_chain_source``: one FAADD per EU, so that the
work grows with the EU count), so that the workloads need no Z3 and build in milliseconds.

Every workload's frames take the path its name says (counted, hit, missed, balanced,
accepted): ``tests/test_bench.py`` runs each frame once and checks the verdict.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from dpfc.asm import assemble_text
from dpfc.backends.sim import Destination, Network, SimControl, Switch
from dpfc.deploy import Deployment
from dpfc.encoding import SwitchVMHeader, encode_options
from dpfc.isa import PC
from dpfc.link import LinkInput, LinkOptions, link
from dpfc.machine import MachineProgram, Placement, encode_program
from dpfc.objfile import ObjectFile
from dpfc.packet import build_frame, build_inner
from dpfc.target import TargetProfile

from .link import make_inputs
from .paths import ASM_EXAMPLES

TENANT = 7
CACHE_APP = 0x4B5601
CACHED = {100: 1, 200: 2, 300: 3}  # key -> tuple index
SERVERS = 8  # LB3 picks among 2^3 servers
INSTANCES = 64  # Paxos instances the acceptor's arrays hold
FRAME_SAMPLE = 256  # distinct frames at most: building one with scapy takes about 1 ms

Setup = Callable[[], tuple[Network, Switch, list[bytes]]]


@dataclass(frozen=True)
class Workload:
    what: str  # the row's name in the table, e.g. "counter, in-switch, 1 tenant"
    setup: Setup


def load(name: str, profile: TargetProfile, placement: str | None = None) -> MachineProgram:
    """Assemble ``examples/asm/NAME.dpfasm``; ``placement`` re-homes the same code (the
    in-switch copy of an in-packet example) by rewriting its ``.placement`` directive."""
    path = ASM_EXAMPLES / f"{name}.dpfasm"
    if not path.exists():
        raise SystemExit(f"dpfc.bench: {path} not found (run from a clone of the repository)")
    text = path.read_text(encoding="utf-8")
    if placement is not None:
        text = re.sub(r"^\.placement \w+", f".placement {placement}", text, count=1, flags=re.M)
    return assemble_text(text, str(path), profile)


def network(profile: TargetProfile) -> tuple[Network, Switch]:
    """One switch, a client on port 0 and a server on port 1, routes to both."""
    net = Network(profile, seed=1)
    switch = net.add_switch("s1")
    net.add_host(
        "client", mac=bytes([2, 0, 0, 0, 0, 1]), ip=bytes([10, 0, 0, 1]), switch="s1", port=0
    )
    net.add_host(
        "server", mac=bytes([2, 0, 0, 0, 0, 2]), ip=bytes([10, 0, 0, 2]), switch="s1", port=1
    )
    switch.control.set_route(bytes([10, 0, 0, 1]), 0)
    switch.control.set_route(bytes([10, 0, 0, 2]), 1)
    return net, switch


def frame(header: SwitchVMHeader, profile: TargetProfile, tenant: int = TENANT) -> bytes:
    return build_frame(
        tenant_id=tenant,
        options=encode_options(header, profile).data,
        inner=build_inner(b"bench"),
        eth_src="02:00:00:00:00:01",
        eth_dst="02:00:00:00:00:02",
        ip_src="10.0.0.1",
        ip_dst="10.0.0.2",
    )


def _install(switch: Switch, program: MachineProgram) -> PC:
    """Link ``program`` as shared code (tenant None: its memory is mapped by hand) into the
    switch's code memory; its entry."""
    image = Deployment(SimControl(switch.control)).link(
        [LinkInput(ObjectFile.of_program(encode_program(program)), None)]
    )
    return PC(False, image.dpf(program.name, None).entry or 0)


def _invoke(
    switch: Switch, program: MachineProgram, stacks: Sequence[tuple[int, ...]]
) -> list[bytes]:
    """Authorize the tenant for ``program`` and build one frame per stack: in-packet code
    rides in each frame, in-switch code is installed first and named by its entry."""
    profile = switch.profile
    if program.placement is Placement.SWITCH:
        entry = _install(switch, program)
        switch.control.authorize(TENANT)
        return [frame(SwitchVMHeader(dpf_ptr=entry, stack=s), profile) for s in stacks]
    switch.control.authorize(TENANT, app_id=program.app_id)
    return [frame(program.header(stack=s), profile) for s in stacks]


def counter(
    profile: TargetProfile, placement: str = "switch"
) -> tuple[Network, Switch, list[bytes]]:
    """The per-ID counter: one FAADD per packet on 16 counters of one tenant."""
    net, switch = network(profile)
    frames = _invoke(switch, load("counter", profile, placement), [(ident,) for ident in range(16)])
    switch.control.map_segment(TENANT, 0, 0, 0, 16)
    return net, switch, frames


def cache_get(profile: TargetProfile, *, hits: bool) -> tuple[Network, Switch, list[bytes]]:
    """KVS cache-get (in-packet): cached keys load their tuple and return to the sender;
    uncached ones find the null segment's invalid tuple and pass on."""
    net, switch = network(profile)
    control = switch.control
    keys = list(CACHED) if hits else [400, 500, 600]
    frames = _invoke(switch, load("cache_get", profile), [(key,) for key in keys])
    for key, index in CACHED.items():
        control.map_direct(TENANT, 0, 0, key, value=0x8000_0000 | index)
    control.map_null_segment(TENANT, 0, 0)
    for lane in range(3):
        control.map_segment(TENANT, 2, lane, 0, 4)
        control.write_memory(TENANT, 2, lane, 0, [0, 0x11 + lane, 0x21 + lane, 0x31 + lane])
    control.map_segment(TENANT, 3, 0, 0, 4)
    return net, switch, frames


def lb3(profile: TargetProfile, placement: str = "packet") -> tuple[Network, Switch, list[bytes]]:
    """LB3 (power of two choices): two random servers, their loads compared, forwarded."""
    net, switch = network(profile)
    control = switch.control
    frames = _invoke(switch, load("lb3_client", profile, placement), [()])
    for lane in (0, 1):  # two copies of the servers' loads
        control.map_segment(TENANT, 1, lane, 0, SERVERS)
        control.write_memory(TENANT, 1, lane, 0, [10 * (i + 1) for i in range(SERVERS)])
    for server in range(SERVERS):
        control.set_forwarding(TENANT, server, Destination(port=2 + server))
    return net, switch, frames


def paxos_acceptor(
    profile: TargetProfile, placement: str = "packet"
) -> tuple[Network, Switch, list[bytes]]:
    """The Paxos acceptor: proposals of the current round, accepted and multicast."""
    net, switch = network(profile)
    control = switch.control
    stacks = [(instance, 1, 1000 + instance) for instance in range(16)]
    frames = _invoke(switch, load("paxos_acceptor", profile, placement), stacks)
    control.map_segment(TENANT, 0, 0, 0, INSTANCES)  # rounds
    control.map_segment(TENANT, 2, 0, 0, INSTANCES)  # values
    control.map_segment(TENANT, 2, 1, 0, INSTANCES)  # vrounds
    control.set_multicast_group(TENANT, 1, [Destination(port=1), Destination(port=2)])
    return net, switch, frames


def _spread(count: int) -> list[int]:
    """At most FRAME_SAMPLE indices in ``range(count)``, evenly spaced, first and last in."""
    if count <= FRAME_SAMPLE:
        return list(range(count))
    return sorted({round(i * (count - 1) / (FRAME_SAMPLE - 1)) for i in range(FRAME_SAMPLE)})


def tenants(profile: TargetProfile, count: int) -> tuple[Network, Switch, list[bytes]]:
    """The in-switch counter shared by ``count`` tenants, each with one direct-mapped
    counter word (a segment each would exhaust a lane's 1,500 segments); the frames come
    from up to FRAME_SAMPLE tenants spread over the whole range."""
    net, switch = network(profile)
    control = switch.control
    entry = _install(switch, load("counter", profile))
    for tenant in range(1, count + 1):
        control.authorize(tenant)
        control.map_direct(tenant, 0, 0, 0)
    header = SwitchVMHeader(dpf_ptr=entry, stack=(0,))
    return net, switch, [frame(header, profile, 1 + i) for i in _spread(count)]


def eu_chain_source(eus: int) -> str:
    """An in-switch DPF whose packets run ``eus`` EUs, each one FAADD on its lane 0."""
    lines = [".dpf chain", ".placement switch", "prolog entry:", " POP A0", " JMP eu_0"]
    for eu in range(eus):
        last = eu == eus - 1
        lines += [f"eu{eu} eu_{eu}:", " LOAD_IMM B0, 1", " FAADD B0, [A0]"]
        lines.append(" HALT done" if last else f" JMP eu_{eu + 1}")
    lines += ["epilog done:", " PUSH A0, B0"]
    return "\n".join(lines) + "\n"


def eu_chain(profile: TargetProfile, eus: int) -> tuple[Network, Switch, list[bytes]]:
    net, switch = network(profile)
    program = assemble_text(eu_chain_source(eus), f"chain{eus}.dpfasm", profile)
    frames = _invoke(switch, program, [(ident,) for ident in range(16)])
    for eu in range(eus):
        switch.control.map_segment(TENANT, eu, 0, 0, 16)
    return net, switch, frames


def installed(profile: TargetProfile, dpfs: int) -> tuple[Network, Switch, list[bytes]]:
    """``dpfs`` distinct in-switch DPFs (those of ``python -m dpfc.bench link``) of up to
    100 tenants, linked into one image and deployed; frames invoke up to FRAME_SAMPLE of
    them, spread over the image."""
    net, switch = network(profile)
    image = link(make_inputs(dpfs, min(dpfs, 100), profile), LinkOptions(profile=profile))
    Deployment(SimControl(switch.control)).apply(image)
    frames = []
    for index in _spread(dpfs):
        dpf = image.dpfs[index]
        tenant = dpf.tenant if dpf.tenant is not None else TENANT
        header = SwitchVMHeader(
            app_id=dpf.app_id, dpf_ptr=PC(False, dpf.entry or 0), stack=(index % 64,)
        )
        frames.append(frame(header, profile, tenant))
    return net, switch, frames
