"""The paper's applications, end to end: hand-written DPFs on simulated switches.

Every test assembles DPFs from ``examples/asm/``, builds real frames with scapy
(:mod:`dpfc.packet`), runs them through :class:`dpfc.backends.sim.Network` and asserts the
behaviour the SwitchVM paper describes for the application: counter (§3.1), KVS cache with a
count-min sketch on a second pipe (§4.1), the three load balancers (§4.2), Paxos with a
leader and three acceptors (§4.3, App. A), and the in-place replacement of a load-balancing
policy under traffic (§6.2.1, Figure 6b).
"""

from __future__ import annotations

import itertools
import random
import re
from collections import Counter
from dataclasses import dataclass, replace

import pytest

from dpfc.asm import assemble_text
from dpfc.backends.sim import (
    ControlPlane,
    Destination,
    Host,
    Network,
    PassRecord,
)
from dpfc.encoding import encode_options
from dpfc.isa.bundle import PC, CodeImage
from dpfc.isa.semantics import hash_word
from dpfc.machine.program import MachineProgram
from dpfc.packet.layers import build_frame, build_inner
from dpfc.packet.wire import ParsedPacket, parse_packet
from dpfc.switch import SwitchRefused
from dpfc.target import BUILTIN_PROFILES
from tests.conftest import ROOT
from tests.sim_install import Installed, deployment, install_program, plan_replace

PROFILE = BUILTIN_PROFILES["tofino1"]
ASM = ROOT / "examples" / "asm"
VALID = 0x8000_0000  # the valid bit of a KVS tuple


# -- helpers ----------------------------------------------------------------------------------
def load(name: str, placement: str | None = None) -> MachineProgram:
    """Assemble ``examples/asm/NAME.dpfasm``; ``placement`` re-homes the same code (e.g. an
    in-switch copy of an in-packet example) by rewriting its ``.placement`` directive."""
    text = (ASM / f"{name}.dpfasm").read_text()
    if placement is not None:
        text, count = re.subn(r"^\.placement \w+", f".placement {placement}", text, flags=re.M)
        assert count == 1
    return assemble_text(text, f"{name}.dpfasm", PROFILE)


def add_host(net: Network, name: str, switch: str, port: int, number: int) -> Host:
    return net.add_host(
        name,
        mac=bytes([2, 0, 0, 0, 0, number]),
        ip=bytes([10, 0, 0, number]),
        switch=switch,
        port=port,
    )


def _mac(raw: bytes) -> str:
    return ":".join(f"{b:02x}" for b in raw)


def _ip(raw: bytes) -> str:
    return ".".join(str(b) for b in raw)


def frame(
    program: MachineProgram,
    stack: tuple[int, ...],
    *,
    tenant: int,
    src: Host,
    dst: Host,
    dpf_ptr: PC | None = None,
) -> bytes:
    """A scapy-built frame from ``src`` to ``dst`` that invokes ``program`` with ``stack``
    (``dpf_ptr`` overrides the entry, e.g. where an in-switch DPF was installed)."""
    header = program.header(stack)
    if dpf_ptr is not None:
        header = replace(header, dpf_ptr=dpf_ptr)
    return build_frame(
        tenant_id=tenant,
        options=encode_options(header, PROFILE).data,
        inner=build_inner(b"request"),
        eth_src=_mac(src.mac),
        eth_dst=_mac(dst.mac),
        ip_src=_ip(src.ip),
        ip_dst=_ip(dst.ip),
    )


def parsed(raw: bytes) -> ParsedPacket:
    return parse_packet(raw, PROFILE)


def stack_of(raw: bytes) -> tuple[int, ...]:
    header = parsed(raw).header
    assert header is not None
    return header.stack


def eu0_registers(record: PassRecord) -> list[int]:
    """The A registers after EU0, from the pass trace (run with ``trace=True``)."""
    trace = record.result.trace
    assert trace is not None
    stage = next(s for s in trace.stages if s.name == "eu0")
    return list(stage.registers[: trace.lanes])


