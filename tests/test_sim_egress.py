"""Ingress and egress DPFs end to end (docs/isa.md §6 item 20, docs/simulator.md R23).

One module of DPFs (``SOURCE``) is compiled, linked for one tenant into an install image for
two-pipe switches and deployed through the simulator's control protocol; real frames go
through :class:`dpfc.backends.sim.Network`:

* an in-packet and an in-switch egress DPF run in the egress of the pipe that owns the
  output port and read that port (``LOAD_MD egress_port``);
* an ingress and an egress DPF on one packet: the egress DPF pops what the ingress pushed;
* egress arrays live in the egress pipeline's lane memories, other state than the ingress
  arrays at the same EU, lane and address;
* every frame that leaves runs the egress — each multicast copy, a return to the sender, a
  forwarded or routed frame — and a recirculated frame does not (it goes back to the
  ingress);
* an egress DPF may drop; any other steering faults (the port is chosen); NEXT_PC in an
  egress epilog sets the egress pointer the next switch runs;
* the egress checks the app id, the tenant's entry on the pipe that owns the port and the
  metadata bit, as the ingress does;
* ``dpfc compile`` writes an egress DPF's entry into the header's egress pointer
  (``dpfc disasm`` shows it), ``dpfc packet --egress`` and ``.pipeline egress`` too; objects
  refuse a header that is not their pipeline's; the linker refuses an egress default DPF, a
  chain across pipelines and an array in two pipelines; deploy steps and scenarios name
  egress memory.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner

from dpfc.asm import assemble_text
from dpfc.backends.scenario import load_scenario
from dpfc.backends.sim import Destination, Network, PassRecord, SimControl, Switch
from dpfc.cli.main import main
from dpfc.deploy import Deployment
from dpfc.deploy.plan import describe, plan
from dpfc.diagnostics import DiagnosticError, SourceFile
from dpfc.driver import CompileOptions, compile_source
from dpfc.encoding import SwitchVMHeader, decode_options, encode_options
from dpfc.isa.bundle import PC
from dpfc.link import Image, LinkInput, LinkOptions, image_bytes, link, read_image
from dpfc.machine import Pipeline, format_program
from dpfc.objfile import read_object, write_object
from dpfc.packet.layers import build_frame, build_inner
from dpfc.packet.wire import parse_packet
from dpfc.target import BUILTIN_PROFILES
from tests.sim_install import install_program

P = BUILTIN_PROFILES["tofino1"]
TENANT = 9
APP = 0xE6

SOURCE = """
module hop;
app hop = 0xe6;

// Both arrays at EU1 lane 0: one in the ingress pipeline's memory, one in the egress's.
@pin(eu = 1, lane = 0)
segment array seen: u32[64];
@pin(eu = 1, lane = 0)
segment array left: u32[64];

// ingress, in the switch: count the packet, push a mark, steer by the stack's top word
@placement(switch)
dpf steer(how: u32) {
    seen[how & 63] += 1;
    push(0xab);
    if how == 1 {
        multicast(0);
    } else if how == 2 {
        return_to_sender();
    } else if how == 3 {
        pass();
    } else {
        forward(0);
    }
}

// ingress: recirculate n times, then pass
@placement(switch)
dpf again(n: u32) {
    if n == 0 {
        push(0xab);
    } else {
        push(n - 1);
        recirculate();
    }
}

// egress, in the packet: the port the frame leaves by, over the word below
@egress
dpf tag(x: u32) {
    push(meta.egress_port, x);
}

// egress, in the switch: frames per output port (egress memory), and the port
@egress @placement(switch)
dpf stamp() {
    let port = meta.egress_port;
    left[port & 63] += 1;
    push(port);
}

@egress @placement(switch)
dpf filter(x: u32) {
    if x == 7 {
        drop();
    }
    push(x);
}

// egress chaining: the next switch runs second_hop in its egress
@egress @placement(switch)
dpf first_hop() {
    push(1);
    chain second_hop;
}

