"""The paper's applications, compiled from examples/dpf, linked, deployed through the switch
control protocol and run with real packets — on simulated switches and on bmv2 processes alike.

* KVS (§4.1): the cache switch runs cache_get / cache_put / cache_update (in-packet code),
  a miss chains over a cable to count_min on the sketch switch (a second switch: bmv2 has
  one pipe). Asserted: a hit returns the cached values to the client, a miss reaches the
  server through the sketch, put invalidates, update installs a value that later hits.
* LB1 and LB2 (§4.2): the server each request reaches.
* Paxos (§4.3): a leader switch multicasts proposals to three acceptor switches; votes reach
  the learners; an acceptor that has seen a newer round drops the stale proposal.

Each runs on four fabrics: simulated switches and bmv2 processes of tofino1 (the SwitchVM
program), and of :data:`~.staged_target.STAGED`, the stage-structured program (its bmv2 half
slow).

The KVS is compiled with 1,000 cached keys (kvs.dpf's 45,000 would be 45,000 table entries
of the cache switch's direct map, each a Thrift call on bmv2).
"""

from __future__ import annotations

import shutil
import tempfile
from collections import Counter
from collections.abc import Iterator
from dataclasses import replace
from functools import cache
from pathlib import Path

import pytest

from dpfc.deploy import Deployment
from dpfc.driver import CompileOptions, compile_source
from dpfc.encoding import SwitchVMHeader, decode_options, encode_options
from dpfc.isa.bundle import PC
from dpfc.isa.semantics import hash_word
from dpfc.link import Image, LinkInput, LinkOptions, image_bytes, image_id, link
from dpfc.objfile import ObjectFile
from dpfc.packet.wire import parse_packet
from dpfc.switch import Destination
from dpfc.target import TargetProfile
from tests.conformance.conftest import PROFILE, P4Build
from tests.conformance.fabric import Fabric, frame
from tests.conformance.staged_target import STAGED, StagedTarget, staged_build
from tests.conformance.targets import Bmv2Target, SimTarget
from tests.conftest import ROOT
from tests.link_fixtures import obj_for

EXAMPLES = ROOT / "examples" / "dpf"
KVS, LB, PAXOS = 42, 0x1B3, 0x9A
VALID = 0x8000_0000
CLIENT, SERVER = "10.0.0.1", "10.0.0.2"


@pytest.fixture(
    params=["sim", "bmv2", "staged-sim", pytest.param("staged", marks=pytest.mark.slow)]
)
def fabric(request: pytest.FixtureRequest) -> Iterator[Fabric]:
    """Simulated switches or simple_switch processes, of tofino1 (the SwitchVM program) or
    of :data:`~.staged_target.STAGED` (the stage-structured program, slow)."""
    if request.param == "sim":
        yield Fabric(lambda _name: SimTarget(PROFILE), PROFILE)
        return
    if request.param == "staged-sim":
        yield Fabric(lambda _name: SimTarget(STAGED), STAGED)
        return
    made: list[Bmv2Target | StagedTarget] = []
    if request.param == "staged":
        program = staged_build(request.getfixturevalue("tmp_path_factory"))

        def make(_name: str) -> Bmv2Target | StagedTarget:
            made.append(StagedTarget(program))
            return made[-1]

        profile = STAGED
    else:
        build: P4Build = request.getfixturevalue("p4_build")

        def make(_name: str) -> Bmv2Target | StagedTarget:
            made.append(Bmv2Target(PROFILE, build.toolchain, build.json))
            return made[-1]

        profile = PROFILE
    try:
        yield Fabric(make, profile)
    finally:
        for target in made:
            target.stop()


def stack(raw: bytes, profile: TargetProfile = PROFILE) -> tuple[int, ...]:
    header = parse_packet(raw, profile).header
    assert header is not None
    return header.stack


def write(target: object, image: Image, tenant: int, array: str, words: dict[int, int]) -> None:
    request = next(m for m in image.memory if m.tenant == tenant and m.array == array)
    for index, word in words.items():
        target.control.write_memory(tenant, request.eu, request.lane, index, [word], [0])  # type: ignore[attr-defined]


def read(target: object, image: Image, tenant: int, array: str, index: int) -> int:
    request = next(m for m in image.memory if m.tenant == tenant and m.array == array)
    return int(target.control.read_memory(tenant, request.eu, request.lane, index, 1, 0)[0])  # type: ignore[attr-defined]


def in_packet(
    image: Image, symbol: str, tenant: int, values: tuple[int, ...], profile: TargetProfile
) -> bytes:
    dpf = image.dpf(symbol, tenant)
    header = replace(decode_options(dpf.in_packet_options or b"", profile), stack=values)
    return encode_options(header, profile).data


