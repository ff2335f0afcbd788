"""Run a compiled (or assembled) DPF through the simulator and compare it with the IR.

:func:`run_compiled` sets up one simulated switch for one tenant the way a deployment
would: a permission entry (the DPF's app id; the metadata, privileged and recirculate bits),
every array mapped at its (EU, lane) binding for exactly its declared words (direct maps of
up to :data:`DIRECT_LIMIT` words as direct mappings, one per key — so a binding in a lane
without a direct table fails loudly —, larger ones and segment arrays as power-of-two
segments), the initial memory written, forwarding entries and multicast groups
0..:data:`STEER_VALUES`-1 (each to the port of that number, so the output port tells the
steering value), and in-switch code installed (``install_program``) or in-packet code put
in the packet. It sends one real frame (built by :mod:`dpfc.packet`) whose stack is the
input stack, and reads back what left the switch (:class:`SimOutcome`).
:func:`reference` runs the IR interpreter on the same inputs, and :func:`assert_same`
compares the two with a readable diff.

Choices that make the simulator and the interpreter see the same inputs:

* metadata: the ingress port (mod 16), timestamp and queue depth come from ``inputs.meta``
  when given there (defaults :data:`IN_PORT`, :data:`NOW_NS`, :data:`QUEUE_DEPTH`); the
  switch id is :data:`SWITCH_ID`; packet length and pipe id are computed the way the
  simulator does. The header fields come from the inner frame :func:`inner_frame` builds
  from ``inputs.meta`` (each word cut to its field's width; ports only for UDP and TCP),
  with their values stated there. :func:`reference` gives the interpreter exactly these values (keyed by
  the profile's metadata names, the names the IR's ``meta`` op uses); other ``inputs.meta``
  entries are ignored.
* RAND: ``inputs.rand[k % len]`` is the word of the function's k-th ``rand`` instruction
  (function order: blocks, then instructions; the numbering of
  :mod:`dpfc.schedule.problem.build`, which carries it as the RAND operation's ``index``). The
  prolog draws in register order, so the simulator's generator is replaced by one that
  returns, for its j-th draw, the word of the RAND operation the j-th RAND prolog load
  holds (``rand_order``, from the schedule: :func:`rand_order`); the interpreter draws in
  execution order, so :func:`reference` re-runs it until the words it consumed along the
  path it took are the words of the instructions on that path (a fixed point: the draws
  before a branch fix its direction, so each run gets one more block right). A compiled
  DPF that draws one word twice or feeds one draw to two instructions is caught. Without
  ``rand_order`` (hand-written assembly: machine code names no RAND operation) every draw
  is ``inputs.rand[0]`` and so is every instruction's word.
* out-of-bounds accesses: the interpreter reads 0 and writes nothing at an index at or
  beyond an array's declared size; the harness maps exactly the declared words, so such an
  address is unmapped in the simulator, which reads 0 and writes nothing (docs/isa.md,
  unmapped memory). Initial words past the end (the differential inputs give two) are not
  written to the switch, and the comparison of final memory covers the declared words only.
* steering: values whose low 16 bits are below :data:`STEER_VALUES` have forwarding
  entries and groups; for a larger value the switch refuses the action (the tenant's
  unauthorized action: drop), which :func:`assert_same` expects. Outgoing stacks deeper
  than the profile's ``stack_max_depth``, and outgoing options (the code still carried plus
  the new stack) over the 252 bytes Geneve allows, fault in the switch (dropped); the
  interpreter has neither limit, so :func:`assert_same` expects the drop.
* egress DPFs (``@egress``): the packet names the DPF in its egress pointer and no ingress
  DPF, so it passes the ingress unchanged, is routed to :data:`DEFAULT_PORT` and runs the
  DPF in that port's egress: the arrays are mapped (and read back) in the egress
  pipeline's memory, RAND draws from the egress generator, ``egress_port`` is
  :data:`DEFAULT_PORT` (0xFFFF for an ingress DPF), and the outcome is the egress run's
  (pass or drop); "the pointer" compared is the egress pointer.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from dpfc.backends.jit import JitSwitch
from dpfc.backends.sim import Destination, Network, PassResult, Switch
from dpfc.encoding import (
    HEADER_DATA_LEN,
    OPTIONS_MAX,
    STACK_ENTRIES_PER_OPTION,
    EncodingError,
    encode_options,
)
from dpfc.ir.core import Module, Op
from dpfc.ir.interp import Inputs, Outcome, canonical_memory, run_function
from dpfc.isa.bundle import PC
from dpfc.isa.opcodes import SelectorKind
from dpfc.machine.program import MachineProgram, Pipeline, Placement
from dpfc.packet.layers import build_frame, build_inner
from dpfc.packet.wire import parse_packet
from dpfc.schedule import Problem, Schedule
from dpfc.switch import segment_pieces
from tests.sim_install import install_program

TENANT = 7
IN_PORT = 3
DEFAULT_PORT = 15
STEER_VALUES = 16
SWITCH_ID = 0x5A
NOW_NS = 123_456
QUEUE_DEPTH = 9
DIRECT_LIMIT = 64  # larger direct maps (kvs: 45,000 keys) are mapped as segments: faster
IP_SRC = "10.0.0.1"
IP_DST = "10.0.0.2"


@dataclass(frozen=True)
class ArraySpec:
    """Where one array lives: ``size`` words at (``eu``, ``lane``)."""

    name: str
    size: int
    eu: int
    lane: int
    mapping: str = "segment"  # "segment" | "direct"


@dataclass
class SimOutcome:
    """What the switch did with the packet, and what it saw (for :func:`reference`)."""

    verdict: str
    reason: str
    port: int | None  # the port the (first) output frame left by
    stack: tuple[int, ...] | None  # the output stack (None: nothing left the switch)
    dpf_ptr: PC | None  # the pointer of the DPF's pipeline (an egress DPF's: egress_ptr)
    code_present: bool | None
    returned: bool | None  # the outer IPv4 destination is the sender's address
    memory: dict[str, dict[int, int]]
    # The run's circumstances, for reference() and assert_same().
    meta: dict[str, int] = field(default_factory=dict)
    rand_words: tuple[int, ...] = ()  # word of the IR's k-th rand instruction: [k % len]
    entry: PC | None = None  # the pointer (of the DPF's pipeline) the packet carried
    in_port: int = IN_PORT
    placement: Placement = Placement.PACKET
    stack_limit: int = 16
    code_bytes: int = 0  # the in-packet code's options (kept unless the DPF drops the code)


class _ListRandom:
    """Stands in for the pipe's random.Random: the j-th draw gives ``words[j]``."""

    def __init__(self, words: Sequence[int]) -> None:
        self.words = [w & 0xFFFF_FFFF for w in words]
        self.drawn = 0

    def getrandbits(self, bits: int) -> int:
        word = self.words[self.drawn] if self.drawn < len(self.words) else 0
        self.drawn += 1
        return word & ((1 << bits) - 1)