def slots_run(record: PassRecord) -> set[tuple[int, int]]:
    """The (stage, code-memory slot) pairs a pass of in-switch code ran."""
    assert not any(pc.in_packet for _, pc in record.result.executed)
    return {(stage, pc.index) for stage, pc in record.result.executed}


# -- counter (§3.1) ----------------------------------------------------------------------------
def test_counter_counts_per_id_and_pushes_the_old_value() -> None:
    net = Network(PROFILE)
    net.add_switch("s")
    client = add_host(net, "client", "s", 0, 1)
    server = add_host(net, "server", "s", 1, 2)
    control = net.switches["s"].control
    tenant = 5
    control.authorize(tenant)
    control.map_segment(tenant, 0, 0, 0, 16)
    control.set_route(server.ip, 1)
    counter = load("counter")
    installed = install_program(control, counter)
    sends = {3: 4, 7: 1, 11: 6}
    order = [i for i, n in sends.items() for _ in range(n)]
    random.Random(1).shuffle(order)
    for ident in order:
        net.send(
            "client",
            frame(
                counter, (ident,), tenant=tenant, src=client, dst=server, dpf_ptr=installed.entry
            ),
        )
    net.run()
    stacks = [stack_of(f) for f in server.received]
    assert [s[0] for s in stacks] == order
    for ident, count in sends.items():
        # FAADD returns the value before the increment: the k-th packet of an id sees k-1
        assert [old for i, old in stacks if i == ident] == list(range(count))
        assert control.read_memory(tenant, 0, 0, ident) == [count]
    assert control.read_memory(tenant, 0, 0, 0) == [0]
    assert all(len(s) == 2 for s in stacks)


# -- KVS cache (§4.1) --------------------------------------------------------------------------
KVS_TENANT = 0x4B
CACHE_SIZE = 128
SKETCH_WIDTH = 1024


@dataclass
class Kvs:
    net: Network
    control: ControlPlane
    client: Host
    server: Host
    cached: dict[int, int]  # key -> tuple index
    values: list[list[int]]  # [lane][index]: the 12-byte values, 4 bytes per lane
    get: MachineProgram
    put: MachineProgram
    update: MachineProgram

    def send_get(self, key: int) -> None:
        raw = frame(self.get, (key,), tenant=KVS_TENANT, src=self.client, dst=self.server)
        self.net.send("client", raw)


def kvs_setup(seed: int = 3) -> Kvs:
    """One switch, two pipes joined by a cable (port 1 <-> port 17): the client on pipe 0,
    which caches (cache-get/put/update), the server on pipe 1, which counts misses in a
    count-min sketch; client -> server traffic crosses the cable."""
    net = Network(PROFILE, seed=seed)
    switch = net.add_switch("kvs", pipes=2, ports_per_pipe=16)
    client = add_host(net, "client", "kvs", 0, 1)
    server = add_host(net, "server", "kvs", 16, 2)
    net.connect("kvs", 1, "kvs", 17)
    control = switch.control
    get, put, update = load("cache_get"), load("cache_put"), load("cache_update")
    assert get.app_id == put.app_id != update.app_id
    # Selective execution: the caching pipe accepts both tokens, the sketch pipe only the
    # first, and passes cache-update packets on unexecuted.
    control.authorize(KVS_TENANT, app_id=get.app_id, app_ids=[update.app_id], pipes=0)
    control.authorize(KVS_TENANT, app_id=get.app_id, unauthorized="pass", pipes=1)
    control.set_route(client.ip, 0, pipes=0)
    control.set_route(server.ip, 1, pipes=0)
    control.set_route(client.ip, 17, pipes=1)
    control.set_route(server.ip, 16, pipes=1)

    rng = random.Random(seed)
    keys = rng.sample(range(1, 1 << 31), CACHE_SIZE)
    cached = {key: index for index, key in enumerate(keys)}
    values = [[rng.getrandbits(32) for _ in range(CACHE_SIZE)] for _ in range(3)]
    for key, index in cached.items():
        control.map_direct(KVS_TENANT, 0, 0, key, value=VALID | index, pipes=0)
    control.map_null_segment(KVS_TENANT, 0, 0, pipes=0)  # every other key: the invalid tuple
    for lane in range(3):
        control.map_segment(KVS_TENANT, 2, lane, 0, CACHE_SIZE, pipes=0)
        control.write_memory(KVS_TENANT, 2, lane, 0, values[lane], pipes=0)
    control.map_segment(KVS_TENANT, 3, 0, 0, CACHE_SIZE, pipes=0)  # hit counters

    for lane in range(3):
        control.map_segment(KVS_TENANT, 1, lane, 0, SKETCH_WIDTH, pipes=1)
    empty, sketch = load("empty"), load("count_min")
    # cache-put names @switch:0, cache-get's miss path @switch:1 (the files' prolog slots)
    assert install_program(control, empty, prolog_slot=0, pipes=1).entry == PC(False, 0)
    assert install_program(control, sketch, prolog_slot=1, pipes=1).entry == PC(False, 1)
    return Kvs(net, control, client, server, cached, values, get, put, update)


