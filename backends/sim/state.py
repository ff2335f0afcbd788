"""The state of one pipe: the operator's tables, code memory, lane memories and counters.

Everything here is what the switch's match-action tables and register arrays hold in
hardware. Tenants never write it; the operator changes the tables through
:class:`dpfc.backends.sim.control.ControlPlane` (whose :class:`~dpfc.switch.RequestLedger`
validates and records every request in them: a :class:`PipeState` is the switch's
:class:`~dpfc.switch.PipeTables`), and the data path (:mod:`dpfc.backends.sim.execute`)
reads them and updates memory words, counters and reports only.

A pipe has an ingress and an egress pipeline (docs/isa.md §6 item 20). Their tables —
permissions, code memory (one (stage, slot) space that a P4 target holds in both), constants,
forwarding, multicast, routes — are one set here; their lane memories are two sets
(``lanes`` and ``egress_lanes``), because a P4 register belongs to one control.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from dpfc.switch import PipeTables, TenantStats, lane_grid
from dpfc.target import TargetProfile

from .memory import LaneMemory

__all__ = ["PipeState", "Report"]


@dataclass(frozen=True)
class Report:
    """An event reported to the control plane: a violation or a refused packet."""

    tenant: int
    kind: str  # e.g. "unmapped", "unauthorized", "refused", "fault", "gas", "malformed"
    detail: str
    packet: int  # the pipe-local sequence number of the packet


REPORTS_KEPT = 10_000


@dataclass
class PipeState(PipeTables[LaneMemory]):
    """The tables of one pipe (its lane memories with their words) and what its data path
    counts and reports."""

    stats: dict[int, TenantStats] = field(default_factory=dict)
    reports: deque[Report] = field(default_factory=lambda: deque(maxlen=REPORTS_KEPT))
    packets_seen: int = 0

    @classmethod
    def empty(cls, profile: TargetProfile, index: int) -> PipeState:
        """Pipe ``index`` with empty tables and zeroed lane memories."""
        return cls(profile, index, lane_grid(profile, LaneMemory), lane_grid(profile, LaneMemory))

    def stats_for(self, tenant: int) -> TenantStats:
        stats = self.stats.get(tenant)
        if stats is None:
            stats = self.stats[tenant] = TenantStats()
        return stats

    def report(self, tenant: int, kind: str, detail: str) -> None:
        self.reports.append(Report(tenant, kind, detail, self.packets_seen))
