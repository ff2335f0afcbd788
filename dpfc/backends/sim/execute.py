"""One pass of one packet through one pipe: the SwitchVM data path.

Parse -> Permissions -> Prolog -> EU0..EU(n-1) -> Epilog -> Steering -> deparse, exactly as
``docs/isa.md`` and ``docs/simulator.md`` specify. :func:`run_pass` reads the pipe's tables
and changes only lane memory words and the pipe's counters and reports; it never raises on
packet content: every malformed, hostile or faulting packet ends in a :class:`PassResult`
that says what happened and why.

Timing of one EU (docs/isa.md §3): selectors read the EU-entry registers and write in
parallel; ALU and memory data see the selected values; the memory unit translates the
address of ``profile.memory_address``; the branch compares the values
``profile.branch_operands`` names; ALU and memory writes win over selector writes.

:func:`run_egress` is the egress pipeline (docs/isa.md §6 item 20, docs/simulator.md R23):
one frame leaving by one port runs the DPF its header's ``egress_ptr`` names, with the
pipe's shared tables (permissions, code, constants) and the pipe's *egress* lane memories;
``LOAD_MD egress_port`` reads the port. Its epilog may push, drop the code (HDR_MOD), set
the egress pointer for the next switch (NEXT_PC) and pass or drop the frame; any other
steering faults (the port is already chosen). It never raises on packet content either.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

from dpfc.encoding.code import decode_pc
from dpfc.encoding.errors import DecodeError, EncodingError
from dpfc.encoding.header import SwitchVMHeader, decode_options, encode_options
from dpfc.isa.bundle import (
    EPILOG_STAGE,
    PC,
    PROLOG_STAGE,
    Bundle,
    CodeImage,
    EpilogBundle,
    Imm,
    Operand,
    Register,
    StageBundle,
    stage_name,
)
from dpfc.isa.opcodes import AluOp, CtrlOp, MemOp, SelectorKind
from dpfc.isa.semantics import alu, branch_taken, hash_word, memory
from dpfc.packet.wire import ParsedPacket, parse_packet
from dpfc.target.profile import BranchOperands, MemoryAddress, TargetProfile

from .deparse import DeparseError, plain_ipv4_destination, rebuild_frame, swap_addresses
from .rand import RandomSource
from .state import Destination, Permissions, PipeState, TenantStats, UnauthorizedAction
from .trace import PacketTrace, StageTrace, format_registers

# Decoding is a pure function of the option bytes; a switch sees the same options often.
_decode_options = lru_cache(maxsize=4096)(decode_options)
_encode_options = lru_cache(maxsize=4096)(encode_options)

# Outer headers that make a frame ordinary traffic rather than a malformed SwitchVM packet.
NOT_SWITCHVM = {"DPF3060": "not IPv4", "DPF3064": "not UDP", "DPF3065": "not Geneve"}


@dataclass(frozen=True)
class Context:
    """What the pipe knows about the packet besides its bytes (switch metadata)."""

    ingress_port: int
    switch_id: int
    pipe_id: int
    timestamp_ns: int
    queue_depth: int
    ports: int  # ports of the switch (set_port values must name one)
    egress_port: int | None = None  # the output port, in the egress pipeline only


@dataclass
class EgressRun:
    """What the egress pipeline of ``pipe`` did with a frame leaving by ``port``: ``pass``
    (``frame`` is what leaves) or ``drop`` (``frame`` is None), and why."""

    port: int
    pipe: int
    tenant: int | None
    verdict: str  # pass | drop
    reason: str
    frame: bytes | None
    executed: tuple[tuple[int, PC], ...] = ()  # (stage, PC) of every egress bundle run
    trace: PacketTrace | None = None


@dataclass
class PassResult:
    """The outcome of one pass: frames to send, or a recirculated frame, or nothing."""

    tenant: int | None
    verdict: str  # pass, drop, return_to_sender, forward, multicast, set_port, recirculate
    reason: str
    outputs: list[tuple[int, bytes]] = field(default_factory=list)  # (egress port, frame)
    recirculated: bytes | None = None
    executed: tuple[tuple[int, PC], ...] = ()  # (stage, PC) of every bundle run
    trace: PacketTrace | None = None
    # the egress DPF runs of the frames that left (the switch's outputs are their results)
    egress: list[EgressRun] = field(default_factory=list)
    # The egress pointer of the outputs' header (one header for all of a pass's outputs),
    # bridged to the egress as a P4 program bridges metadata: the switch runs the egress
    # only for outputs that name an egress DPF, without parsing the others again.
    egress_ptr: PC | None = None


class Fault(Exception):
    """A DPF cannot continue (missing or foreign code, stack overflow, bad options)."""


def run_pass(
    pipe: PipeState, frame: bytes, ctx: Context, rng: RandomSource, *, trace: bool = False
) -> PassResult:
    pipe.packets_seen += 1
    tracer = PacketTrace(pipe=pipe.index, ingress_port=ctx.ingress_port) if trace else None
    result = _run(pipe, frame, ctx, rng, tracer)
    if tracer is not None:
        tracer.verdict = result.verdict
        tracer.reason = result.reason
        tracer.outputs = [port for port, _ in result.outputs]
        result.trace = tracer
    return result


def _run(
    pipe: PipeState, frame: bytes, ctx: Context, rng: RandomSource, tracer: PacketTrace | None
) -> PassResult:
    profile = pipe.profile
    try:
        parsed = parse_packet(frame, profile, decode=_decode_options)
    except DecodeError as exc:
        if exc.code in NOT_SWITCHVM:
            return _route_plain(
                pipe, frame, f"{NOT_SWITCHVM[exc.code]}: routed as ordinary traffic"
            )
        tenant = _peek_tenant(frame)
        if tenant is not None and tenant in pipe.permissions:
            pipe.stats_for(tenant).packets += 1
            pipe.stats_for(tenant).dropped += 1
        detail = f"malformed packet: {exc.message} (byte {exc.offset}) [{exc.code}]"
        pipe.report(-1 if tenant is None else tenant, "malformed", detail)
        return PassResult(tenant, "drop", detail)
    tenant = parsed.tenant_id
    if tracer is not None:
        tracer.tenant = tenant
    entry = pipe.permissions.get(tenant)
    header = parsed.header
    if entry is None:
        if header is None:
            return _route_plain(pipe, frame, f"tenant {tenant} has no permission entry and no DPF")
        pipe.report(tenant, "unauthorized", f"tenant {tenant} is not authorized on this pipe")
        return PassResult(tenant, "drop", f"tenant {tenant} is not authorized on this pipe")
    stats = pipe.stats_for(tenant)
    stats.packets += 1
    if header is not None and not entry.accepts(header.app_id):
        stats.unauthorized += 1
        detail = (
            f"app id {header.app_id:#x} does not match tenant {tenant}'s token {entry.app_id:#x}"
        )
        pipe.report(tenant, "unauthorized", detail)
        return _unauthorized(pipe, frame, parsed, entry, stats, detail)
    pointer = header.dpf_ptr if header is not None else None
    if pointer is None:
        pointer = entry.default_dpf
        if pointer is None:
            result = _route_plain(
                pipe, frame, "no DPF pointer and no default DPF: passed unchanged", tenant
            )
            result.egress_ptr = header.egress_ptr if header is not None else None
            _count_route(stats, result)
            return result
    machine = Machine(pipe, parsed, entry, stats, ctx, rng, tracer)
    try:
        return machine.run(pointer, frame)
    except Fault as exc:
        stats.faults += 1
        stats.dropped += 1
        pipe.report(tenant, "fault", str(exc))
        return PassResult(tenant, "drop", f"DPF fault: {exc}", executed=tuple(machine.executed))


def run_egress(
    pipe: PipeState, frame: bytes, ctx: Context, rng: RandomSource, *, trace: bool = False
) -> EgressRun | None:
    """The egress pipeline of ``pipe`` for ``frame`` leaving by ``ctx.egress_port``; None
    when the frame names no egress DPF (ordinary traffic, or a header without one): it
    leaves unchanged."""
    assert ctx.egress_port is not None
    port = ctx.egress_port
    try:
        parsed = parse_packet(frame, pipe.profile, decode=_decode_options)
    except DecodeError:
        return None  # not SwitchVM (the ingress made or routed it): nothing to run
    header = parsed.header
    if header is None or header.egress_ptr is None:
        return None
    tenant = parsed.tenant_id
    tracer = None
    if trace:
        tracer = PacketTrace(
            pipe=pipe.index, ingress_port=ctx.ingress_port, tenant=tenant, egress_port=port
        )
    run = _egress(pipe, frame, parsed, header.egress_ptr, ctx, rng, tracer)
    if tracer is not None:
        tracer.verdict = run.verdict
        tracer.reason = run.reason
        tracer.outputs = [port] if run.frame is not None else []
        run.trace = tracer
    return run


def _egress(
    pipe: PipeState,
    frame: bytes,
    parsed: ParsedPacket,
    pointer: PC,
    ctx: Context,
    rng: RandomSource,
    tracer: PacketTrace | None,
) -> EgressRun:
    assert ctx.egress_port is not None and parsed.header is not None
    port, tenant = ctx.egress_port, parsed.tenant_id
    entry = pipe.permissions.get(tenant)
    if entry is None:
        # as in the ingress (R2): SwitchVM code of a tenant the pipe does not know
        detail = f"tenant {tenant} is not authorized on this pipe (egress DPF)"
        pipe.report(tenant, "unauthorized", detail)
        return EgressRun(port, pipe.index, tenant, "drop", detail, None)
    stats = pipe.stats_for(tenant)
    if not entry.accepts(parsed.header.app_id):
        stats.unauthorized += 1
        detail = (
            f"app id {parsed.header.app_id:#x} does not match tenant {tenant}'s token "
            f"{entry.app_id:#x} (egress DPF)"
        )
        pipe.report(tenant, "unauthorized", detail)
        return _egress_unauthorized(pipe.index, port, frame, tenant, entry, stats, detail)
    machine = Machine(pipe, parsed, entry, stats, ctx, rng, tracer, pipeline="egress")
    try:
        return machine.run_egress(pointer, frame)
    except Fault as exc:
        stats.faults += 1
        stats.dropped += 1
        pipe.report(tenant, "fault", f"egress: {exc}")
        return EgressRun(
            port,
            pipe.index,
            tenant,
            "drop",
            f"egress DPF fault: {exc}",
            None,
            tuple(machine.executed),
        )


def _egress_unauthorized(
    pipe: int,
    port: int,
    frame: bytes,
    tenant: int,
    entry: Permissions,
    stats: TenantStats,
    detail: str,
    executed: tuple[tuple[int, PC], ...] = (),
) -> EgressRun:
    """The tenant's unauthorized action in the egress: pass leaves the frame as it came."""
    if entry.unauthorized is UnauthorizedAction.PASS:
        return EgressRun(
            port, pipe, tenant, "pass", f"{detail}: passed on unchanged", frame, executed
        )
    stats.dropped += 1
    return EgressRun(port, pipe, tenant, "drop", f"{detail}: dropped", None, executed)