def sketch_rows(key: int) -> list[int]:
    return [hash_word(PROFILE.hash_for_lane(lane), key) & (SKETCH_WIDTH - 1) for lane in range(3)]


def test_kvs_cache_hits_return_values_and_misses_feed_the_sketch() -> None:
    kvs = kvs_setup()
    rng = random.Random(11)
    cached = list(kvs.cached)
    uncached = [k for k in rng.sample(range(1, 1 << 31), 160) if k not in kvs.cached]
    # a skewed mix: popular cached keys, and uncached keys that repeat (so the sketch grows)
    requests = [
        rng.choice(cached[:40]) if rng.random() < 0.55 else rng.choice(uncached[:60])
        for _ in range(1000)
    ]
    frames: dict[int, bytes] = {}
    for key in requests:
        if key not in frames:
            frames[key] = frame(kvs.get, (key,), tenant=KVS_TENANT, src=kvs.client, dst=kvs.server)
        kvs.net.send("client", frames[key])
    kvs.net.run()

    hits = [k for k in requests if k in kvs.cached]
    misses = [k for k in requests if k not in kvs.cached]
    assert 400 < len(hits) < 700 and len(hits) + len(misses) == 1000

    # hits: back to the client, code header dropped, (key, v0, v1, v2) on the stack
    assert len(kvs.client.received) == len(hits)
    for key, raw in zip(hits, kvs.client.received, strict=True):
        packet = parsed(raw)
        assert packet.header is not None
        index = kvs.cached[key]
        assert packet.header.stack == (key, *(kvs.values[lane][index] for lane in range(3)))
        assert packet.header.code == CodeImage()
        assert (packet.ip_src, packet.ip_dst) == (kvs.server.ip, kvs.client.ip)
    hit_counts = Counter(hits)
    assert kvs.control.read_memory(KVS_TENANT, 3, 0, 0, CACHE_SIZE, pipe=0) == [
        hit_counts[key] for key in kvs.cached
    ]

    # misses: through the cable to the sketch pipe, then to the server with (key, frequency)
    assert len(kvs.server.received) == len(misses)
    model = [[0] * SKETCH_WIDTH for _ in range(3)]
    reported: dict[int, list[int]] = {}
    for key, raw in zip(misses, kvs.server.received, strict=True):
        rows = sketch_rows(key)
        estimate = min(model[lane][rows[lane]] for lane in range(3))
        for lane in range(3):
            model[lane][rows[lane]] += 1
        header = parsed(raw).header
        assert header is not None
        assert header.stack == (key, estimate)
        assert header.dpf_ptr == PC(False, 1) and header.code == CodeImage()
        reported.setdefault(key, []).append(estimate)
    for series in reported.values():  # the estimate of a key rises with every miss
        assert all(b > a for a, b in itertools.pairwise(series))
        assert series[0] >= 0
    assert max(len(s) for s in reported.values()) > 5
    for lane in range(3):
        assert kvs.control.read_memory(KVS_TENANT, 1, lane, 0, SKETCH_WIDTH, pipe=1) == model[lane]
    # every miss ran cache-get on pipe 0 and count-min on pipe 1, nothing else
    pipe1 = [r for r in kvs.net.records if r.pipe == 1]
    assert len(pipe1) == len(misses)
    assert all(r.result.executed[0] == (0, PC(False, 1)) for r in pipe1)
    assert kvs.control.stats(KVS_TENANT).unmapped == 0