def in_switch(
    image: Image, symbol: str, tenant: int, values: tuple[int, ...], profile: TargetProfile
) -> bytes:
    dpf = image.dpf(symbol, tenant)
    header = SwitchVMHeader(app_id=dpf.app_id, dpf_ptr=PC(False, dpf.entry or 0), stack=values)
    return encode_options(header, profile).data


# -- KVS ---------------------------------------------------------------------------------------


@cache
def kvs_objects(profile: TargetProfile) -> tuple[ObjectFile, ObjectFile, ObjectFile]:
    """kvs (1,000 keys), kvs_update and count_min, compiled together."""
    with tempfile.TemporaryDirectory() as directory:
        folder = Path(directory)
        for name in ("kvs", "kvs_update", "count_min"):
            shutil.copy(EXAMPLES / f"{name}.dpf", folder / f"{name}.dpf")
        kvs = folder / "kvs.dpf"
        kvs.write_text(kvs.read_text().replace("const CACHE = 45000;", "const CACHE = 1000;"))
        options = CompileOptions(target=profile)
        return (
            compile_source(kvs, options).object(),
            compile_source(folder / "kvs_update.dpf", options).object(),
            compile_source(folder / "count_min.dpf", options).object(),
        )


def kvs_images(profile: TargetProfile) -> tuple[Image, Image]:
    """The sketch switch's image (count_min, the empty DPF), then the cache switch's."""
    kvs, update, sketch = kvs_objects(profile)
    sketch_image = link(
        [LinkInput(sketch, KVS), LinkInput(kvs, KVS)],
        LinkOptions(only=("count_min.count_min", "kvs.empty")),
    )
    ident = image_id(image_bytes(sketch_image))
    cache_image = link(
        [LinkInput(kvs, KVS), LinkInput(update, KVS)],
        LinkOptions(
            only=("kvs.cache_get", "kvs.cache_put", "kvs_update.cache_update"),
            externs=((sketch_image, ident),),
        ),
    )
    return sketch_image, cache_image


def test_kvs_cache_and_count_min_on_two_switches(fabric: Fabric) -> None:
    sketch_image, cache_image = kvs_images(fabric.profile)
    cache_sw, sketch_sw = fabric.switch("cache"), fabric.switch("sketch")
    fabric.host("client", "cache", 0)
    fabric.cable("cache", 1, "sketch", 0)
    fabric.host("server", "sketch", 1)
    Deployment(cache_sw.control).apply(cache_image)
    Deployment(sketch_sw.control).apply(sketch_image)
    for target, to_client, to_server in ((cache_sw, 0, 1), (sketch_sw, 0, 1)):
        target.set_route(bytes([10, 0, 0, 1]), to_client)
        target.set_route(bytes([10, 0, 0, 2]), to_server)
    write(cache_sw, cache_image, KVS, "kvs.index", {5: VALID | 7})
    for lane, value in enumerate((70, 71, 72)):
        write(cache_sw, cache_image, KVS, f"kvs.values{lane}", {7: value})

    def get(key: int) -> None:
        options = in_packet(cache_image, "kvs.cache_get", KVS, (key,), fabric.profile)
        fabric.send("cache", 0, frame(KVS, options, CLIENT, SERVER))

    get(5)  # hit: the values come back to the client, without the code
    [reply] = fabric.take("client")
    assert stack(reply, fabric.profile) == (5, 70, 71, 72) and fabric.take("server") == []
    assert read(cache_sw, cache_image, KVS, "kvs.hits", 7) == 1
    get(9)  # miss: on to the server through count_min, which counts the key
    get(9)
    assert [stack(f, fabric.profile)[0] for f in fabric.take("server")] == [9, 9]
    counts = [read(sketch_sw, sketch_image, KVS, f"countmin.row{r}", 0) for r in range(3)]
    assert fabric.take("client") == [] and sum(counts) >= 0
    # put invalidates key 5: the next get misses
    options = in_packet(cache_image, "kvs.cache_put", KVS, (5,), fabric.profile)
    fabric.send("cache", 0, frame(KVS, options, CLIENT, SERVER))
    assert [stack(f, fabric.profile) for f in fabric.take("server")] == [(5,)]
    get(5)
    assert [stack(f, fabric.profile)[0] for f in fabric.take("server")] == [5] and fabric.take(
        "client"
    ) == []
    # update (from the operator's host on port 0) installs key 9 in tuple 3 and is
    # acknowledged to its sender; the next get of 9 hits with the new values
    options = in_packet(
        cache_image, "kvs_update.cache_update", KVS, (9, VALID | 3, 1, 2, 3), fabric.profile
    )
    fabric.send("cache", 0, frame(KVS, options, CLIENT, SERVER))
    assert [stack(f, fabric.profile) for f in fabric.take("client")] == [(9, 3)]
    get(9)
    [reply] = fabric.take("client")
    assert stack(reply, fabric.profile) == (9, 1, 2, 3)