@egress @placement(switch)
dpf second_hop() {
    push(2);
}
"""

# ports: a, b on pipe 0; c on pipe 1; s1:20 is cabled to s2:0, d hangs off s2:1
PORTS = {"a": 0, "b": 3, "c": 17}


@pytest.fixture(scope="module")
def image() -> Image:
    module = compile_source(SourceFile("hop.dpf", SOURCE), CompileOptions(target=P))
    obj = read_object(write_object(module.object()), "hop.dpfo")
    return read_image(image_bytes(link([LinkInput(obj, TENANT)], LinkOptions(pipes=2))))


class World:
    def __init__(self, image: Image) -> None:
        self.image = image
        self.net = Network(P)
        self.s1 = self.net.add_switch("s1", pipes=2)
        self.s2 = self.net.add_switch("s2", pipes=2)
        for number, (name, port) in enumerate(PORTS.items(), start=1):
            self.net.add_host(
                name,
                mac=bytes([2, 0, 0, 0, 0, number]),
                ip=bytes([10, 0, 0, number]),
                switch="s1",
                port=port,
            )
        self.net.add_host(
            "d", mac=bytes([2, 0, 0, 0, 0, 4]), ip=bytes([10, 0, 0, 4]), switch="s2", port=1
        )
        self.net.connect("s1", 20, "s2", 0)
        for switch in (self.s1, self.s2):
            Deployment(SimControl(switch.control)).apply(image)
            control = switch.control
            for host in self.net.hosts.values():
                port = host.port if host.switch == switch.name else (20 if switch is self.s1 else 0)
                control.set_route(host.ip, port)
        self.s1.control.set_forwarding(TENANT, 0, Destination(port=17))
        self.s1.control.set_multicast_group(TENANT, 0, [Destination(port=3), Destination(port=17)])

    def entry(self, symbol: str) -> PC:
        found = self.image.dpf(symbol, TENANT).entry
        assert found is not None
        return PC(False, found)

    def header(
        self,
        *,
        dpf: str | None = None,
        egress: str | None = None,
        stack: tuple[int, ...] = (),
        in_packet: str | None = None,
    ) -> SwitchVMHeader:
        header = SwitchVMHeader(app_id=APP, gas=P.default_gas)
        if in_packet is not None:
            options = self.image.dpf(in_packet, TENANT).in_packet_options
            assert options is not None
            header = decode_options(options, P)
        return replace(
            header,
            dpf_ptr=self.entry(dpf) if dpf is not None else header.dpf_ptr,
            egress_ptr=self.entry(egress) if egress is not None else header.egress_ptr,
            stack=stack,
        )

    def send(self, header: SwitchVMHeader, src: str = "a", dst: str = "c") -> list[PassRecord]:
        first = len(self.net.records)
        source, target = self.net.hosts[src], self.net.hosts[dst]
        self.net.send(
            src,
            build_frame(
                tenant_id=TENANT,
                options=encode_options(header, P).data,
                inner=build_inner(b"egress"),
                eth_src=":".join(f"{b:02x}" for b in source.mac),
                eth_dst=":".join(f"{b:02x}" for b in target.mac),
                ip_src=".".join(map(str, source.ip)),
                ip_dst=".".join(map(str, target.ip)),
            ),
        )
        self.net.run()
        return self.net.records[first:]

    def received(self, host: str) -> list[SwitchVMHeader]:
        """The headers of what ``host`` got, which it then forgets."""
        out = []
        for raw in self.net.hosts[host].received:
            header = parse_packet(raw, P).header
            assert header is not None
            out.append(header)
        self.net.hosts[host].received.clear()
        return out

    def stacks(self, host: str) -> list[tuple[int, ...]]:
        return [h.stack for h in self.received(host)]

    def memory(self, switch: Switch, pipe: int, pipeline: str, vaddr: int) -> int:
        (word,) = switch.control.read_memory(TENANT, 1, 0, vaddr, pipe=pipe, pipeline=pipeline)
        return word


@pytest.fixture
def world(image: Image) -> World:
    return World(image)


def test_the_image_places_egress_code_and_memory(image: Image) -> None:
    pipelines = {d.symbol: d.pipeline for d in image.dpfs}
    assert pipelines == {
        "hop.steer": "ingress",
        "hop.again": "ingress",
        "hop.tag": "egress",
        "hop.stamp": "egress",
        "hop.filter": "egress",
        "hop.first_hop": "egress",
        "hop.second_hop": "egress",
    }
    memory = {m.array: (m.pipeline, m.eu, m.lane) for m in image.memory}
    assert memory == {"hop.seen": ("ingress", 1, 0), "hop.left": ("egress", 1, 0)}
    # the in-packet egress DPF's packets name it in the egress pointer, and no ingress DPF
    options = image.dpf("hop.tag", TENANT).in_packet_options
    assert options is not None
    header = decode_options(options, P)
    assert (header.dpf_ptr, header.egress_ptr) == (None, PC(True, 0))
    # the egress chain names the egress DPF's slot
    (chain,) = image.dpf("hop.first_hop", TENANT).chains
    assert chain.slot == image.dpf("hop.second_hop", TENANT).entry


@pytest.mark.parametrize(("dst", "pipe"), [("c", 1), ("b", 0)])
def test_in_packet_egress_dpf_reads_its_output_port(world: World, dst: str, pipe: int) -> None:
    (record,) = world.send(world.header(in_packet="hop.tag", stack=(5,)), dst=dst)
    port = PORTS[dst]
    # no ingress DPF (no pointer, no default DPF): routed; then the egress of the port's pipe
    assert record.result.verdict == "pass" and record.pipe == 0
    (run,) = record.result.egress
    assert (run.port, run.pipe, run.verdict) == (port, pipe, "pass")
    assert [stage for stage, _ in run.executed] == [0, 1, 31]
    assert world.stacks(dst) == [(port, 5)]
    stats = world.s1.control.stats(TENANT)
    assert (stats.executed, stats.egress) == (0, 1)


def test_ingress_and_egress_dpfs_on_one_packet(world: World) -> None:
    """The ingress DPF pops `how` and pushes 0xab; the egress DPF pops 0xab."""
    header = world.header(in_packet="hop.tag", dpf="hop.steer", stack=(0, 0x55))
    (record,) = world.send(header)
    assert record.result.verdict == "forward"
    (run,) = record.result.egress
    assert (run.port, run.pipe) == (17, 1)
    (out,) = world.received("c")
    assert out.stack == (17, 0xAB, 0x55)
    # both pointers travel on: the next switch would run both DPFs again
    assert (out.dpf_ptr, out.egress_ptr) == (world.entry("hop.steer"), PC(True, 0))


def test_egress_memory_is_not_the_ingress_memory(world: World) -> None:
    """`seen` (ingress) and `left` (egress) are both EU1 lane 0, vaddr 0..63."""
    header = world.header(dpf="hop.steer", egress="hop.stamp", stack=(0,))
    for _ in range(3):
        world.send(header)
    assert world.stacks("c") == [(17, 0xAB)] * 3
    s1 = world.s1
    assert world.memory(s1, 0, "ingress", 0) == 3  # seen[0], in the ingress pipe 0
    assert world.memory(s1, 1, "egress", 17) == 3  # left[17], in the egress of pipe 1
    # the same (EU, lane, address) in the other pipeline holds the other array's word
    assert world.memory(s1, 0, "egress", 0) == 0
    assert world.memory(s1, 1, "ingress", 17) == 0
    assert world.memory(s1, 0, "egress", 17) == 0  # pipe 0's egress memory: untouched


def test_every_multicast_copy_runs_the_egress_of_its_port(world: World) -> None:
    (record,) = world.send(world.header(dpf="hop.steer", egress="hop.stamp", stack=(1,)))
    assert record.result.verdict == "multicast"
    runs = sorted((run.port, run.pipe, run.verdict) for run in record.result.egress)
    assert runs == [(3, 0, "pass"), (17, 1, "pass")]
    assert world.stacks("b") == [(3, 0xAB)]
    assert world.stacks("c") == [(17, 0xAB)]
    s1 = world.s1
    assert (world.memory(s1, 0, "egress", 3), world.memory(s1, 1, "egress", 17)) == (1, 1)
    assert s1.control.stats(TENANT).egress == 2


@pytest.mark.parametrize(
    ("how", "src", "dst", "port"),
    [(2, "c", "a", 17), (3, "a", "b", 3), (0, "a", "b", 17)],
    ids=["return_to_sender", "pass", "forward"],
)
def test_every_steering_runs_the_egress(
    world: World, how: int, src: str, dst: str, port: int
) -> None:
    header = world.header(dpf="hop.steer", in_packet="hop.tag", stack=(how,))
    (record,) = world.send(header, src=src, dst=dst)
    (run,) = record.result.egress
    assert (run.port, run.pipe) == (port, port // 16)
    receiver = {17: "c", 3: "b"}[port]
    assert world.stacks(receiver) == [(port, 0xAB)]


def test_recirculated_frames_do_not_run_the_egress(world: World) -> None:
    header = world.header(dpf="hop.again", egress="hop.stamp", stack=(2,))
    records = world.send(header)
    assert [r.result.verdict for r in records] == ["recirculate", "recirculate", "pass"]
    assert [len(r.result.egress) for r in records] == [0, 0, 1]
    assert world.stacks("c") == [(17, 0xAB)]
    assert world.s1.control.stats(TENANT).egress == 1
    assert world.memory(world.s1, 1, "egress", 17) == 1


def test_an_egress_dpf_may_drop(world: World) -> None:
    (record,) = world.send(world.header(egress="hop.filter", stack=(7,)))
    (run,) = record.result.egress
    assert (run.verdict, run.frame) == ("drop", None)
    assert run.reason == "the egress DPF dropped the packet"
    assert record.result.outputs == []
    world.send(world.header(egress="hop.filter", stack=(8,)))
    assert world.stacks("c") == [(8,)]
    stats = world.s1.control.stats(TENANT)
    assert (stats.dropped, stats.egress, stats.faults) == (1, 2, 0)


EGRESS_STEERING = """
.dpf bad
.placement switch
.pipeline egress
prolog p:
    JMP e