def test_kvs_put_invalidates_and_update_installs() -> None:
    kvs = kvs_setup()
    net, control = kvs.net, kvs.control
    key, evicted = list(kvs.cached)[5], list(kvs.cached)[9]
    assert 12345 not in kvs.cached
    index = kvs.cached[key]

    def get(k: int) -> str:
        """Send one GET; 'hit' (answered by the switch) or 'miss' (reached the server)."""
        before = (len(kvs.client.received), len(kvs.server.received))
        kvs.send_get(k)
        net.run()
        after = (len(kvs.client.received), len(kvs.server.received))
        assert after[0] + after[1] == before[0] + before[1] + 1
        return "hit" if after[0] > before[0] else "miss"

    def update(k: int, tuple_index: int, value: tuple[int, int, int]) -> None:
        """The server installs ``k`` at ``tuple_index``; the ACK comes back to it."""
        received = len(kvs.server.received)
        start = len(net.records)
        stack = (k, VALID | tuple_index, *value)
        net.send(
            "server", frame(kvs.update, stack, tenant=KVS_TENANT, src=kvs.server, dst=kvs.client)
        )
        net.run()
        assert len(kvs.server.received) == received + 1
        ack = parsed(kvs.server.received[-1])
        assert ack.header is not None and ack.header.stack == (k, tuple_index)
        assert ack.header.code == CodeImage() and ack.ip_dst == kvs.server.ip
        passes = net.records[start:]
        # sketch pipe (twice: in and back) passes it unexecuted; the caching pipe runs it
        assert [(r.pipe, r.result.verdict) for r in passes] == [
            (1, "pass"),
            (0, "return_to_sender"),
            (1, "pass"),
        ]
        assert passes[0].result.executed == () and passes[2].result.executed == ()

    assert get(key) == "hit"
    # PUT: invalidate on pipe 0, then the empty DPF (slot 0) on pipe 1 passes it to the server
    start = len(net.records)
    net.send("client", frame(kvs.put, (key,), tenant=KVS_TENANT, src=kvs.client, dst=kvs.server))
    net.run()
    assert stack_of(kvs.server.received[-1]) == (key,)
    assert [r.result.executed[0] for r in net.records[start:]] == [
        (0, PC(True, 0)),
        (0, PC(False, 0)),
    ]
    assert control.read_memory(KVS_TENANT, 0, 0, key) == [index]  # valid bit cleared
    assert get(key) == "miss"
    assert stack_of(kvs.server.received[-1])[0] == key
    # a PUT of a key that is not cached touches only the null segment's invalid tuple
    net.send("client", frame(kvs.put, (12345,), tenant=KVS_TENANT, src=kvs.client, dst=kvs.server))
    net.run()
    assert get(12345) == "miss"

    # UPDATE re-validates the key with a new value
    update(key, index, (1, 2, 3))
    assert control.read_memory(KVS_TENANT, 0, 0, key) == [VALID | index]
    assert get(key) == "hit"
    assert stack_of(kvs.client.received[-1]) == (key, 1, 2, 3)

    # eviction: the control plane unmaps a key, maps a new one onto 0, the server installs it
    new_key = 0x0BAD_CAFE
    assert new_key not in kvs.cached
    control.unmap_direct(KVS_TENANT, 0, 0, evicted, pipes=0)
    control.map_direct(KVS_TENANT, 0, 0, new_key, value=0, pipes=0)
    assert get(evicted) == "miss" and get(new_key) == "miss"
    update(new_key, kvs.cached[evicted], (0xAAAA, 0xBBBB, 0xCCCC))
    assert get(new_key) == "hit"
    assert stack_of(kvs.client.received[-1]) == (new_key, 0xAAAA, 0xBBBB, 0xCCCC)
    hits = control.read_memory(KVS_TENANT, 3, 0, 0, CACHE_SIZE, pipe=0)
    assert hits[index] == 2 and hits[kvs.cached[evicted]] == 1
    stats = control.stats(KVS_TENANT, pipes=1)
    assert stats.unauthorized == 4 and stats.passed >= 4  # the two updates, there and back