# -- load balancers -----------------------------------------------------------------------------


def lb_switch(fabric: Fabric, module: str, symbol: str) -> tuple[Image, object]:
    image = link([LinkInput(obj_for(module, fabric.profile), LB)], LinkOptions(only=(symbol,)))
    target = fabric.switch("lb")
    Deployment(target.control).apply(image)
    for server in range(8):
        fabric.host(f"server{server}", "lb", 1 + server)
        target.control.set_forwarding(LB, server, Destination(port=1 + server), [0])
    return image, target


def test_lb1_sends_each_value_to_the_server_of_its_hash(fabric: Fabric) -> None:
    image, _ = lb_switch(fabric, "lb1", "lb1.lb1")
    values = (1, 2, 3, 0xABCDEF, 0xFFFF_FFFF, 77, 1 << 20)
    for value in values:
        options = in_packet(image, "lb1.lb1", LB, (value,), fabric.profile)
        fabric.send("lb", 0, frame(LB, options, CLIENT, SERVER))
    for value in values:
        bucket = hash_word(fabric.profile.hash_for_lane(0), value) & 7
        assert any(
            stack(f, fabric.profile) == (bucket,) for f in fabric.received[f"server{bucket}"]
        )
    assert sum(len(v) for v in fabric.received.values()) == len(values)


def test_lb2_sends_batches_round_robin(fabric: Fabric) -> None:
    image, target = lb_switch(fabric, "lb2", "lb2.lb2")
    write(target, image, LB, "lb2.packets", {0: 1024 - 2})
    for _ in range(4):
        fabric.send(
            "lb", 0, frame(LB, in_switch(image, "lb2.lb2", LB, (), fabric.profile), CLIENT, SERVER)
        )
    assert [len(fabric.take(f"server{s}")) for s in (0, 1, 2)] == [2, 2, 0]
    assert read(target, image, LB, "lb2.packets", 0) == 1024 + 2


# -- Paxos --------------------------------------------------------------------------------------


def test_paxos_leader_and_three_acceptors(fabric: Fabric) -> None:
    paxos = obj_for("paxos", fabric.profile)
    acceptors = link(
        [LinkInput(paxos, PAXOS)],
        LinkOptions(only=("paxos.acceptor",), install=("paxos.acceptor",)),
    )
    leader_image = link(
        [LinkInput(paxos, PAXOS)],
        LinkOptions(
            only=("paxos.leader",), externs=((acceptors, image_id(image_bytes(acceptors))),)
        ),
    )
    leader = fabric.switch("leader")
    Deployment(leader.control).apply(leader_image)
    leader.control.set_multicast(PAXOS, 1, [Destination(port=p) for p in (1, 2, 3)], [0])
    fabric.host("client", "leader", 0)
    for n in range(3):
        acceptor = fabric.switch(f"acceptor{n}")
        fabric.cable("leader", 1 + n, f"acceptor{n}", 0)
        Deployment(acceptor.control).apply(acceptors)
        acceptor.control.set_multicast(PAXOS, 1, [Destination(port=p) for p in (4, 5)], [0])
        fabric.host(f"learner0.{n}", f"acceptor{n}", 4)
        fabric.host(f"learner1.{n}", f"acceptor{n}", 5)
    write(fabric.switches["acceptor0"], acceptors, PAXOS, "paxos.rounds", {1: 5})  # newer round
    for value in (0x1000, 0x1001, 0x1002):
        options = in_switch(leader_image, "paxos.leader", PAXOS, (value,), fabric.profile)
        fabric.send("leader", 0, frame(PAXOS, options, CLIENT, SERVER), expect=3)
    votes: Counter[tuple[int, ...]] = Counter()
    for host in list(fabric.received):
        votes.update(stack(f, fabric.profile) for f in fabric.take(host))
    # every proposal is (instance, round 0, value); acceptor 0 drops instance 1 (stale)
    assert votes == {(0, 0, 0x1000): 6, (1, 0, 0x1001): 4, (2, 0, 0x1002): 6}
    assert read(fabric.switches["acceptor1"], acceptors, PAXOS, "paxos.values", 1) == 0x1001
    assert read(fabric.switches["acceptor0"], acceptors, PAXOS, "paxos.values", 1) == 0