def arrays_of(problem: Problem, bindings: Mapping[str, tuple[int, int]]) -> list[ArraySpec]:
    """The arrays a schedule binds (name order)."""
    return [
        ArraySpec(name, problem.arrays[name].size, *bindings[name], problem.arrays[name].mapping)
        for name in sorted(bindings)
    ]


def rand_order(schedule: Schedule) -> tuple[int, ...]:
    """For each RAND load of the prolog (register order = draw order): the index of the IR
    ``rand`` instruction whose word it holds."""
    problem = schedule.problem
    return tuple(
        problem.ops[load.op].index
        for load in schedule.prolog
        if load.kind is SelectorKind.RAND and load.op is not None
    )


def _word_of(words: Sequence[int], index: int) -> int:
    return words[index % len(words)] & 0xFFFF_FFFF if words else 0


def run_compiled(
    program: MachineProgram,
    arrays: Sequence[ArraySpec],
    inputs: Inputs,
    *,
    rand_order: Sequence[int] | None = None,
    jit: bool = False,
) -> SimOutcome | None:
    """Run ``program`` once on ``inputs`` (stack, memory, rand; see the module docstring).

    Returns None when the code and this stack together exceed the Geneve option limit (no
    such packet can exist)."""
    profile = program.profile
    net = Network(profile)
    switch = net.add_switch("s", ports_per_pipe=16, switch_id=SWITCH_ID)
    given_rand = list(inputs.rand) if isinstance(inputs.rand, Sequence) else []
    if rand_order is None:
        rand_words: tuple[int, ...] = (_word_of(given_rand, 0),)
        draws = [rand_words[0]] * (2 * profile.lanes)
    else:
        rand_words = tuple(_word_of(given_rand, k) for k in range(max(len(given_rand), 1)))
        draws = [_word_of(rand_words, k) for k in rand_order]
    egress = program.pipeline is Pipeline.EGRESS
    pipeline = program.pipeline.value
    if egress:
        switch.egress_rngs[switch.pipe_of(DEFAULT_PORT)] = _ListRandom(draws)
    else:
        switch.rngs[0] = _ListRandom(draws)
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
        initial = _words(inputs.memory.get(spec.name, {}))
        if spec.mapping == "direct" and spec.size <= DIRECT_LIMIT:
            for key in range(spec.size):
                value = initial.get(key, 0)
                control.map_direct(TENANT, spec.eu, spec.lane, key, value=value, pipeline=pipeline)
            continue
        for vaddr, size in segment_pieces(spec.size):
            control.map_segment(TENANT, spec.eu, spec.lane, vaddr, size, pipeline=pipeline)
        for index, value in sorted(initial.items()):
            if 0 <= index < spec.size and value:
                control.write_memory(TENANT, spec.eu, spec.lane, index, [value], pipeline=pipeline)
    header = program.header(tuple(w & 0xFFFF_FFFF for w in inputs.stack))
    if program.placement is Placement.SWITCH:
        installed = install_program(control, program)
        if egress:
            header = replace(header, egress_ptr=installed.entry)
        else:
            header = replace(header, dpf_ptr=installed.entry)
    try:
        encoded = encode_options(header, profile)
        options = encoded.data
    except EncodingError:
        # The code fits a packet (codegen checks it with an empty stack) but not with this
        # many stack words.
        return None
    inner, header_meta = inner_frame(inputs.meta)
    frame = build_frame(
        tenant_id=TENANT,
        options=options,
        inner=inner,
        ip_src=IP_SRC,
        ip_dst=IP_DST,
    )
    parsed_in = parse_packet(frame, profile)
    in_port = inputs.meta.get("ingress_port", IN_PORT) % 16
    now_ns = inputs.meta.get("timestamp", NOW_NS) & 0xFFFF_FFFF
    queue_depth = inputs.meta.get("queue_depth", QUEUE_DEPTH) & 0xFFFF_FFFF
    meta = {
        "ingress_port": in_port,
        "timestamp": now_ns,
        "switch_id": SWITCH_ID,
        "queue_depth": queue_depth,
        "packet_length": len(parsed_in.inner) + parsed_in.inner_offset,
        # an egress DPF runs in the pipe of its output port, which it reads; an ingress
        # DPF runs before the port is chosen
        "pipe_id": switch.pipe_of(DEFAULT_PORT if egress else in_port),
        "egress_port": DEFAULT_PORT if egress else 0xFFFF,
        **header_meta,
    }
    twin = copy.deepcopy(switch) if jit else None
    result = switch.process(frame, in_port, now_ns=now_ns, queue_depth=queue_depth)
    if twin is not None:  # the llvmlite JIT on an identical switch: the same pass and state
        native = JitSwitch(twin).process(frame, in_port, now_ns=now_ns, queue_depth=queue_depth)
        assert_same_pass(result, native, switch, twin)
    verdict, reason = result.verdict, result.reason
    if egress and result.egress:  # the egress run decides whether the frame leaves
        verdict, reason = result.egress[0].verdict, result.egress[0].reason
    port = stack = dpf_ptr = code_present = returned = None
    # (port, frame) of the frame that leaves; a recirculated frame leaves through no port
    leaving: tuple[int | None, bytes] | None = result.outputs[0] if result.outputs else None
    if leaving is None and result.recirculated is not None:
        leaving = (None, result.recirculated)
    if leaving is not None:
        port, out_frame = leaving
        out = parse_packet(out_frame, profile)
        returned = out.ip_dst == parsed_in.ip_src
        if out.header is not None:
            stack = tuple(out.header.stack)
            dpf_ptr = out.header.egress_ptr if egress else out.header.dpf_ptr
            code_present = not out.header.code.is_empty()
    memory: dict[str, dict[int, int]] = {}
    for spec in arrays:
        words = control.read_memory(TENANT, spec.eu, spec.lane, 0, spec.size, pipeline=pipeline)
        memory[spec.name] = dict(enumerate(words))
    return SimOutcome(
        verdict=verdict,
        reason=reason,
        port=port,
        stack=stack,
        dpf_ptr=dpf_ptr,
        code_present=code_present,
        returned=returned,
        memory=canonical_memory(memory),
        meta=meta,
        rand_words=rand_words,
        entry=header.egress_ptr if egress else header.dpf_ptr,
        in_port=in_port,
        placement=program.placement,
        stack_limit=profile.stack_max_depth,
        code_bytes=encoded.code_bytes,
    )


