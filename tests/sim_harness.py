"""Run a compiled (or assembled) DPF through the simulator and compare it with the IR.

:func:`run_compiled` sets up one simulated switch for one tenant the way a deployment
would: permission entry (the DPF's app id, metadata and privileged bits), every array
mapped at its (EU, lane) binding with power-of-two segments covering exactly its words,
the initial memory written, forwarding entries 0..15 and multicast groups 0..15 (each to
the port of that number, so the output port tells the steering value), in-switch code
installed or in-packet code put in the packet. It sends one real frame (built by
:mod:`dpfc.packet`) whose stack is the input stack and reads back what left the switch.

Choices that make the simulator and the interpreter see the same inputs:

* metadata: the harness fixes ingress port, timestamp, queue depth and switch id, and
  computes packet length and pipe id the way the simulator does, and gives the same values
  to the interpreter;
* RAND: the simulator's generator is replaced by one that returns ``inputs.rand[0]`` for
  every draw (the prolog draws in register order, the interpreter in execution order: one
  word for all draws makes the orders irrelevant);
* out-of-bounds accesses: the interpreter reads 0 and writes nothing past an array's end;
  the harness maps exactly the array's words, so such an address is unmapped in the
  simulator, which reads 0 and writes nothing (docs/isa.md item 13);
* steering values 0..15 have forwarding entries and groups; a larger value is refused by
  the switch (the tenant's unauthorized action, drop), which the comparison expects.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from dpfc.backends.sim import Destination, Network, install_program

from dpfc.asm.program import AssembledProgram, Placement
from dpfc.encoding.errors import EncodingError
from dpfc.encoding.header import encode_options
from dpfc.ir.interp import Inputs, Outcome
from dpfc.isa.bundle import PC
from dpfc.packet.layers import build_frame, build_inner
from dpfc.packet.wire import parse_packet

TENANT = 7
IN_PORT = 3
DEFAULT_PORT = 15
STEER_VALUES = 16
SWITCH_ID = 0x5A
NOW_NS = 123_456
QUEUE_DEPTH = 9


@dataclass(frozen=True)
class ArraySpec:
    name: str
    size: int
    eu: int
    lane: int


@dataclass
class SimOutcome:
    verdict: str
    reason: str
    port: int | None  # the port the (first) output frame left by
    stack: tuple[int, ...] | None  # the output stack (None: nothing left the switch)
    dpf_ptr: PC | None
    code_present: bool | None
    memory: dict[str, dict[int, int]]


class _FixedRandom:
    """Stands in for the pipe's random.Random: every RAND draw gives ``word``."""

    def __init__(self, word: int) -> None:
        self.word = word & 0xFFFF_FFFF

    def getrandbits(self, bits: int) -> int:
        return self.word & ((1 << bits) - 1)


def pieces(size: int) -> list[tuple[int, int]]:
    """(vaddr, size) power-of-two segments that cover [0, size) exactly, aligned."""
    out = []
    base = 0
    for bit in reversed(range(size.bit_length())):
        piece = 1 << bit
        if size & piece:
            out.append((base, piece))
            base += piece
    return out