def _unauthorized(
    pipe: PipeState,
    frame: bytes,
    parsed: ParsedPacket,
    entry: Permissions,
    stats: TenantStats,
    detail: str,
    executed: tuple[tuple[int, PC], ...] = (),
) -> PassResult:
    if entry.unauthorized is UnauthorizedAction.PASS:
        result = _route_plain(pipe, frame, f"{detail}: passed on unchanged", parsed.tenant_id)
        result.executed = executed
        result.egress_ptr = parsed.header.egress_ptr if parsed.header is not None else None
        _count_route(stats, result)
        return result
    stats.dropped += 1
    return PassResult(parsed.tenant_id, "drop", f"{detail}: dropped", executed=executed)


def _count_route(stats: TenantStats, result: PassResult) -> None:
    """Count a routed packet as passed, or as dropped when no route took it."""
    if result.verdict == "drop":
        stats.dropped += 1
    else:
        stats.passed += 1


def _route_plain(
    pipe: PipeState, frame: bytes, reason: str, tenant: int | None = None
) -> PassResult:
    destination = plain_ipv4_destination(frame)
    if destination is None:
        return PassResult(tenant, "drop", f"{reason}; not IPv4, no route")
    port = pipe.routes.get(destination, pipe.default_port)
    if port is None:
        return PassResult(tenant, "drop", f"{reason}; no route to {_ip(destination)}")
    return PassResult(tenant, "pass", reason, outputs=[(port, frame)])