def inner_frame(meta: Mapping[str, int]) -> tuple[bytes, dict[str, int]]:
    """The inner frame whose headers carry the header fields ``meta`` asks for, and the
    value of every header field LOAD_MD reads from it (docs/isa.md §4), stated here: each
    word cut to its field's width; the protocol is UDP, TCP or the word's low byte (a
    third each, by the word), and the ports are 0 unless it is UDP or TCP."""
    src = meta.get("ipv4_src", 0xC0A8_0001) & 0xFFFF_FFFF
    dst = meta.get("ipv4_dst", 0xC0A8_0002) & 0xFFFF_FFFF
    word = meta.get("ip_proto", 17) & 0xFFFF_FFFF
    proto = (17, 6, word & 0xFF)[word % 3]
    sport, dport = meta.get("l4_src", 9000) & 0xFFFF, meta.get("l4_dst", 9000) & 0xFFFF
    ttl, dscp = meta.get("ttl", 64) & 0xFF, meta.get("dscp", 0) & 0x3F
    frame = build_inner(
        b"payload",
        src=_dotted(src),
        dst=_dotted(dst),
        proto=proto,
        sport=sport,
        dport=dport,
        ttl=ttl,
        dscp=dscp,
    )
    ports = proto in (6, 17)
    values = {
        "ipv4_src": src,
        "ipv4_dst": dst,
        "ip_proto": proto,
        "dscp": dscp,
        "ttl": ttl,
        "l4_src": sport if ports else 0,
        "l4_dst": dport if ports else 0,
    }
    return frame, values


