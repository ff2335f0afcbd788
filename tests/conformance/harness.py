"""Conformance vectors: a DPF, how the switch is set up, the packets, and what must come out.

Contract: a :class:`Vector` names a DPF (assembly text, or ``.dpf`` source compiled by dpfc),
the lane memories it uses (assembly names none: :class:`Lane` maps and fills them; a
compiled DPF's arrays are mapped by the image the linker makes), the tenant's capabilities,
constants and the packets. :func:`run_vector` sets a target up through the switch control
protocol alone — the program is linked into an image and deployed by
:class:`~dpfc.deploy.Deployment`, prologs last, exactly as ``dpfc deploy`` does —, sends
every packet and returns a :class:`Run`: per packet the frames that left (port, bytes) and
then the words of every mapped lane memory. :func:`golden` turns a run into the JSON that
``vectors/<name>.json`` holds; the frames sent are in ``vectors/<name>.pcap``.

Fixed set-up of every vector: tenant :data:`TENANT`; forwarding index i goes to port i and
multicast group g to ports g+1..g+2 (so the output ports tell the steering value);
unrouted frames leave by :data:`DEFAULT_PORT`; packets arrive on :data:`IN_PORT`.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import cache

from hypothesis import HealthCheck, reject, settings

from dpfc.asm import assemble_text
from dpfc.deploy import Deployment
from dpfc.diagnostics import DiagnosticError, SourceFile
from dpfc.driver import CompileOptions, compile_source
from dpfc.encoding import SwitchVMHeader, decode_options, encode_options
from dpfc.isa.bundle import PC
from dpfc.link import Image, LinkInput, LinkOptions, link
from dpfc.link.image import LinkedDPF
from dpfc.machine import encode_program
from dpfc.objfile import ObjectFile
from dpfc.packet.layers import build_frame, build_inner
from dpfc.switch import Destination, Grant
from dpfc.target.profile import TargetProfile
from tests.conformance.staged_target import StagedTarget
from tests.conformance.targets import Bmv2Target, Frames, SimTarget
from tests.dpf_programs import GeneratedProgram, inputs_for
from tests.link_fixtures import obj_for

TENANT = 7
IN_PORT = 3
DEFAULT_PORT = 15
FORWARD_INDEXES = 8
MULTICAST_GROUPS = 4
Target = SimTarget | Bmv2Target | StagedTarget


@dataclass(frozen=True)
class Lane:
    """A lane memory an assembly DPF uses: mapped for the tenant, then ``words`` written
    from virtual address 0."""

    eu: int
    lane: int
    size: int
    mapping: str = "segment"
    words: tuple[int, ...] = ()
    pipeline: str = "ingress"


@dataclass(frozen=True)
class Packet:
    stack: tuple[int, ...] = ()
    port: int = IN_PORT
    gas: int | None = None
    tenant: int = TENANT
    app_id: int | None = None  # default: the DPF's
    no_dpf: bool = False  # the header names no DPF (the tenant's default DPF runs)
    raw: bytes | None = None  # a frame as is (malformed input)
    inner: bytes | None = None  # the tenant's frame (default: build_inner(b"payload"))


@dataclass(frozen=True, eq=False)
class Vector:
    name: str
    source: str
    # "asm": assembly text; "app": ``source`` names example modules ("kvs count_min");
    # "dpf": ``source`` is a module's text
    kind: str = "asm"
    entry: str = ""  # app: the symbol of the DPF the packets run
    packets: tuple[Packet, ...] = ()
    lanes: tuple[Lane, ...] = ()
    metadata: bool = True
    # the grant refuses the metadata bit even when the image's entry asks for it (R5)
    deny_metadata: bool = False
    privileged: bool = False
    recirculate: bool = True
    default_dpf: bool = False
    unauthorized: str = "drop"
    constants: tuple[tuple[int, int], ...] = ()
    arrays: dict[str, tuple[int, ...]] = field(default_factory=dict)  # compiled: initial words
    # asm: an egress DPF installed beside the vector's DPF, named by every packet's egress
    # pointer (the vector's own DPF then runs in the ingress)
    egress: str = ""
    unread: tuple[str, ...] = ()  # memories not compared ("eu2.lane1.egress": timestamps)


@dataclass
class Run:
    outputs: list[Frames]
    memory: dict[str, dict[int, int]]
    frames: list[tuple[int, bytes]]  # what was sent: (port, frame)


@cache
def image_of(vector: Vector, profile: TargetProfile) -> tuple[Image, LinkedDPF]:
    """The image that installs the vector's code for :data:`TENANT`, and the DPF it runs.
    Assembly is assembled; apps are the example modules' objects (``small_kvs`` is kvs.dpf
    with 1,000 cached keys), linked together so that chains resolve."""
    if vector.kind == "asm":
        program = assemble_text(vector.source, f"{vector.name}.dpfasm", profile)
        objects = [ObjectFile.of_program(encode_program(program))]
        entry = objects[0].dpfs[0].symbol
        if vector.egress:
            egress = assemble_text(vector.egress, f"{vector.name}.egress.dpfasm", profile)
            objects.append(ObjectFile.of_program(encode_program(egress)))
    elif vector.kind == "dpf":
        compiled = CompileOptions(target=profile)
        module = compile_source(SourceFile(f"{vector.name}.dpf", vector.source), compiled)
        objects, entry = [module.object()], vector.entry
    else:
        objects = [obj_for(name, profile) for name in vector.source.split()]
        entry = vector.entry
    linking = LinkOptions(default_dpf={TENANT: entry} if vector.default_dpf else {})
    image = link([LinkInput(o, TENANT) for o in objects], linking)
    return image, next(d for d in image.dpfs if d.symbol == entry or d.symbol.endswith(entry))


def _grant(image: Image, dpf: LinkedDPF, vector: Vector) -> Grant:
    entry = next(p for p in image.permissions if p.tenant == TENANT)
    default = dpf.entry if vector.default_dpf else None
    return Grant(
        app_ids=entry.app_ids,
        metadata=(vector.metadata or entry.metadata) and not vector.deny_metadata,
        privileged=vector.privileged or entry.privileged,
        recirculate=vector.recirculate or entry.recirculate,
        default_dpf=default,
        unauthorized=vector.unauthorized,
    )


def set_up(target: Target, vector: Vector) -> tuple[Image, LinkedDPF]:
    image, dpf = image_of(vector, target.profile)
    Deployment(target.control).apply(image)
    control, pipes = target.control, [0]
    control.grant(TENANT, _grant(image, dpf, vector), pipes)  # the vector's capabilities
    target.set_default_port(DEFAULT_PORT)
    for index in range(FORWARD_INDEXES):
        control.set_forwarding(TENANT, index, Destination(port=index), pipes)
    for group in range(MULTICAST_GROUPS):
        ports = (group + 1, group + 2)
        control.set_multicast(TENANT, group, [Destination(port=p) for p in ports], pipes)
    for lane in vector.lanes:
        kind = {"pipeline": lane.pipeline}
        control.map_memory(TENANT, lane.eu, lane.lane, lane.mapping, lane.size, pipes, **kind)
        if lane.words:
            control.write_memory(TENANT, lane.eu, lane.lane, 0, lane.words, pipes, **kind)
    for request in image.memory:
        words = vector.arrays.get(request.array.rsplit(".", 1)[-1])
        if words:
            kind = {"pipeline": request.pipeline}
            control.write_memory(TENANT, request.eu, request.lane, 0, words, pipes, **kind)
    for index, value in vector.constants:
        target.set_constant(TENANT, index, value)
    return image, dpf


def frame_of(packet: Packet, dpf: LinkedDPF, image: Image, profile: TargetProfile) -> bytes:
    if packet.raw is not None:
        return packet.raw
    gas = profile.default_gas if packet.gas is None else packet.gas
    if dpf.in_packet_options is not None:
        header = decode_options(dpf.in_packet_options, profile)
        header = replace(header, stack=packet.stack, gas=gas)
    else:
        pointer = PC(False, dpf.entry or 0)
        header = SwitchVMHeader(app_id=dpf.app_id, dpf_ptr=pointer, gas=gas, stack=packet.stack)
        if dpf.pipeline == "egress":
            header = replace(header, dpf_ptr=None, egress_ptr=pointer)
    egress = [d for d in image.dpfs if d.pipeline == "egress" and d is not dpf]
    if egress:  # the vector's second DPF, installed: the packet names it too
        header = replace(header, egress_ptr=PC(False, egress[0].entry or 0))
    if packet.no_dpf:
        header = replace(header, dpf_ptr=None)
    if packet.app_id is not None:
        header = replace(header, app_id=packet.app_id)
    options = encode_options(header, profile).data
    inner = build_inner(b"payload") if packet.inner is None else packet.inner
    return build_frame(tenant_id=packet.tenant, options=options, inner=inner)


def lanes_used(vector: Vector, image: Image) -> list[tuple[str, int, int, int]]:
    used = [(lane.pipeline, lane.eu, lane.lane, lane.size) for lane in vector.lanes]
    used += [(r.pipeline, r.eu, r.lane, r.size) for r in image.memory if r.tenant == TENANT]
    return sorted(set(used))


def run_vector(target: Target, vector: Vector, expect: Sequence[int] | None = None) -> Run:
    """Set up, send every packet (``expect``: how many frames each should give, for bmv2's
    receive), read the memories back."""
    image, dpf = set_up(target, vector)
    run = Run([], {}, [])
    for number, packet in enumerate(vector.packets):
        frame = frame_of(packet, dpf, image, target.profile)
        run.frames.append((packet.port, frame))
        count = 1 if expect is None else expect[number]
        run.outputs.append(target.send(packet.port, frame, expect=count))
    for pipeline, eu, lane, size in lanes_used(vector, image):
        name = f"eu{eu}.lane{lane}" + (".egress" if pipeline == "egress" else "")
        if name in vector.unread:
            continue
        words = target.control.read_memory(TENANT, eu, lane, 0, size, 0, pipeline=pipeline)
        run.memory[name] = {a: w for a, w in enumerate(words) if w}
    return run


# The random-program properties: PROGRAMS_PER_RUN programs, a fixed seed (the same programs
# on every machine), no deadline (bmv2 takes what it takes)
PROGRAMS_PER_RUN = 30
RANDOM_PROGRAMS = settings(
    max_examples=PROGRAMS_PER_RUN,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)


def program_vector(program: GeneratedProgram, packets: int) -> Vector:
    """A random program (:mod:`tests.dpf_programs`) as a vector: ``packets`` packets of
    random stacks, its arrays filled with random words (all from the program's seed)."""
    rng = random.Random(program.seed)
    inputs = [inputs_for(program, rng) for _ in range(packets)]
    return Vector(
        f"random{program.seed}",
        program.source,
        kind="dpf",
        entry=f".{program.dpf}",
        packets=tuple(Packet(tuple(i.stack[:16])) for i in inputs),
        arrays={a.name: tuple(inputs[0].memory[a.name][: a.size]) for a in program.arrays},
    )


def agrees_with_simulator(target: Bmv2Target, vector: Vector) -> None:
    """``vector`` gives on ``target`` what it gives on the simulator of its profile (inside a
    hypothesis test: a program the compiler refuses is rejected, the differential tests
    check how)."""
    try:
        expected = golden(run_vector(SimTarget(target.profile), vector))
    except DiagnosticError:
        reject()
    target.reset()
    got = golden(run_vector(target, vector, expected_counts(expected)))
    assert got == expected, vector.source


def golden(run: Run) -> str:
    """The expected outcome as JSON text (ports and hex frames per packet, memory)."""
    data = {
        "packets": [
            {
                "in": {"port": port, "frame": frame.hex()},
                "out": [{"port": p, "frame": f.hex()} for p, f in outputs],
            }
            for (port, frame), outputs in zip(run.frames, run.outputs, strict=True)
        ],
        "memory": {
            lane: {str(a): f"{w:#010x}" for a, w in sorted(words.items())}
            for lane, words in sorted(run.memory.items())
        },
    }
    return json.dumps(data, indent=1) + "\n"


def expected_counts(text: str) -> list[int]:
    return [len(p["out"]) for p in json.loads(text)["packets"]]