def test_a_permission_entry_accepts_several_app_tokens() -> None:
    """Selective execution needs one token per DPF authorization (§3.3): a tenant's entry
    holds ``app_id`` plus ``app_ids``; a bad token is refused without any change."""
    kvs = kvs_setup()
    control = kvs.control
    entry = control.permissions(KVS_TENANT, pipe=0)
    assert entry is not None and entry.accepts(kvs.update.app_id) and entry.accepts(kvs.get.app_id)
    with pytest.raises(SwitchRefused) as error:
        control.update_permissions(KVS_TENANT, app_ids=[1 << 32], pipes=0)
    assert error.value.code == "DPF4018" and control.permissions(KVS_TENANT, pipe=0) == entry
    # withdrawing cache-update's token makes the caching pipe refuse (drop) its packets
    control.update_permissions(KVS_TENANT, app_ids=(), pipes=0)
    stack = (next(iter(kvs.cached)), VALID, 1, 2, 3)
    kvs.net.send(
        "server", frame(kvs.update, stack, tenant=KVS_TENANT, src=kvs.server, dst=kvs.client)
    )
    kvs.net.run()
    assert [(r.pipe, r.result.verdict) for r in kvs.net.records] == [(1, "pass"), (0, "drop")]
    assert control.stats(KVS_TENANT, pipes=0).unauthorized == 1


# -- load balancers (§4.2) ---------------------------------------------------------------------
LB_TENANT = 0x1B
SERVERS = 8


def lb_setup() -> tuple[Network, ControlPlane, Host, list[Host]]:
    """A client on port 0 and eight servers on ports 1..8; virtual destination i is server i."""
    net = Network(PROFILE, seed=5)
    net.add_switch("lb")
    client = add_host(net, "client", "lb", 0, 1)
    servers = [add_host(net, f"server{i}", "lb", 1 + i, 10 + i) for i in range(SERVERS)]
    control = net.switches["lb"].control
    control.authorize(LB_TENANT, app_id=load("lb3_client").app_id)
    control.set_route(client.ip, 0)
    for i, server in enumerate(servers):
        control.set_route(server.ip, 1 + i)
        control.set_forwarding(
            LB_TENANT, i, Destination(port=1 + i, ip_dst=server.ip, eth_dst=server.mac)
        )
    return net, control, client, servers


def server_of(record: PassRecord) -> int:
    """The server a load-balancer pass forwarded its packet to."""
    ((port, _),) = record.result.outputs
    return port - 1


