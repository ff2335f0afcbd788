"""What a pass produces, and the outcomes decided before or besides a DPF's steering.

:class:`Context` is what the pipe knows of a packet besides its bytes; :class:`PassResult`
(ingress) and :class:`EgressRun` (egress) are what one pass did with it, and :class:`Fault`
is how a DPF that cannot continue ends (the caller turns it into a drop). The functions
here decide the outcomes every part of the data path shares: the tenant's unauthorized
action (``unauthorized_outcome``, ``egress_unauthorized``), ordinary L3 routing
(``route_plain``) and which pointer survives HDR_MOD (``kept_pointer``). They change only the
tenant's counters; none of them raises.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from dpfc.isa import PC, CodeImage
from dpfc.packet import ParsedPacket
from dpfc.switch import Permissions, TenantStats, UnauthorizedAction

from .deparse import plain_ipv4_destination
from .state import PipeState
from .trace import PacketTrace


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


def egress_unauthorized(
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


def unauthorized_outcome(
    pipe: PipeState,
    frame: bytes,
    parsed: ParsedPacket,
    entry: Permissions,
    stats: TenantStats,
    detail: str,
    executed: tuple[tuple[int, PC], ...] = (),
) -> PassResult:
    if entry.unauthorized is UnauthorizedAction.PASS:
        result = route_plain(pipe, frame, f"{detail}: passed on unchanged", parsed.tenant_id)
        result.executed = executed
        result.egress_ptr = parsed.header.egress_ptr if parsed.header is not None else None
        count_route(stats, result)
        return result
    stats.dropped += 1
    return PassResult(parsed.tenant_id, "drop", f"{detail}: dropped", executed=executed)


def count_route(stats: TenantStats, result: PassResult) -> None:
    """Count a routed packet as passed, or as dropped when no route took it."""
    if result.verdict == "drop":
        stats.dropped += 1
    else:
        stats.passed += 1


def route_plain(
    pipe: PipeState, frame: bytes, reason: str, tenant: int | None = None
) -> PassResult:
    destination = plain_ipv4_destination(frame)
    if destination is None:
        return PassResult(tenant, "drop", f"{reason}; not IPv4, no route")
    port = pipe.routes.get(destination, pipe.default_port)
    if port is None:
        return PassResult(tenant, "drop", f"{reason}; no route to {_ip(destination)}")
    return PassResult(tenant, "pass", reason, outputs=[(port, frame)])


def kept_pointer(pointer: PC | None, code: CodeImage) -> PC | None:
    """The other pipeline's pointer after this DPF: none when it named in-packet code the
    DPF removed (HDR_MOD, R10), else unchanged."""
    if pointer is not None and pointer.in_packet and pointer.index >= len(code.prologs):
        return None
    return pointer


def _ip(address: bytes) -> str:
    return ".".join(str(b) for b in address)


@dataclass(frozen=True)
class EpilogDecision:
    """What an epilog decided: the outgoing stack, the steering action and its value, the
    new pointer of the machine's pipeline (DPF pointer or egress pointer) and the code the
    packet keeps."""

    stack: list[int]
    action: str
    value: int
    pointer: PC | None
    code: CodeImage