def _dotted(address: int) -> str:
    return ".".join(str(b) for b in address.to_bytes(4, "big"))


def assert_same_pass(mine: PassResult, native: PassResult, switch: Switch, twin: Switch) -> None:
    """The interpreter's pass and the JIT's agree: result, counters, memory, reports."""
    assert (native.tenant, native.verdict, native.reason) == (
        mine.tenant,
        mine.verdict,
        mine.reason,
    )
    assert native.outputs == mine.outputs and native.recirculated == mine.recirculated
    assert native.executed == mine.executed and native.egress_ptr == mine.egress_ptr
    assert [e.frame for e in native.egress] == [e.frame for e in mine.egress]
    for a, b in zip(switch.pipes, twin.pipes, strict=True):
        assert {t: vars(s) for t, s in a.stats.items()} == {t: vars(s) for t, s in b.stats.items()}
        assert [m._words for m in a.all_lanes()] == [m._words for m in b.all_lanes()]
        assert (a.packets_seen, list(a.reports)) == (b.packets_seen, list(b.reports))


def _words(cells: Mapping[int, int] | Sequence[int]) -> dict[int, int]:
    items = cells.items() if isinstance(cells, Mapping) else enumerate(cells)
    return {int(i): int(w) & 0xFFFF_FFFF for i, w in items}