eu0 e:
    HALT x
epilog x:
    FWD {action}
"""


@pytest.mark.parametrize(
    "action", ["forward, 0", "multicast, 0", "set_port, 3", "return_to_sender", "recirculate"]
)
def test_egress_steering_faults_at_run_time(world: World, action: str) -> None:
    """Sema refuses these in an @egress DPF (DPF5222); the switch drops hand-made ones."""
    program = assemble_text(EGRESS_STEERING.format(action=action), "bad.dpfasm", P)
    installed = install_program(world.s1.control, program)
    header = replace(world.header(), egress_ptr=installed.entry)
    (record,) = world.send(header)
    (run,) = record.result.egress
    assert run.verdict == "drop" and run.frame is None
    name = action.split(",")[0]
    assert run.reason == (
        f"egress DPF fault: steering action {name} in an egress DPF: the output port is "
        "already chosen (an egress DPF may pass or drop)"
    )
    assert record.result.outputs == [] and world.received("c") == []
    stats = world.s1.control.stats(TENANT)
    assert (stats.faults, stats.dropped, stats.egress) == (1, 1, 1)
    (report,) = world.s1.pipes[1].reports
    assert report.kind == "fault" and report.detail.startswith("egress: steering action")


def test_next_pc_in_the_egress_sets_the_egress_pointer_of_the_next_switch(world: World) -> None:
    records = world.send(world.header(egress="hop.first_hop"), dst="d")
    assert [(r.switch, len(r.result.egress)) for r in records] == [("s1", 1), ("s2", 1)]
    (out,) = world.received("d")
    # s1's egress pushed 1 and pointed the egress at second_hop, which s2's egress ran
    assert out.stack == (2, 1)
    assert (out.dpf_ptr, out.egress_ptr) == (None, world.entry("hop.second_hop"))
    assert world.s2.control.stats(TENANT).egress == 1


def test_an_egress_dpf_checks_the_app_id(world: World) -> None:
    header = replace(world.header(egress="hop.stamp"), app_id=0x1234)
    # the ingress refuses it first (drop): the egress never sees a frame
    (record,) = world.send(header)
    assert record.result.verdict == "drop" and record.result.egress == []
    # a pipe that passes unauthorized packets: the ingress passes it, the egress too
    for switch in (world.s1,):
        switch.control.update_permissions(TENANT, unauthorized="pass")
    (record,) = world.send(header)
    (run,) = record.result.egress
    assert run.verdict == "pass" and "does not match" in run.reason
    assert world.stacks("c") == [()]  # unexecuted: no port pushed
    assert world.memory(world.s1, 1, "egress", 17) == 0


# -- the tools ----------------------------------------------------------------------------------


@pytest.fixture
def cli(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> CliRunner:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "hop.dpf").write_text(SOURCE, encoding="utf-8")
    return CliRunner()


def test_compile_writes_the_egress_pointer(cli: CliRunner) -> None:
    result = cli.invoke(
        main, ["compile", "hop.dpf", "--dpf", "tag", "--emit", "pcap", "-o", "tag.pcap"]
    )
    assert result.exit_code == 0, result.output
    shown = cli.invoke(main, ["disasm", "tag.pcap"])
    assert shown.exit_code == 0, shown.output
    assert "dpf_ptr=none egress_ptr=@packet:0" in shown.output
    assert ".pipeline egress" in shown.output and "LOAD_MD B3, egress_port" in shown.output
    header = cli.invoke(main, ["compile", "hop.dpf", "--dpf", "tag", "--emit", "header"])
    options = bytes.fromhex(header.output.split(": ")[-1].strip())
    decoded = decode_options(options, P)
    assert (decoded.dpf_ptr, decoded.egress_ptr) == (None, PC(True, 0))


def test_object_records_the_pipeline_and_refuses_a_mismatched_header(cli: CliRunner) -> None:
    assert cli.invoke(main, ["compile", "hop.dpf", "-o", "hop.dpfo"]).exit_code == 0
    data = Path("hop.dpfo").read_bytes()
    obj = read_object(data, "hop.dpfo")
    assert {d.name: d.pipeline for d in obj.dpfs}["tag"] == "egress"
    shown = cli.invoke(main, ["disasm", "hop.dpfo"])
    assert shown.output.count(".pipeline egress") == 5
    # an egress DPF relabelled ingress: its options still name it in the egress pointer
    tampered = data.replace(b'"pipeline": "egress"', b'"pipeline": "ingress"', 1)
    Path("bad.dpfo").write_bytes(tampered)
    result = cli.invoke(main, ["disasm", "bad.dpfo"])
    assert result.exit_code == 1
    assert "DPF6202" in result.stderr and "is not the header of this DPF's packets" in result.stderr


def test_assembly_and_packet_name_the_egress_pointer(cli: CliRunner) -> None:
    Path("e.dpfasm").write_text(
        ".dpf e\n.pipeline egress\nprolog p:\n LOAD_MD A0, egress_port\n JMP x\n"
        "eu0 x:\n HALT y\nepilog y:\n PUSH A0\n",
        encoding="utf-8",
    )
    shown = cli.invoke(main, ["packet", "--tenant", "3", "--code", "e.dpfasm"])
    assert shown.exit_code == 0, shown.output
    assert "dpf_ptr=none egress_ptr=@packet:0" in shown.output
    switch = cli.invoke(
        main, ["packet", "--tenant", "3", "--dpf", "@switch:1", "--egress", "@switch:4"]
    )
    assert "dpf_ptr=@switch:1 egress_ptr=@switch:4" in switch.output
    bad = cli.invoke(main, ["packet", "--tenant", "3", "--egress", "nowhere"])
    assert bad.exit_code == 1 and "Traceback" not in bad.output + bad.stderr
    # the canonical text keeps the directive, and assembles back to the same program
    written = cli.invoke(main, ["asm", "e.dpfasm", "--emit", "asm", "-o", "f.dpfasm"])
    assert written.exit_code == 0, written.output
    text = Path("f.dpfasm").read_text(encoding="utf-8")
    assert ".pipeline egress" in text
    program = assemble_text(Path("e.dpfasm").read_text(encoding="utf-8"), "e.dpfasm", P)
    again = assemble_text(text, "f.dpfasm", P)
    assert again.pipeline is Pipeline.EGRESS
    assert format_program(again) == format_program(program) == text


def test_link_refuses_an_egress_default_dpf_and_a_chain_across_pipelines() -> None:
    module = compile_source(SourceFile("hop.dpf", SOURCE), CompileOptions(target=P))
    obj = module.object()
    with pytest.raises(DiagnosticError) as info:
        link([LinkInput(obj, TENANT)], LinkOptions(default_dpf={TENANT: "hop.stamp"}))
    (diagnostic,) = info.value.diagnostics
    assert diagnostic.code == "DPF7009" and "it is an egress DPF" in diagnostic.message
    # an object whose egress DPF chains to an ingress one (sema's DPF5223 stops this in
    # one program; objects built apart meet in the linker)
    second = next(d for d in obj.dpfs if d.name == "second_hop")
    program = replace(second.program, pipeline=Pipeline.INGRESS)
    ingress = replace(second, encoded=replace(second.encoded, program=program))
    relabelled = replace(obj, dpfs=tuple(ingress if d is second else d for d in obj.dpfs))
    with pytest.raises(DiagnosticError) as info:
        link([LinkInput(relabelled, TENANT)])
    (diagnostic,) = info.value.diagnostics
    assert diagnostic.code == "DPF7011"
    assert (
        "egress DPF `hop.first_hop` chains to `hop.second_hop`, an ingress DPF"
        in diagnostic.message
    )


def test_an_egress_image_deploys_and_uninstalls_its_egress_memory(image: Image) -> None:
    net = Network(P)
    switch = net.add_switch("s", pipes=2)
    deployment = Deployment(SimControl(switch.control))
    deployment.apply(image)

    def words(pipeline: str) -> int:
        lanes = [m for pipe in switch.pipes for eu in pipe.memories(pipeline) for m in eu]
        return sum(m.allocator.used for m in lanes)

    # `seen` in the ingress memory of both pipes, `left` in their egress memory
    assert (words("ingress"), words("egress")) == (2 * 64, 2 * 64)
    deployment.apply(None)
    assert switch.control.usage().is_zero()


def test_the_egress_checks_the_tenant_on_the_pipe_of_the_port(world: World) -> None:
    """Pipe 1 does not know the tenant: its egress drops the frame (as its ingress would)."""
    world.s1.control.deauthorize(TENANT, pipes=1)
    (record,) = world.send(world.header(egress="hop.stamp"))
    (run,) = record.result.egress
    assert (run.pipe, run.verdict) == (1, "drop")
    assert run.reason == f"tenant {TENANT} is not authorized on this pipe (egress DPF)"
    assert [r.kind for r in world.s1.pipes[1].reports] == ["unauthorized"]
    # the same packet to a port of pipe 0, which knows the tenant, runs the egress DPF
    world.send(world.header(egress="hop.stamp"), dst="b")
    assert world.stacks("b") == [(3,)]


def test_load_md_in_the_egress_needs_the_metadata_bit(world: World) -> None:
    world.s1.control.update_permissions(TENANT, metadata=False, unauthorized="pass")
    (record,) = world.send(world.header(egress="hop.stamp"))
    (run,) = record.result.egress
    assert run.verdict == "pass" and "may not read switch metadata" in run.reason
    assert world.stacks("c") == [()]  # left as it came, unexecuted
    stats = world.s1.control.stats(TENANT)
    assert (stats.refused, stats.egress) == (1, 0)


def test_an_array_of_two_pipelines_is_a_link_conflict() -> None:
    """Objects built apart: the same array in the ingress of one and the egress of another."""
    source = """