def test_lb1_splits_by_the_hash_of_the_user_value() -> None:
    net, control, client, servers = lb_setup()
    lb1 = load("lb1")
    rng = random.Random(2)
    flows = [rng.getrandbits(32) for _ in range(64)]
    sent = [rng.choice(flows) for _ in range(400)]
    for value in sent:
        net.send("client", frame(lb1, (value,), tenant=LB_TENANT, src=client, dst=servers[0]))
    net.run()
    expected = [hash_word(PROFILE.hash_for_lane(0), v) & (SERVERS - 1) for v in sent]
    assert [server_of(r) for r in net.records] == expected
    assert all(r.result.verdict == "forward" for r in net.records)
    for i, server in enumerate(servers):
        assert len(server.received) == expected.count(i)
        assert all(stack_of(f) == (i,) for f in server.received)
        assert all(parsed(f).ip_dst == server.ip for f in server.received)
    assert len(set(expected)) == SERVERS  # 64 flows reach every bucket

    # Beamer-style re-balancing: the operator moves bucket 3 to server 0, the DPF is unchanged
    control.set_forwarding(LB_TENANT, 3, Destination(port=1, ip_dst=servers[0].ip))
    flow = next(v for v in flows if hash_word(PROFILE.hash_for_lane(0), v) & 7 == 3)
    before = len(servers[0].received)
    net.send("client", frame(lb1, (flow,), tenant=LB_TENANT, src=client, dst=servers[0]))
    net.run()
    assert len(servers[0].received) == before + 1 and stack_of(servers[0].received[-1]) == (3,)


