"""The state of one pipe: the operator's tables, code memory, lane memories and counters.

Everything here is what the switch's match-action tables and register arrays hold in
hardware. Tenants never write it; the operator changes it through
:class:`dpfc.backends.sim.control.ControlPlane`, and the data path
(:mod:`dpfc.backends.sim.execute`) reads it and updates memory words and counters only.

A pipe has an ingress and an egress pipeline (docs/isa.md §6 item 20). Their tables —
permissions, code memory (one (stage, slot) space that a P4 target holds in both), constants,
forwarding, multicast, routes — are one set here; their lane memories are two sets
(``lanes`` and ``egress_lanes``), because a P4 register belongs to one control.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from enum import Enum

from dpfc.isa.bundle import PC, StageBundle
from dpfc.target.driver import Destination
from dpfc.target.profile import TargetProfile

from .memory import LaneMemory

__all__ = [
    "CodeEntry",
    "Destination",
    "Permissions",
    "PipeState",
    "Report",
    "TenantStats",
    "UnauthorizedAction",
]


class UnauthorizedAction(Enum):
    """What the switch does with a packet that may not run its DPF (paper §3.3)."""

    DROP = "drop"
    PASS = "pass"


@dataclass(frozen=True)
class Permissions:
    """A permission-table entry (paper §3.3), keyed by the tenant id (the Geneve VNI).

    The bit vector: ``metadata`` gates LOAD_MD, ``privileged`` gates set_port,
    ``recirculate`` gates recirculate (docs/isa.md §6 item 12).
    """

    app_id: int = 0
    default_dpf: PC | None = None  # an in-switch prolog slot, run on packets without a DPF
    unauthorized: UnauthorizedAction = UnauthorizedAction.DROP
    metadata: bool = False
    privileged: bool = False
    recirculate: bool = False
    # Further accepted tokens: one per DPF authorization ("She specifies a special app_id
    # token when asking for the DPF authorization", §3.3), e.g. the KVS caching pipe runs
    # both cache-get's and cache-update's token while the sketch pipe holds only the first.
    app_ids: frozenset[int] = frozenset()

    def accepts(self, app_id: int) -> bool:
        return app_id == self.app_id or app_id in self.app_ids

    @property
    def bits(self) -> int:
        return int(self.metadata) | int(self.privileged) << 1 | int(self.recirculate) << 2


@dataclass(frozen=True)
class CodeEntry:
    """One code-memory slot: the bundle and the tenants allowed to run it (None = all)."""

    bundle: StageBundle
    owners: frozenset[int] | None = None


@dataclass
class TenantStats:
    """Per-tenant counters the control plane reads back (§3.9: violations are reported)."""

    packets: int = 0
    executed: int = 0
    unauthorized: int = 0
    refused: int = 0  # gated metadata or steering without the permission bit, unknown entry
    unmapped: int = 0  # memory accesses with no translation
    stack_underflow: int = 0
    faults: int = 0  # missing or foreign code, stack overflow, options overflow
    gas_exhausted: int = 0
    recirculated: int = 0
    dropped: int = 0
    forwarded: int = 0
    returned: int = 0
    multicast: int = 0
    passed: int = 0
    egress: int = 0  # egress DPF executions (one per frame leaving with an egress pointer)


@dataclass(frozen=True)
class Report:
    """An event reported to the control plane: a violation or a refused packet."""

    tenant: int
    kind: str  # e.g. "unmapped", "unauthorized", "refused", "fault", "gas", "malformed"
    detail: str
    packet: int  # the pipe-local sequence number of the packet


REPORTS_KEPT = 10_000


@dataclass
class PipeState:
    profile: TargetProfile
    index: int
    permissions: dict[int, Permissions] = field(default_factory=dict)
    code: dict[int, dict[int, CodeEntry]] = field(default_factory=dict)  # stage -> slot -> entry
    lanes: list[list[LaneMemory]] = field(default_factory=list)  # [eu][lane], ingress
    egress_lanes: list[list[LaneMemory]] = field(default_factory=list)  # [eu][lane], egress
    constants: dict[int, list[int]] = field(default_factory=dict)
    forwarding: dict[int, dict[int, Destination]] = field(default_factory=dict)
    multicast: dict[int, dict[int, tuple[Destination, ...]]] = field(default_factory=dict)
    routes: dict[bytes, int] = field(default_factory=dict)  # outer IPv4 destination -> port
    default_port: int | None = None  # where packets without a route go (None: dropped)
    stats: dict[int, TenantStats] = field(default_factory=dict)
    reports: deque[Report] = field(default_factory=lambda: deque(maxlen=REPORTS_KEPT))
    packets_seen: int = 0

    def __post_init__(self) -> None:
        if not self.lanes:
            self.lanes = self._new_lanes()
        if not self.egress_lanes:
            self.egress_lanes = self._new_lanes()

    def _new_lanes(self) -> list[list[LaneMemory]]:
        p = self.profile
        return [
            [
                LaneMemory(
                    p.memory_words_per_lane,
                    p.direct_entries_per_lane if p.lane_has_direct_mapping(lane) else 0,
                    p.segments_per_lane,
                )
                for lane in range(p.lanes)
            ]
            for _ in range(p.num_eus)
        ]

    def memories(self, pipeline: str) -> list[list[LaneMemory]]:
        """The lane memories ([eu][lane]) of ``pipeline`` (``ingress`` or ``egress``)."""
        return self.egress_lanes if pipeline == "egress" else self.lanes

    def all_lanes(self) -> list[LaneMemory]:
        """Every lane memory of both pipelines."""
        return [m for lanes in (self.lanes, self.egress_lanes) for eu in lanes for m in eu]

    def stats_for(self, tenant: int) -> TenantStats:
        stats = self.stats.get(tenant)
        if stats is None:
            stats = self.stats[tenant] = TenantStats()
        return stats

    def report(self, tenant: int, kind: str, detail: str) -> None:
        self.reports.append(Report(tenant, kind, detail, self.packets_seen))

    def forwarding_entries_used(self) -> int:
        return sum(len(t) for t in self.forwarding.values()) + sum(
            len(group) for groups in self.multicast.values() for group in groups.values()
        )
