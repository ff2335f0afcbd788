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

This module is the entry of both pipelines: parsing, the permission table and the
choice of the DPF. The :class:`~.machine.Machine` runs the DPF (:mod:`.stages`: prolog,
EUs, epilog; :mod:`.steering`: steering, delivery and leaving the egress); the results
and the shared outcomes are in :mod:`.outcome`.
"""

from __future__ import annotations

from dpfc.catalog import codes
from dpfc.encoding import DecodeError
from dpfc.isa import PC
from dpfc.packet import ParsedPacket, parse_packet
from dpfc.switch import RandomSource

from .deparse import codec_for
from .machine import Machine
from .outcome import (
    Context,
    EgressRun,
    Fault,
    PassResult,
    count_route,
    egress_unauthorized,
    route_plain,
    unauthorized_outcome,
)
from .state import PipeState
from .trace import PacketTrace

__all__ = ["Context", "EgressRun", "Fault", "PassResult", "run_egress", "run_pass"]

# Outer headers that make a frame ordinary traffic rather than a malformed SwitchVM packet.
NOT_SWITCHVM = {
    codes.PACKET_NOT_IPV4: "not IPv4",
    codes.PACKET_NOT_UDP: "not UDP",
    codes.PACKET_NOT_GENEVE_PORT: "not Geneve",
}


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
        # decoding is a pure function of the option bytes; a switch sees the same often
        parsed = parse_packet(frame, profile, decode=codec_for(profile).decode)
    except DecodeError as exc:
        if exc.code in NOT_SWITCHVM:
            return route_plain(pipe, frame, f"{NOT_SWITCHVM[exc.code]}: routed as ordinary traffic")
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
            return route_plain(pipe, frame, f"tenant {tenant} has no permission entry and no DPF")
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
        return unauthorized_outcome(pipe, frame, parsed, entry, stats, detail)
    pointer = header.dpf_ptr if header is not None else None
    if pointer is None:
        pointer = entry.default_dpf
        if pointer is None:
            result = route_plain(
                pipe, frame, "no DPF pointer and no default DPF: passed unchanged", tenant
            )
            result.egress_ptr = header.egress_ptr if header is not None else None
            count_route(stats, result)
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
        parsed = parse_packet(frame, pipe.profile, decode=codec_for(pipe.profile).decode)
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
        return egress_unauthorized(pipe.index, port, frame, tenant, entry, stats, detail)
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