def test_lb2_sends_batches_of_1024_round_robin() -> None:
    net, control, client, servers = lb_setup()
    control.map_direct(LB_TENANT, 0, 0, 0)  # the packet counter
    lb2 = load("lb2")
    installed = install_program(control, lb2)
    request = frame(lb2, (), tenant=LB_TENANT, src=client, dst=servers[0], dpf_ptr=installed.entry)
    for _ in range(3 * 1024 + 5):
        net.inject("lb", 0, request)
    net.run(keep=True)
    chosen = [server_of(r) for r in net.records]
    assert chosen == [n // 1024 for n in range(3 * 1024 + 5)]
    assert [len(s.received) for s in servers[:4]] == [1024, 1024, 1024, 5]
    assert control.read_memory(LB_TENANT, 0, 0, 0) == [3 * 1024 + 5]
    # round robin wraps after the last server
    control.write_memory(LB_TENANT, 0, 0, 0, [8 * 1024 - 2])
    net.records.clear()
    for _ in range(4):
        net.inject("lb", 0, request)
    net.run()
    assert [server_of(r) for r in net.records] == [7, 7, 0, 0]


def test_lb3_picks_the_less_loaded_of_two_random_servers() -> None:
    net, control, client, servers = lb_setup()
    for lane in (0, 1):  # loads_a, loads_b
        control.map_segment(LB_TENANT, 1, lane, 0, SERVERS)
    server_dpf, client_dpf = load("lb3_server"), load("lb3_client")
    loads = [50, 90, 10, 70, 30, 80, 20, 60]
    # the servers piggyback their loads on responses to the client
    responses = []
    for i, server in enumerate(servers):
        raw = bytearray(frame(server_dpf, (i, loads[i]), tenant=LB_TENANT, src=server, dst=client))
        # the switch sends the outer UDP checksum as 0 (IPv4 allows it): start from 0 too, so
        # that whole frames compare
        raw[40:42] = b"\x00\x00"
        responses.append(bytes(raw))
        net.send(server.name, responses[-1])
    net.run()
    assert client.received == responses  # not modified
    for lane in (0, 1):
        assert control.read_memory(LB_TENANT, 1, lane, 0, SERVERS) == loads

    net.records.clear()
    request = frame(client_dpf, (), tenant=LB_TENANT, src=client, dst=servers[0])
    for _ in range(400):
        net.send("client", request)
    net.run(trace=True)
    chosen = []
    for record in net.records:
        i, j = eu0_registers(record)[:2]  # the two sampled servers
        expected = j if loads[i] > loads[j] else i
        assert server_of(record) == expected
        chosen.append(expected)
    counts = Counter(chosen)
    # the busiest server wins only against itself
    assert counts[1] == sum(1 for r in net.records if eu0_registers(r)[:2] == [1, 1])
    # power of two choices favours the lightly loaded: the lighter half gets 48/64 expected
    assert sum(counts[i] for i in (2, 6, 4, 0)) > 0.65 * len(chosen)


# -- Paxos (§4.3, Appendix A) ------------------------------------------------------------------
PAXOS_TENANT = 0x9A
INSTANCES = 64


def test_paxos_leader_sequences_and_acceptors_vote() -> None:
    """Figure 4: a leader switch multicasts to three acceptor switches; each acceptor
    multicasts accepted proposals to the learners (behind a plain learner switch)."""
    net = Network(PROFILE, seed=9)
    leader_dpf, acceptor_dpf = load("paxos_leader"), load("paxos_acceptor", "switch")
    net.add_switch("leader")
    net.add_switch("learners")
    client = add_host(net, "client", "leader", 0, 1)
    learners = [add_host(net, f"learner{i}", "learners", 4 + i, 20 + i) for i in range(2)]
    leader = net.switches["leader"].control
    leader.authorize(PAXOS_TENANT, app_id=leader_dpf.app_id)
    leader.map_direct(PAXOS_TENANT, 0, 0, 0)  # the sequence counter
    entry = install_program(leader, leader_dpf).entry
    leader.set_multicast_group(PAXOS_TENANT, 1, [Destination(port=p) for p in (1, 2, 3)])
    acceptors = []
    for n in range(3):
        name = f"acceptor{n}"
        net.add_switch(name)
        net.connect("leader", 1 + n, name, 0)
        net.connect(name, 1, "learners", 1 + n)
        control = net.switches[name].control
        control.authorize(PAXOS_TENANT, app_id=acceptor_dpf.app_id)
        control.map_segment(PAXOS_TENANT, 0, 0, 0, INSTANCES)  # rounds
        control.map_segment(PAXOS_TENANT, 2, 0, 0, INSTANCES)  # values
        control.map_segment(PAXOS_TENANT, 2, 1, 0, INSTANCES)  # vrounds
        # the leader's NEXT_PC names @switch:1
        install_program(control, acceptor_dpf, prolog_slot=1)
        control.set_multicast_group(
            PAXOS_TENANT,
            1,
            [Destination(port=1, ip_dst=h.ip, eth_dst=h.mac) for h in learners],
        )
        acceptors.append(control)
    plain = net.switches["learners"].control
    # the learner switch runs no Paxos DPF: its token is none the packets carry
    plain.authorize(PAXOS_TENANT, app_id=0, unauthorized="pass")
    for i, learner in enumerate(learners):
        plain.set_route(learner.ip, 4 + i)

    def propose(value: int) -> None:
        raw = frame(
            leader_dpf, (value,), tenant=PAXOS_TENANT, src=client, dst=learners[0], dpf_ptr=entry
        )
        net.send("client", raw)
        net.run()

    values = [0x1000 + i for i in range(5)]
    for value in values:
        propose(value)
    for learner in learners:
        votes = Counter(stack_of(f) for f in learner.received)
        assert votes == {(i, 0, v): 3 for i, v in enumerate(values)}
    for control in acceptors:
        assert control.read_memory(PAXOS_TENANT, 2, 0, 0, 5) == values
        assert control.read_memory(PAXOS_TENANT, 2, 1, 0, 5) == [0] * 5
    assert leader.read_memory(PAXOS_TENANT, 0, 0, 0) == [5]

    # acceptor 0 has already accepted round 3 of instance 5 (a recovering leader's phase 2)
    recovery = frame(
        acceptor_dpf,
        (5, 3, 0xBEEF),
        tenant=PAXOS_TENANT,
        src=client,
        dst=learners[0],
        dpf_ptr=PC(False, 1),
    )
    net.inject("acceptor0", 0, recovery)
    net.run()
    # the leader's fast-path proposal for instance 5 has round 0: stale at acceptor 0 only
    for learner in learners:
        learner.received.clear()
    propose(0x2000)
    for learner in learners:
        assert Counter(stack_of(f) for f in learner.received) == {(5, 0, 0x2000): 2}
    drops = [r for r in net.records if r.switch == "acceptor0" and r.result.verdict == "drop"]
    assert len(drops) == 1 and drops[0].result.reason == "the DPF dropped the packet"
    assert acceptors[0].read_memory(PAXOS_TENANT, 2, 0, 5, 1) == [0xBEEF]
    assert acceptors[0].read_memory(PAXOS_TENANT, 2, 1, 5, 1) == [3]
    assert acceptors[0].read_memory(PAXOS_TENANT, 0, 0, 5, 1) == [3]
    for control in acceptors[1:]:
        assert control.read_memory(PAXOS_TENANT, 2, 0, 5, 1) == [0x2000]
        assert control.read_memory(PAXOS_TENANT, 2, 1, 5, 1) == [0]
    assert sum(c.stats(PAXOS_TENANT).dropped for c in acceptors) == 1


# -- in-place replacement (§6.2.1, Figure 6b) --------------------------------------------------
def test_lb2_replaced_by_lb3_in_place_under_traffic() -> None:
    """Batch round-robin -> power of two choices -> back, one code-memory write at a time
    with packets in between: no packet runs a mix of old and new code, none is dropped."""
    net, control, client, servers = lb_setup()
    control.map_direct(LB_TENANT, 0, 0, 0)  # LB2's counter
    for lane in (0, 1):  # LB3's loads: server 5 idle, the others busy
        control.map_segment(LB_TENANT, 1, lane, 0, SERVERS)
        control.write_memory(LB_TENANT, 1, lane, 0, [5 if i == 5 else 100 for i in range(8)])
    lb2, lb3 = load("lb2"), load("lb3_client", "switch")
    old = install_program(control, lb2)
    request = frame(lb2, (), tenant=LB_TENANT, src=client, dst=servers[0], dpf_ptr=old.entry)
    sent = 0

    def burst(count: int) -> None:
        nonlocal sent
        for _ in range(count):
            net.inject("lb", 0, request)
        sent += count
        net.run()

    phases: list[tuple[Installed, Installed, int, int]] = []
    burst(50)
    current = old
    for program in (lb3, lb2):
        steps, new, image = plan_replace(control, current, program)
        assert new.entry == current.entry and len(steps) > 2
        first = len(net.records)
        # packets between every two control calls
        deployment(control).apply(image, between=lambda _step: burst(2))
        phases.append((current, new, first, len(net.records)))
        burst(30)
        current = new

    assert sum(len(s.received) for s in servers) == sent == len(net.records)
    assert all(r.result.verdict == "forward" for r in net.records)
    for before, after, first, last in phases:
        runs = [slots_run(r) for r in net.records[first:last]]
        assert all(run <= set(before.slots) or run <= set(after.slots) for run in runs)
        # old code until the prolog swap, new code from then on
        kinds = ["old" if run <= set(before.slots) else "new" for run in runs]
        assert kinds == sorted(kinds, reverse=True) and "old" in kinds and "new" in kinds
    # while LB3 ran, the idle server 5 won whenever one of its two random draws named it
    # (about one packet in four); LB2 never picks it here
    lb3_passes = net.records[phases[0][3] : phases[1][2]]
    picks = Counter(server_of(r) for r in lb3_passes)
    assert picks[5] >= len(lb3_passes) // 8
    lb2_passes = net.records[phases[1][3] :]
    assert not any(server_of(r) == 5 for r in lb2_passes)
    assert all(server_of(r) == 0 for r in net.records[: phases[0][2]])