def reference(module: Module, name: str, inputs: Inputs, sim: SimOutcome) -> Outcome:
    """The interpreter's outcome of DPF ``name`` on ``inputs`` with the metadata the switch
    saw and each ``rand`` instruction given its word (see the module docstring)."""
    function = module.function(name)
    rand_blocks = [
        block.label for block in function.blocks for i in block.instrs if i.op is Op.RAND
    ]
    words = sim.rand_words

    def along(path: Sequence[str]) -> list[int]:
        """The words of the rand instructions on ``path``, in execution order."""
        order = {label: n for n, label in enumerate(path)}
        on_path = [k for k, label in enumerate(rand_blocks) if label in order]
        # Instructions of one block keep their order (sorted() is stable).
        return [_word_of(words, k) for k in sorted(on_path, key=lambda k: order[rand_blocks[k]])]

    sequence = [_word_of(words, k) for k in range(len(rand_blocks))]
    for _ in range(len(function.blocks) + 1):
        outcome = run_function(
            module,
            name,
            Inputs(
                stack=inputs.stack,
                memory=inputs.memory,
                meta=sim.meta,
                rand=list(sequence),
                profile=inputs.profile,
            ),
        )
        wanted = along(outcome.path)
        if sequence[: len(wanted)] == wanted:
            return outcome
        sequence = wanted + sequence
    raise AssertionError(f"rand words of `{name}` did not reach a fixed point")


def _expected_port(steer: str, value: int | None, in_port: int) -> int | None:
    if steer in ("forward", "multicast", "set_port"):
        return value
    return {"pass": DEFAULT_PORT, "return_to_sender": in_port}.get(steer)


def options_bytes(code_bytes: int, stack_depth: int) -> int:
    """The SwitchVM options of a packet that carries ``code_bytes`` of code and a stack of
    ``stack_depth`` words (docs/encoding.md §2): the header option, the code, then stack
    options of up to 31 words, each with its 4-byte option header."""
    chunks = -(-stack_depth // STACK_ENTRIES_PER_OPTION)
    return 4 + HEADER_DATA_LEN + code_bytes + 4 * chunks + 4 * stack_depth


def assert_same(
    sim: SimOutcome | None,
    expected: Outcome,
    sizes: Mapping[str, int],
    chain_targets: Mapping[str, PC] | None = None,
) -> None:
    """The simulator did what the interpreter says the DPF does (``sizes``: the declared
    words of each array the DPF's program maps)."""
    assert sim is not None, "no packet can carry this code and stack"
    want_memory = canonical_memory(
        {
            name: {i: w for i, w in cells.items() if i < sizes[name]}
            for name, cells in expected.memory.items()
            if name in sizes
        }
    )
    steer = expected.steer
    value = None if expected.steer_value is None else expected.steer_value & 0xFFFF
    refused = steer in ("forward", "multicast", "set_port") and (
        value is None or value >= STEER_VALUES
    )
    overflow = len(expected.stack) > sim.stack_limit or (
        not expected.drop_code and options_bytes(sim.code_bytes, len(expected.stack)) > OPTIONS_MAX
    )
    want: dict[str, object] = {"memory": want_memory}
    got: dict[str, object] = {"memory": sim.memory}
    if steer == "drop" or refused or overflow:
        want["verdict"] = "drop"
        got["verdict"] = sim.verdict
    else:
        if expected.chain is not None:
            target: PC | None = (chain_targets or {}).get(expected.chain)
            assert target is not None, f"no chain target given for `{expected.chain}`"
        elif expected.drop_code and sim.placement is Placement.PACKET:
            target = None  # the in-packet code the pointer named has left the packet
        else:
            target = sim.entry
        want |= {
            "verdict": steer,
            "port": _expected_port(steer, value, sim.in_port),
            "stack": expected.stack,
            "dpf_ptr": target,
        }
        got |= {"verdict": sim.verdict, "port": sim.port, "stack": sim.stack}
        got["dpf_ptr"] = sim.dpf_ptr
        if steer == "return_to_sender":
            want["returned"] = True
            got["returned"] = sim.returned
        if sim.placement is Placement.PACKET:
            want["code_present"] = not expected.drop_code
            got["code_present"] = sim.code_present
    if want != got:
        lines = [
            f"  {key}: simulator {got.get(key)!r} != interpreter {want[key]!r}"
            for key in want
            if want[key] != got.get(key)
        ]
        raise AssertionError(
            "the simulator and the IR interpreter disagree:\n"
            + "\n".join(lines)
            + f"\n  (switch: {sim.verdict}: {sim.reason})\n  interpreter: {expected!r}"
        )