module shared;
segment array hits: u32[16];
@placement(switch)
dpf count(x: u32) { hits[x & 15] += 1; }
"""
    module = compile_source(SourceFile("shared.dpf", source), CompileOptions(target=P))
    obj = module.object()
    (dpf,) = obj.dpfs
    program = replace(dpf.program, pipeline=Pipeline.EGRESS)
    egress = replace(
        obj,
        dpfs=(
            replace(dpf, symbol="shared.recount", encoded=replace(dpf.encoded, program=program)),
        ),
    )
    with pytest.raises(DiagnosticError) as info:
        link([LinkInput(obj, TENANT), LinkInput(replace(egress, path="egress.dpfo"), TENANT)])
    (diagnostic,) = info.value.diagnostics
    assert diagnostic.code == "DPF7003"
    assert "of the egress pipeline" in diagnostic.message


def test_deploy_steps_name_egress_memory(image: Image) -> None:
    steps = [describe(step) for step in plan(None, image) if "left" in describe(step)]
    assert steps == [f"map {TENANT}:hop.left (64 words segment, EU1 lane 0 egress) on pipes 0,1"]


SCENARIO = """
[[switches]]
name = "s1"

[[hosts]]
name = "a"
ip = "10.0.0.1"
switch = "s1"
port = 0

