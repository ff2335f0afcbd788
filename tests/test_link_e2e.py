"""The paper's applications from source to linked install images, run by the simulator on
real packets, equal to the IR interpreter.

* KVS (§4.1): kvs.dpf and count_min.dpf are compiled, their objects written and read back,
  linked into one image for a two-pipe switch (cache-get and cache-put on pipe 0,
  count-min on pipe 1), the image's bytes read back and deployed through the simulator's
  control protocol; a client's GET requests (the in-packet code the image holds, its chain
  target filled in) hit the cache or go on, across the pipes' cable, through count-min to
  the server.
* Paxos (§4.3): one object, two images: the acceptor installed on three acceptor switches,
  the leader on the leader switch, its chain resolved through the acceptors' image
  (``--extern``); proposals are multicast to the acceptors, votes to two learners.

For every packet the interpreter runs the same DPFs (the chained one on the chaining one's
output stack), carrying each switch's memory forward; what reaches each host and the final
memory of every array must agree.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

from dpfc.backends.sim import Destination, Host, Network, SimControl, Switch
from dpfc.deploy import Deployment
from dpfc.encoding import SwitchVMHeader, decode_options, encode_options
from dpfc.ir.core import Module
from dpfc.ir.interp import Inputs, Outcome, canonical_memory, run_function
from dpfc.isa.bundle import PC
from dpfc.link import Image, LinkInput, LinkOptions, image_bytes, image_id, link
from dpfc.packet.layers import build_frame, build_inner
from dpfc.packet.wire import parse_packet
from tests.link_fixtures import TOFINO1, compiled, obj, through_bytes
from tests.test_sim_apps import add_host

KVS_TENANT = 42
PAXOS_TENANT = 0x9A
VALID = 0x8000_0000
Memory = dict[str, dict[int, int]]


def send(net: Network, src: Host, dst: Host, tenant: int, header: SwitchVMHeader) -> None:
    options = encode_options(header, TOFINO1).data
    net.send(
        src.name,
        build_frame(
            tenant_id=tenant,
            options=options,
            inner=build_inner(b"request"),
            eth_src=":".join(f"{b:02x}" for b in src.mac),
            eth_dst=":".join(f"{b:02x}" for b in dst.mac),
            ip_src=".".join(map(str, src.ip)),
            ip_dst=".".join(map(str, dst.ip)),
        ),
    )


def received(host: Host) -> list[tuple[tuple[int, ...], bool]]:
    """(stack, code still carried) of every frame the host got, then forgets them."""
    out = []
    for raw in host.received:
        header = parse_packet(raw, TOFINO1).header
        assert header is not None
        out.append((header.stack, not header.code.is_empty()))
    host.received.clear()
    return out


def ir_name(module: str, array: str) -> str:
    """The IR's name of an image array: the module's own arrays are bare there."""
    return array.removeprefix(f"{module}.")


def switch_memory(switch: Switch, image: Image, tenant: int, pipe: int, module: str) -> Memory:
    """The non-zero words of the module's arrays on ``pipe``, under the IR's names."""
    words: Memory = {}
    for request in image.memory:
        users = {u.split(":", 1)[1].split(".", 1)[0] for u in request.users}
        if request.tenant != tenant or pipe not in request.pipes or module not in users:
            continue
        cells = switch.control.read_memory(
            tenant, request.eu, request.lane, 0, request.size, pipe=pipe
        )
        words[ir_name(module, request.array)] = dict(enumerate(cells))
    return canonical_memory(words)


def interpret(module: Module, name: str, stack: tuple[int, ...], memory: Memory) -> Outcome:
    return run_function(module, name, Inputs(stack=list(stack), memory=memory, profile=TOFINO1))


def write_words(
    switch: Switch, image: Image, tenant: int, array: str, words: Mapping[int, int], pipe: int
) -> None:
    [request] = [m for m in image.memory if m.tenant == tenant and m.array == array]
    for index, word in words.items():
        switch.control.write_memory(tenant, request.eu, request.lane, index, [word], pipes=[pipe])


# -- KVS ---------------------------------------------------------------------------------------


def test_kvs_runs_from_its_linked_image_as_the_ir_says() -> None:
    linked = link(
        [LinkInput(obj("kvs"), KVS_TENANT), LinkInput(obj("count_min"), KVS_TENANT)],
        LinkOptions(pipes=2, place={"kvs.cache_*": (0,), "kvs.empty": (1,), "count_min.*": (1,)}),
    )
    image = through_bytes(linked)
    net = Network(TOFINO1, seed=3)
    switch = net.add_switch("kvs", pipes=2, ports_per_pipe=16)
    client, server = add_host(net, "client", "kvs", 0, 1), add_host(net, "server", "kvs", 17, 2)
    net.connect("kvs", 15, "kvs", 16)  # the cable between the pipes
    control = switch.control
    routes = ((0, client, 0), (0, server, 15), (1, client, 16), (1, server, 17))
    for pipe, host, port in routes:
        control.set_route(host.ip, port, pipes=pipe)
    Deployment(SimControl(control)).apply(image)
    # the cache: keys 5 and 8 cached (tuples 7 and 0), key 6's tuple invalid; a sketch
    kvs_memory: Memory = {
        "index": {5: VALID | 7, 6: 9, 8: VALID | 0},
        "values0": {7: 70, 0: 1},
        "values1": {7: 71},
        "values2": {7: 72},
        "hits": {7: 3},
    }
    sketch: Memory = {
        f"countmin.row{r}": {i: (i * 7 + r) % 5 for i in range(0, 1024, 97)} for r in range(3)
    }
    for name, words in kvs_memory.items():
        write_words(switch, image, KVS_TENANT, f"kvs.{name}", words, 0)
    for name, words in sketch.items():
        write_words(switch, image, KVS_TENANT, name, words, 1)
    get = image.dpf("kvs.cache_get", KVS_TENANT)
    code = decode_options(get.in_packet_options or b"", TOFINO1)
    assert (
        code.code.epilogs
        and get.chains[0].slot == image.dpf("count_min.count_min", KVS_TENANT).entry
    )
    kvs_ir, sketch_ir = compiled("kvs").module, compiled("count_min").module
    hits = misses = 0
    for key in (5, 6, 9, 8, 5, 45_000, 0xDEAD_BEEF, 6):
        expected = interpret(kvs_ir, "cache_get", (key,), kvs_memory)
        kvs_memory = expected.memory
        send(
            net,
            client,
            server,
            KVS_TENANT,
            SwitchVMHeader(app_id=get.app_id, dpf_ptr=PC(True, 0), stack=(key,), code=code.code),
        )
        net.run()
        if expected.chain is None:
            assert expected.steer == "return_to_sender"
            assert received(client) == [(expected.stack, not expected.drop_code)]
            assert received(server) == []
            hits += 1
            continue
        assert expected.chain == "count_min.count_min"
        counted = interpret(sketch_ir, "count_min", expected.stack, sketch)
        sketch = counted.memory
        assert received(server) == [(counted.stack, not counted.drop_code)]
        assert received(client) == []
        misses += 1
    assert (hits, misses) == (3, 5)
    assert switch_memory(switch, image, KVS_TENANT, 0, "kvs") == canonical_memory(kvs_memory)
    assert switch_memory(switch, image, KVS_TENANT, 1, "count_min") == canonical_memory(sketch)


# -- Paxos -------------------------------------------------------------------------------------


def paxos_images() -> tuple[Image, Image]:
    """The acceptors' image, then the leader's, linked against it."""
    paxos = obj("paxos")
    acceptors = through_bytes(
        link(
            [LinkInput(paxos, PAXOS_TENANT)],
            LinkOptions(only=("paxos.acceptor",), install=("paxos.acceptor",)),
        )
    )
    ident = image_id(image_bytes(acceptors))
    leader = through_bytes(
        link(
            [LinkInput(paxos, PAXOS_TENANT)],
            LinkOptions(only=("paxos.leader",), externs=((acceptors, ident),)),
        )
    )
    return acceptors, leader


def test_paxos_leader_chains_to_acceptors_on_other_switches_as_the_ir_says() -> None:
    acceptors_image, leader_image = paxos_images()
    acceptor_entry = acceptors_image.dpf("paxos.acceptor", PAXOS_TENANT).entry
    leader_dpf = leader_image.dpf("paxos.leader", PAXOS_TENANT)
    assert (
        leader_dpf.chains[0].slot == acceptor_entry
        and leader_image.externs[0].entry == acceptor_entry
    )
    net = Network(TOFINO1, seed=9)
    leader = net.add_switch("leader")
    net.add_switch("learners")
    client = add_host(net, "client", "leader", 0, 1)
    learners = [add_host(net, f"learner{i}", "learners", 4 + i, 20 + i) for i in range(2)]
    Deployment(SimControl(leader.control)).apply(leader_image)
    leader.control.set_multicast_group(PAXOS_TENANT, 1, [Destination(port=p) for p in (1, 2, 3)])
    acceptors: list[Switch] = []
    for n in range(3):
        acceptor = net.add_switch(f"acceptor{n}")
        net.connect("leader", 1 + n, acceptor.name, 0)
        net.connect(acceptor.name, 1, "learners", 1 + n)
        Deployment(SimControl(acceptor.control)).apply(acceptors_image)
        acceptor.control.set_multicast_group(
            PAXOS_TENANT, 1, [Destination(port=1, ip_dst=h.ip, eth_dst=h.mac) for h in learners]
        )
        acceptors.append(acceptor)
    plain = net.switches["learners"].control
    plain.authorize(PAXOS_TENANT, app_id=0, unauthorized="pass")  # runs no Paxos DPF
    for i, learner in enumerate(learners):
        plain.set_route(learner.ip, 4 + i)
    ir = compiled("paxos").module
    leader_memory: Memory = {}
    acceptor_memory: list[Memory] = [{}, {}, {}]
    # acceptor 0 has already seen round 5 of instance 3: it drops that proposal
    write_words(acceptors[0], acceptors_image, PAXOS_TENANT, "paxos.rounds", {3: 5}, 0)
    acceptor_memory[0] = {"rounds": {3: 5}}
    votes: Counter[tuple[int, ...]] = Counter()
    for value in (0x1000, 0x1001, 0x1002, 0x1003, 0x1004):
        proposal = interpret(ir, "leader", (value,), leader_memory)
        leader_memory = proposal.memory
        assert proposal.chain == "acceptor" and proposal.steer == "multicast"
        for n in range(3):
            vote = interpret(ir, "acceptor", proposal.stack, acceptor_memory[n])
            acceptor_memory[n] = vote.memory
            if vote.steer == "multicast":
                votes[vote.stack] += 1
        header = SwitchVMHeader(
            app_id=leader_dpf.app_id, dpf_ptr=PC(False, leader_dpf.entry or 0), stack=(value,)
        )
        send(net, client, learners[0], PAXOS_TENANT, header)
        net.run()
    assert votes[(3, 0, 0x1003)] == 2  # the stale acceptor's vote is missing
    assert sum(votes.values()) == 14
    for learner in learners:
        assert Counter(stack for stack, _code in received(learner)) == votes
    assert switch_memory(leader, leader_image, PAXOS_TENANT, 0, "paxos") == canonical_memory(
        leader_memory
    )
    for n, acceptor in enumerate(acceptors):
        assert switch_memory(
            acceptor, acceptors_image, PAXOS_TENANT, 0, "paxos"
        ) == canonical_memory(acceptor_memory[n])