def run_compiled(
    program: AssembledProgram,
    arrays: list[ArraySpec],
    inputs: Inputs,
    *,
    chain_targets: Mapping[str, PC] | None = None,
) -> tuple[SimOutcome | None, Inputs]:
    """Run ``program`` once; returns what the switch did and the inputs to give the
    interpreter (the metadata and random words the simulator used). The outcome is None
    when the code and this stack together exceed the Geneve option limit."""
    profile = program.profile
    net = Network(profile)
    switch = net.add_switch("s", ports_per_pipe=16, switch_id=SWITCH_ID)
    word = inputs.rand[0] if isinstance(inputs.rand, list | tuple) and inputs.rand else 0
    switch.rngs[0] = _FixedRandom(word)  # type: ignore[assignment]
    control = switch.control
    control.authorize(
        TENANT,
        app_id=program.app_id,
        unauthorized="drop",
        metadata=True,
        privileged=True,
        recirculate=True,
    )
    control.set_default_port(DEFAULT_PORT)
    for value in range(STEER_VALUES):
        control.set_forwarding(TENANT, value, Destination(port=value))
        control.set_multicast_group(TENANT, value, [Destination(port=value)])
    for spec in arrays:
        for vaddr, size in pieces(spec.size):
            control.map_segment(TENANT, spec.eu, spec.lane, vaddr, size)
        cells = inputs.memory.get(spec.name, {})
        items = cells.items() if isinstance(cells, Mapping) else enumerate(cells)
        for index, value in items:
            if 0 <= index < spec.size and value:
                control.write_memory(TENANT, spec.eu, spec.lane, index, [value & 0xFFFF_FFFF])
    header = program.header(tuple(inputs.stack))
    if program.placement is Placement.SWITCH:
        installed = install_program(control, program)
        header = replace(header, dpf_ptr=installed.entry)
    try:
        options = encode_options(header, profile).data
    except EncodingError:
        # The code fits a packet (codegen checks it with an empty stack) but not with this
        # many stack words: no such packet can exist, so there is nothing to compare.
        return None, inputs
    frame = build_frame(
        tenant_id=TENANT,
        options=options,
        inner=build_inner(b"payload"),
    )
    parsed_in = parse_packet(frame, profile)
    meta = {
        "ingress_port": IN_PORT,
        "timestamp": NOW_NS,
        "switch_id": SWITCH_ID,
        "queue_depth": QUEUE_DEPTH,
        "packet_length": len(parsed_in.inner) + parsed_in.inner_offset,
        "pipe_id": 0,
    }
    result = switch.process(frame, IN_PORT, now_ns=NOW_NS, queue_depth=QUEUE_DEPTH)
    port = stack = dpf_ptr = code_present = None
    leaving = result.outputs[0] if result.outputs else None
    if leaving is None and result.recirculated is not None:
        leaving = (None, result.recirculated)
    if leaving is not None:
        port, out_frame = leaving
        out = parse_packet(out_frame, profile)
        if out.header is not None:
            stack = tuple(out.header.stack)
            dpf_ptr = out.header.dpf_ptr
            code_present = not out.header.code.is_empty()
    memory: dict[str, dict[int, int]] = {}
    for spec in arrays:
        words = control.read_memory(TENANT, spec.eu, spec.lane, 0, spec.size)
        cells = {i: w for i, w in enumerate(words) if w}
        if cells:
            memory[spec.name] = cells
    sim = SimOutcome(result.verdict, result.reason, port, stack, dpf_ptr, code_present, memory)
    interp_inputs = Inputs(
        stack=inputs.stack,
        memory=inputs.memory,
        meta=meta,
        rand=[word],
        profile=profile,
    )
    return sim, interp_inputs


def assert_same(
    sim: SimOutcome,
    expected: Outcome,
    program: AssembledProgram,
    arrays: list[ArraySpec],
    chain_targets: Mapping[str, PC] | None = None,
) -> None:
    """The simulator did what the interpreter says the DPF does."""
    sizes = {a.name: a.size for a in arrays}
    want_memory = {
        name: {i: w for i, w in cells.items() if i < sizes.get(name, 0) and w}
        for name, cells in expected.memory.items()
    }
    want_memory = {k: v for k, v in want_memory.items() if v}
    context = f"\nsim: {sim}\ninterp: {expected!r}"
    assert sim.memory == want_memory, "memory differs" + context
    steer = expected.steer
    value = None if expected.steer_value is None else expected.steer_value & 0xFFFF
    refused = (
        steer in ("forward", "multicast", "set_port")
        and value is not None
        and value >= STEER_VALUES
    )
    if steer == "drop" or refused:
        assert sim.verdict == "drop", "expected a drop" + context
        return
    assert sim.verdict == steer, "steering differs" + context
    if steer in ("forward", "multicast", "set_port"):
        assert sim.port == value, "steering value differs" + context
    elif steer == "pass":
        assert sim.port == DEFAULT_PORT, context
    elif steer == "return_to_sender":
        assert sim.port == IN_PORT, context
    elif steer == "recirculate":
        assert sim.port is None, context
    assert sim.stack == expected.stack, "output stack differs" + context
    if expected.chain is not None:
        target = (chain_targets or {}).get(expected.chain, PC(False, 0))
        assert sim.dpf_ptr == target, "chain target differs" + context
    if program.placement is Placement.PACKET:
        assert sim.code_present == (not expected.drop_code), "drop_code differs" + context