[[hosts]]
name = "b"
ip = "10.0.0.2"
switch = "s1"
port = 5

[[config]]
switch = "s1"
routes = { b = 5 }

[[config.code]]
file = "count.dpfasm"

[[config.tenants]]
id = 3
metadata = true
memory = [{ kind = "segment", pipeline = "egress", eu = 0, lane = 0, size = 8 }]

[[packets]]
from = "a"
to = "b"
tenant = 3
egress = "count"
repeat = 2

[[watch]]
switch = "s1"
tenant = 3
eu = 0
lane = 0
pipeline = "egress"
vaddr = 5
"""

COUNT = """
.dpf count
.placement switch
.pipeline egress
prolog p:
    LOAD_MD A0, egress_port
    JMP e
eu0 e:
    LOAD_IMM B0, 1
    FAADD B0, [A0]
    HALT x
epilog x:
    PUSH A0, B0
"""


def test_a_scenario_names_an_egress_dpf_and_watches_egress_memory(tmp_path: Path) -> None:
    (tmp_path / "count.dpfasm").write_text(COUNT, encoding="utf-8")
    (tmp_path / "egress.toml").write_text(SCENARIO, encoding="utf-8")
    scenario = load_scenario(tmp_path / "egress.toml")
    scenario.network.run()
    stacks = [parse_packet(f, P).header for f in scenario.network.hosts["b"].received]
    assert [h.stack for h in stacks if h is not None] == [(5, 0), (5, 1)]
    (watch,) = scenario.watches
    assert watch.pipeline == "egress"
    control = scenario.network.switches["s1"].control
    assert control.read_memory(3, 0, 0, 5, pipeline="egress") == [2]
    assert scenario.packets[0].summary == "to b, tenant 3, dpf none, egress @switch:0, stack []"
