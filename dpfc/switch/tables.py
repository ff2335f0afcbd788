"""The tables of one pipe, as a switch's control plane records them.

Contract: :class:`PipeTables` holds what the operator's requests change — permission
entries, code memory (one (stage, slot) space that a P4 target holds in both pipelines),
the ingress's and the egress's lane memories (:class:`~dpfc.switch.lanes.LaneMap` each: a
P4 register belongs to one control), LOAD_CONST tables, forwarding entries, multicast
groups, routes and the default port. :mod:`dpfc.switch.ledger` validates every request
against them and records it in them; nothing else changes them. The simulator's pipe state
*is* such tables (with counters and reports added), read by its data path; a P4 back end
keeps them beside the switch it writes, to validate and to translate addresses as its data
plane does.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from typing import Generic, TypeVar

from dpfc.isa import PC, StageBundle
from dpfc.target import TargetProfile

from .control import Destination
from .lanes import LaneMap

LaneT = TypeVar("LaneT", bound=LaneMap)


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


def lane_grid(profile: TargetProfile, make: Callable[[int, int, int], LaneT]) -> list[list[LaneT]]:
    """One pipeline's lane memories ([eu][lane]) of ``profile``, made by ``make(words,
    direct entries, segments)``."""
    p = profile
    return [
        [
            make(
                p.memory_words_per_lane,
                p.direct_entries_per_lane if p.lane_has_direct_mapping(lane) else 0,
                p.segments_per_lane,
            )
            for lane in range(p.lanes)
        ]
        for _ in range(p.num_eus)
    ]


@dataclass
class PipeTables(Generic[LaneT]):
    """The tables of pipe ``index`` (module docstring); ``LaneT`` is the back end's lane
    memory (a :class:`~dpfc.switch.lanes.LaneMap`, with words in the simulator)."""

    profile: TargetProfile
    index: int
    lanes: list[list[LaneT]]  # [eu][lane], ingress
    egress_lanes: list[list[LaneT]]  # [eu][lane], egress
    permissions: dict[int, Permissions] = field(default_factory=dict)
    code: dict[int, dict[int, CodeEntry]] = field(default_factory=dict)  # stage -> slot -> entry
    constants: dict[int, list[int]] = field(default_factory=dict)
    forwarding: dict[int, dict[int, Destination]] = field(default_factory=dict)
    multicast: dict[int, dict[int, tuple[Destination, ...]]] = field(default_factory=dict)
    routes: dict[bytes, int] = field(default_factory=dict)  # outer IPv4 destination -> port
    default_port: int | None = None  # where packets without a route go (None: dropped)

    def memories(self, pipeline: str) -> list[list[LaneT]]:
        """The lane memories ([eu][lane]) of ``pipeline`` (``ingress`` or ``egress``)."""
        return self.egress_lanes if pipeline == "egress" else self.lanes

    def all_lanes(self) -> list[LaneT]:
        """Every lane memory of both pipelines."""
        return [m for lanes in (self.lanes, self.egress_lanes) for eu in lanes for m in eu]

    def forwarding_entries_used(self) -> int:
        return sum(len(t) for t in self.forwarding.values()) + sum(
            len(group) for groups in self.multicast.values() for group in groups.values()
        )


__all__ = [
    "CodeEntry",
    "LaneT",
    "Permissions",
    "PipeTables",
    "UnauthorizedAction",
    "lane_grid",
]