def _kept(pointer: PC | None, code: CodeImage) -> PC | None:
    """The other pipeline's pointer after this DPF: none when it named in-packet code the
    DPF removed (HDR_MOD, R10), else unchanged."""
    if pointer is not None and pointer.in_packet and pointer.index >= len(code.prologs):
        return None
    return pointer


def _peek_tenant(frame: bytes) -> int | None:
    """Best-effort VNI of a frame that failed to parse (for accounting only)."""
    offset = 14
    if len(frame) >= 18 and frame[12:14] == b"\x81\x00":
        offset = 18
    if len(frame) < offset + 1:
        return None
    ihl = (frame[offset] & 0xF) * 4
    vni_at = offset + ihl + 8 + 4
    if ihl < 20 or len(frame) < vni_at + 3:
        return None
    return int.from_bytes(frame[vni_at : vni_at + 3], "big")


def _ip(address: bytes) -> str:
    return ".".join(str(b) for b in address)


@dataclass(frozen=True)
class _Epilog:
    """What an epilog decided: the outgoing stack, the steering action and its value, the
    new pointer of the machine's pipeline (DPF pointer or egress pointer) and the code the
    packet keeps."""

    stack: list[int]
    action: str
    value: int
    pointer: PC | None
    code: CodeImage


class Machine:
    """The registers, stack and code of one DPF execution, in the ingress or the egress
    pipeline (``pipeline``): the egress one uses the pipe's egress lane memories and its
    NEXT_PC sets the egress pointer."""

    def __init__(
        self,
        pipe: PipeState,
        parsed: ParsedPacket,
        entry: Permissions,
        stats: TenantStats,
        ctx: Context,
        rng: RandomSource,
        tracer: PacketTrace | None,
        *,
        pipeline: str = "ingress",
    ) -> None:
        self.pipe = pipe
        self.pipeline = pipeline
        self.memories = pipe.memories(pipeline)
        self.profile: TargetProfile = pipe.profile
        self.parsed = parsed
        self.header = parsed.header
        self.tenant = parsed.tenant_id
        self.entry = entry
        self.stats = stats
        self.ctx = ctx
        self.rng = rng
        self.tracer = tracer
        self.lanes = self.profile.lanes
        self.regs = [0] * (2 * self.lanes)  # zeroed for every packet: A0..A(L-1), B0..B(L-1)
        self.stack = list(self.header.stack) if self.header is not None else []
        self.code: CodeImage = self.header.code if self.header is not None else CodeImage()
        self.executed: list[tuple[int, PC]] = []

    # -- helpers -------------------------------------------------------------------------------
    def index(self, reg: Register) -> int:
        return reg.cls.value * self.lanes + reg.lane

    def fetch(self, stage: int, pc: PC) -> StageBundle:
        self.executed.append((stage, pc))
        name = stage_name(stage)
        if pc.in_packet:
            if stage == PROLOG_STAGE:
                bundles: tuple[StageBundle, ...] = self.code.prologs
            elif stage == EPILOG_STAGE:
                bundles = self.code.epilogs
            else:
                bundles = self.code.eus[stage - 1] if stage - 1 < len(self.code.eus) else ()
            if pc.index >= len(bundles):
                raise Fault(f"{name} {pc}: the packet carries {len(bundles)} {name} bundle(s)")
            return bundles[pc.index]
        slot = self.pipe.code.get(stage, {}).get(pc.index)
        if slot is None:
            raise Fault(f"{name} {pc}: code-memory slot is empty")
        if slot.owners is not None and self.tenant not in slot.owners:
            raise Fault(f"{name} {pc}: code-memory slot belongs to other tenants")
        return slot.bundle

    def stage_trace(self, stage: int, pc: PC) -> StageTrace | None:
        if self.tracer is None:
            return None
        record = StageTrace(stage_name(stage), str(pc))
        self.tracer.stages.append(record)
        return record

    # -- the pipeline --------------------------------------------------------------------------
    def run(self, pointer: PC, frame: bytes) -> PassResult:
        prolog = self.fetch(PROLOG_STAGE, pointer)
        assert isinstance(prolog, Bundle)
        refused = self.refusal(prolog)
        if refused is not None:
            return _unauthorized(
                self.pipe, frame, self.parsed, self.entry, self.stats, refused, tuple(self.executed)
            )
        self.stats.executed += 1
        epilog, pc = self.execute(prolog, pointer)
        effects = self.run_epilog(epilog, pc)
        return self.steer(
            effects.action, effects.value, effects.stack, effects.pointer, effects.code, frame
        )

    def run_egress(self, pointer: PC, frame: bytes) -> EgressRun:
        """The egress DPF at ``pointer`` on a frame leaving by ``ctx.egress_port``."""
        prolog = self.fetch(PROLOG_STAGE, pointer)
        assert isinstance(prolog, Bundle)
        port = self.ctx.egress_port
        assert port is not None
        refused = self.refusal(prolog)
        if refused is not None:
            return _egress_unauthorized(
                self.pipe.index,
                port,
                frame,
                self.tenant,
                self.entry,
                self.stats,
                refused,
                tuple(self.executed),
            )
        self.stats.egress += 1
        epilog, pc = self.execute(prolog, pointer)
        return self.leave(self.run_epilog(epilog, pc), frame, port)

    def refusal(self, prolog: Bundle) -> str | None:
        """Why the tenant may not run this prolog (LOAD_MD without the metadata bit, R5),
        counted and reported; None when it may."""
        if self.entry.metadata or not any(s.kind is SelectorKind.LOAD_MD for s in prolog.selectors):
            return None
        self.stats.refused += 1
        detail = f"tenant {self.tenant} may not read switch metadata (LOAD_MD)"
        self.pipe.report(self.tenant, "refused", detail)
        return detail

    def execute(self, prolog: Bundle, pointer: PC) -> tuple[EpilogBundle, PC]:
        """The prolog and the EUs; the epilog bundle they lead to, and its PC."""
        pc = self.run_prolog(prolog, pointer)
        halted = False
        for eu in range(self.profile.num_eus):
            bundle = self.fetch(eu + 1, pc)
            assert isinstance(bundle, Bundle)
            pc, halted = self.run_eu(eu, bundle, pc)
            if halted:
                break
        epilog = self.fetch(EPILOG_STAGE, pc)
        assert isinstance(epilog, EpilogBundle)
        return epilog, pc

    def run_prolog(self, bundle: Bundle, pc: PC) -> PC:
        record = self.stage_trace(PROLOG_STAGE, pc)
        regs = self.regs
        # Selectors are stored in initialisation order, A0.. then B0.. (§5): check_bundle
        # (DPF1006) admits no other order, for decoded and installed code alike.
        for sel in bundle.selectors:
            kind = sel.kind
            if kind is SelectorKind.POP or kind is SelectorKind.PEEK:
                if self.stack:
                    value = self.stack.pop(0) if kind is SelectorKind.POP else self.stack[0]
                else:
                    value = 0
                    self.stats.stack_underflow += 1
                    self.pipe.report(
                        self.tenant, "stack", f"{kind.name} {sel.dest} on an empty stack"
                    )
            elif kind is SelectorKind.RAND:
                value = self.rng.getrandbits(32)
            else:  # LOAD_MD (the checker admits only prolog kinds here)
                value = self.metadata(sel.value)
            regs[self.index(sel.dest)] = value
            if record is not None:
                record.events.append(f"{kind.name} {sel.dest} = {value:#x}")
        if record is not None:
            record.registers = format_registers(regs, self.lanes)
            record.next_pc = str(bundle.control.taken)
        return bundle.control.taken

    def metadata(self, index: int) -> int:
        field_ = self.profile.metadata_by_index(index)
        name = field_.name if field_ is not None else ""
        ctx = self.ctx
        values = {
            "ingress_port": ctx.ingress_port,
            "timestamp": ctx.timestamp_ns,
            "switch_id": ctx.switch_id,
            "queue_depth": ctx.queue_depth,
            "packet_length": len(self.parsed.inner) + self.parsed.inner_offset,
            "pipe_id": ctx.pipe_id,
            # no port is chosen while the ingress runs: the "none" of 16-bit pointers
            "egress_port": 0xFFFF if ctx.egress_port is None else ctx.egress_port,
        }
        return values.get(name, 0) & 0xFFFF_FFFF

    def run_eu(self, eu: int, bundle: Bundle, pc: PC) -> tuple[PC, bool]:
        record = self.stage_trace(eu + 1, pc)
        lanes = self.lanes
        entry = self.regs
        selected = list(entry)
        for sel in bundle.selectors:  # a parallel copy: every selector reads `entry`
            kind = sel.kind
            dest = self.index(sel.dest)
            if kind is SelectorKind.MOV:
                assert sel.source is not None
                value = entry[self.index(sel.source)]
            elif kind is SelectorKind.LOAD_IMM:
                value = sel.value
            elif kind is SelectorKind.LOAD_CONST:
                table = self.pipe.constants.get(self.tenant)
                value = table[sel.value] if table is not None else 0
            else:  # HASH (A registers only): CRC of the lane's EU-entry value
                value = hash_word(self.profile.hash_for_lane(sel.dest.lane), entry[dest])
            selected[dest] = value
            if record is not None:
                source = f" {sel.source}" if sel.source is not None else f" {sel.value:#x}"
                record.events.append(f"{kind.name} {sel.dest} <-{source} = {value:#x}")
        address_regs = entry if self.profile.memory_address is MemoryAddress.ENTRY else selected
        result = list(selected)
        lane_memories = self.memories[eu]
        for lane in range(lanes):
            op = bundle.alu[lane]
            if op is not AluOp.NOP:
                a, b = selected[lane], selected[lanes + lane]
                result[lane] = alu(op, a, b)
                if record is not None:
                    record.events.append(
                        f"lane {lane}: {op.name} A{lane}={a:#x}, B{lane}={b:#x} -> A{lane}={result[lane]:#x}"
                    )
            mop = bundle.mem[lane]
            if mop is not MemOp.NOP:
                vaddr = address_regs[lane]
                data = selected[lanes + lane]
                lane_memory = lane_memories[lane]
                physical = lane_memory.translate(self.tenant, vaddr)
                if physical is None:
                    self.stats.unmapped += 1
                    self.pipe.report(
                        self.tenant,
                        "unmapped",
                        f"EU{eu} lane {lane}: {mop.name} [{vaddr:#x}] is not mapped",
                    )
                    if mop is not MemOp.STORE:
                        result[lanes + lane] = 0
                    if record is not None:
                        record.events.append(
                            f"lane {lane}: {mop.name} [{vaddr:#x}] unmapped: no effect"
                        )
                    continue
                words = lane_memory.words
                old = words[physical]
                new, b_value = memory(mop, old, data)
                words[physical] = new
                if b_value is not None:
                    result[lanes + lane] = b_value
                if record is not None:
                    record.events.append(
                        f"lane {lane}: {mop.name} [{vaddr:#x} -> phys {physical}] old={old:#x} "
                        f"new={new:#x}"
                        + (f" -> B{lane}={b_value:#x}" if b_value is not None else "")
                    )
        control = bundle.control
        halted = control.op is CtrlOp.HALT
        if control.op is CtrlOp.JMP or halted:
            next_pc = control.taken
        else:
            mode = self.profile.branch_operands
            if mode is BranchOperands.ENTRY:
                seen = entry
            elif mode is BranchOperands.SELECTED:
                seen = selected
            else:  # LOADED: after selection plus this EU's memory results, never ALU results
                seen = selected[:lanes] + result[lanes:]
            x = self.operand(control.x, seen)
            y = self.operand(control.y, seen)
            taken = branch_taken(control.op, x, y)
            assert control.not_taken is not None
            next_pc = control.taken if taken else control.not_taken
            if record is not None:
                record.events.append(
                    f"{control.op.name} x={x:#x} y={y:#x}: {'taken' if taken else 'not taken'}"
                )
        self.regs = result
        if record is not None:
            record.registers = format_registers(result, lanes)
            record.next_pc = ("HALT -> " if halted else "") + str(next_pc)
        return next_pc, halted

    def operand(self, operand: Operand | None, regs: list[int]) -> int:
        if isinstance(operand, Imm):
            return operand.value
        assert operand is not None
        return regs[self.index(operand)]

    def run_epilog(self, bundle: EpilogBundle, pc: PC) -> _Epilog:
        record = self.stage_trace(EPILOG_STAGE, pc)
        regs = self.regs
        pushed = [regs[self.index(r)] for r in bundle.push]
        stack = pushed + self.stack  # the first listed ends on top
        if len(stack) > self.profile.stack_max_depth:
            raise Fault(
                f"PUSH of {len(pushed)} makes the stack {len(stack)} deep "
                f"(limit {self.profile.stack_max_depth})"
            )
        steering = bundle.steering
        value = steering.value
        steer_value = (
            0
            if value is None
            else value.value
            if isinstance(value, Imm)
            else regs[self.index(value)] & 0xFFFF
        )
        # NEXT_PC sets the pointer of the pipeline this DPF runs in: an ingress DPF chains
        # through dpf_ptr, an egress DPF through egress_ptr (docs/isa.md §6 item 20).
        old_ptr = self.pointer_of(self.header, self.pipeline)
        new_ptr: PC | None = old_ptr
        next_pc = bundle.next_pc
        if isinstance(next_pc, PC):
            new_ptr = next_pc
        elif isinstance(next_pc, Register):
            raw = regs[self.index(next_pc)] & 0xFFFF
            new_ptr = None if raw == 0xFFFF else decode_pc(raw)
        code = CodeImage() if bundle.hdr_mod else self.code
        if bundle.hdr_mod and next_pc is None and new_ptr is not None and new_ptr.in_packet:
            new_ptr = None  # the code it named is gone
        if record is not None:
            if pushed:
                record.events.append(
                    "PUSH "
                    + ", ".join(f"{r}={v:#x}" for r, v in zip(bundle.push, pushed, strict=True))
                )
            record.events.append(
                f"FWD {steering.action}" + (f", {steer_value}" if value is not None else "")
            )
            if next_pc is not None:
                record.events.append(f"NEXT_PC {new_ptr if new_ptr is not None else 'none'}")
            if bundle.hdr_mod:
                record.events.append("HDR_MOD: code options removed")
        return _Epilog(stack, steering.action, steer_value, new_ptr, code)

    @staticmethod
    def pointer_of(header: SwitchVMHeader | None, pipeline: str) -> PC | None:
        if header is None:
            return None
        return header.egress_ptr if pipeline == "egress" else header.dpf_ptr

    # -- leaving the egress ----------------------------------------------------------------------
    def leave(self, effects: _Epilog, frame: bytes, port: int) -> EgressRun:
        """The egress epilog's outcome: the port is chosen, so only pass and drop remain."""
        executed = tuple(self.executed)
        action = effects.action
        if action not in ("pass", "drop"):
            raise Fault(
                f"steering action {action} in an egress DPF: the output port is already chosen "
                "(an egress DPF may pass or drop)"
            )
        header = self.header
        assert header is not None  # an egress DPF is named by a header's egress pointer
        new_header = SwitchVMHeader(
            app_id=header.app_id,
            dpf_ptr=_kept(header.dpf_ptr, effects.code),
            egress_ptr=effects.pointer,
            gas=header.gas,  # only recirculation spends gas, and the egress cannot
            stack=tuple(effects.stack),
            code=effects.code,
            flags=header.flags,
        )
        out = self.deparse(new_header, frame)
        if action == "drop":
            self.stats.dropped += 1
            return EgressRun(
                port,
                self.pipe.index,
                self.tenant,
                "drop",
                "the egress DPF dropped the packet",
                None,
                executed,
            )
        return EgressRun(
            port, self.pipe.index, self.tenant, "pass", f"left by port {port}", out, executed
        )

    def deparse(self, header: SwitchVMHeader, frame: bytes) -> bytes:
        """``frame`` with ``header``'s options; a Fault when they cannot be encoded."""
        try:
            options = _encode_options(header, self.profile).data
            return rebuild_frame(frame, self.parsed, options)
        except EncodingError as exc:
            raise Fault(f"the outgoing SwitchVM options cannot be encoded: {exc.message}") from None
        except DeparseError as exc:
            raise Fault(str(exc)) from None

    # -- steering (§3.5) -----------------------------------------------------------------------
    def steer(
        self,
        action: str,
        value: int,
        stack: list[int],
        new_ptr: PC | None,
        code: CodeImage,
        frame: bytes,
    ) -> PassResult:
        stats, entry, tenant = self.stats, self.entry, self.tenant
        executed = tuple(self.executed)
        gas = self.header.gas if self.header is not None else self.profile.default_gas
        if (action == "set_port" and not entry.privileged) or (
            action == "recirculate" and not entry.recirculate
        ):
            stats.refused += 1
            detail = f"steering action {action} needs a permission tenant {tenant} does not have"
            self.pipe.report(tenant, "refused", detail)
            return _unauthorized(self.pipe, frame, self.parsed, entry, stats, detail, executed)
        if action == "recirculate":
            if gas == 0:
                stats.gas_exhausted += 1
                stats.dropped += 1
                detail = "recirculation with no gas left"
                self.pipe.report(tenant, "gas", detail)
                return PassResult(tenant, "drop", detail, executed=executed)
            gas -= 1
        changed = self.header is not None or stack or new_ptr is not None or action == "recirculate"
        egress_ptr = None
        if changed:
            egress_ptr = _kept(self.header.egress_ptr if self.header else None, code)
            new_header = SwitchVMHeader(
                app_id=self.header.app_id if self.header is not None else entry.app_id,
                dpf_ptr=new_ptr,
                egress_ptr=egress_ptr,
                gas=gas,
                stack=tuple(stack),
                code=code,
                flags=self.header.flags if self.header is not None else 0,
            )
            out = self.deparse(new_header, frame)
        else:
            out = frame
        result = self.deliver(action, value, out, gas, frame, executed)
        if result.egress_ptr is None:  # a refusal that passes `frame` has set its own
            result.egress_ptr = egress_ptr
        return result

    def deliver(
        self,
        action: str,
        value: int,
        out: bytes,
        gas: int,
        frame: bytes,
        executed: tuple[tuple[int, PC], ...],
    ) -> PassResult:
        """Send ``out`` (the deparsed frame) as the steering ``action`` says."""
        stats, tenant = self.stats, self.tenant
        if action == "drop":
            stats.dropped += 1
            return PassResult(tenant, "drop", "the DPF dropped the packet", executed=executed)
        if action == "recirculate":
            stats.recirculated += 1
            return PassResult(
                tenant,
                "recirculate",
                f"recirculated (gas left {gas})",
                recirculated=out,
                executed=executed,
            )
        if action == "return_to_sender":
            stats.returned += 1
            return PassResult(
                tenant,
                "return_to_sender",
                "returned to the sender",
                outputs=[(self.ctx.ingress_port, swap_addresses(out))],
                executed=executed,
            )
        if action == "set_port":
            if value >= self.ctx.ports:
                stats.dropped += 1
                return PassResult(
                    tenant, "drop", f"set_port {value}: no such port", executed=executed
                )
            stats.forwarded += 1
            return PassResult(
                tenant,
                "set_port",
                f"sent out of port {value}",
                outputs=[(value, out)],
                executed=executed,
            )
        if action == "forward":
            destination = self.pipe.forwarding.get(tenant, {}).get(value)
            if destination is None:
                return self.no_entry(f"forward to virtual destination {value}", frame, executed)
            sent = self.send(destination, out)
            if sent is None:
                stats.dropped += 1
                return PassResult(tenant, "drop", f"forward {value}: no route", executed=executed)
            stats.forwarded += 1
            return PassResult(
                tenant,
                "forward",
                f"forwarded to virtual destination {value}",
                outputs=[sent],
                executed=executed,
            )
        if action == "multicast":
            group = self.pipe.multicast.get(tenant, {}).get(value)
            if group is None:
                return self.no_entry(f"multicast to group {value}", frame, executed)
            copies = [c for c in (self.send(d, out) for d in group) if c is not None]
            stats.multicast += 1
            return PassResult(
                tenant,
                "multicast",
                f"multicast to group {value} ({len(copies)} copies)",
                outputs=copies,
                executed=executed,
            )
        stats.passed += 1  # pass: continue along the route
        routed = _route_plain(self.pipe, out, "passed", tenant)
        routed.executed = executed
        if routed.verdict == "drop":
            stats.passed -= 1
            stats.dropped += 1
        return routed

    def no_entry(self, what: str, frame: bytes, executed: tuple[tuple[int, PC], ...]) -> PassResult:
        self.stats.refused += 1
        detail = f"{what}: tenant {self.tenant} has no such steering entry"
        self.pipe.report(self.tenant, "refused", detail)
        return _unauthorized(
            self.pipe, frame, self.parsed, self.entry, self.stats, detail, executed
        )

    def send(self, destination: Destination, frame: bytes) -> tuple[int, bytes] | None:
        out = rebuild_frame(
            frame, None, None, ip_dst=destination.ip_dst, eth_dst=destination.eth_dst
        )
        port = destination.port
        if port is None:
            address = destination.ip_dst
            assert address is not None
            port = self.pipe.routes.get(address, self.pipe.default_port)
            if port is None:
                return None
        return port, out
