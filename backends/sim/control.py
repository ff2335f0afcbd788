"""The operator's control-plane API of a simulated switch.

Every method validates all of its arguments against every pipe it targets *before* it
changes anything, and raises :class:`~dpfc.switch.SwitchRefused` (a code and a message)
otherwise, so a failed call leaves the switch exactly as it was. ``pipes=None`` targets
every pipe of the switch (the usual, symmetric configuration); an int or a list of ints
targets some pipes.

Each call is one atomic table update with respect to packets: the simulator processes a
packet between calls, never during one. Installing a DPF in place is therefore atomic when
the prolog slot is written last (:mod:`dpfc.deploy` orders the writes so).

Code arrives as code-memory words (bytes), decoded by :func:`dpfc.encoding.decode_slot`,
which checks every ISA rule of the stage: the simulator runs what a P4 target would be
given, never a Python bundle.

:class:`ControlPlane` owns the switch's :class:`~dpfc.switch.RequestLedger` — the one
place every rule of a request is stated, shared with the P4 back end — over its pipes'
states (each a :class:`~dpfc.switch.PipeTables`): each call is a request to one of its
parts (``tenants``, ``memory``, ``code``, ``steering``). What only the simulator has is
here: the lane words (a mapped word's first value, reads and writes), the counters, the
memory in use, and the table generation the JIT compiles against.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, fields, replace
from typing import Any

from dpfc.isa import PC
from dpfc.switch import (
    WORD_SPACE,
    CodeEntry,
    Destination,
    Permissions,
    Pipes,
    RequestLedger,
    Segment,
    TenantStats,
    UnauthorizedAction,
)

from .memory import LaneMemory
from .state import PipeState

__all__ = ["ControlPlane", "MemoryUsage"]


@dataclass(frozen=True)
class MemoryUsage:
    """Switch memory in use, summed over the pipes and lanes asked for."""

    words: int
    direct_entries: int
    segments: int
    permission_entries: int
    forwarding_entries: int
    code_slots: int

    def is_zero(self) -> bool:
        return all(getattr(self, f.name) == 0 for f in fields(self))


class ControlPlane:
    """Operator API of one switch (its pipes' states). Obtain it as ``switch.control``."""

    def __init__(self, pipes: Sequence[PipeState], ports: int) -> None:
        self.pipes = list(pipes)
        self.ports = ports
        self.ledger: RequestLedger[LaneMemory] = RequestLedger(self.pipes, ports)
        self.profile = self.ledger.profile
        # Bumped by every call that changes a table (TABLE_CHANGES, and the switch control
        # protocol's changes): what dpfc.backends.jit compiled from the tables is stale once
        # it moves.
        self.generation = 0

    def _states(self, pipes: Pipes) -> list[PipeState]:
        """The states of the pipes ``pipes`` names (DPF4016 for a pipe there is not)."""
        return [self.pipes[pipe.index] for pipe in self.ledger.checks.targets(pipes)]

    # -- tenants ---------------------------------------------------------------------------
    def authorize(
        self,
        tenant: int,
        *,
        app_id: int = 0,
        default_dpf: PC | None = None,
        unauthorized: UnauthorizedAction | str = UnauthorizedAction.DROP,
        metadata: bool = False,
        privileged: bool = False,
        recirculate: bool = False,
        app_ids: Iterable[int] = (),
        pipes: Pipes = None,
    ) -> Permissions:
        """Add (or replace) the permission-table entry of ``tenant``; ``app_ids`` are tokens
        accepted besides ``app_id``."""
        return self.ledger.tenants.authorize(
            tenant,
            app_id=app_id,
            default_dpf=default_dpf,
            unauthorized=unauthorized,
            metadata=metadata,
            privileged=privileged,
            recirculate=recirculate,
            app_ids=app_ids,
            pipes=pipes,
        )

    def update_permissions(self, tenant: int, *, pipes: Pipes = None, **changes: object) -> None:
        """Change some fields of an existing entry (app_id, default_dpf, unauthorized, ...)."""
        self.ledger.tenants.update_permissions(tenant, pipes=pipes, **changes)

    def set_app_token(self, tenant: int, app_id: int, *, pipes: Pipes = None) -> None:
        self.update_permissions(tenant, app_id=app_id, pipes=pipes)

    def set_default_dpf(self, tenant: int, default_dpf: PC | None, *, pipes: Pipes = None) -> None:
        self.update_permissions(tenant, default_dpf=default_dpf, pipes=pipes)

    def deauthorize(self, tenant: int, *, pipes: Pipes = None) -> None:
        """Remove the tenant's permission entry and everything it owns on the pipes: memory
        mappings (the words are freed), forwarding entries, multicast groups, constants and
        counters. Code memory is shared and stays; remove it with :meth:`remove_code`."""
        for index in self.ledger.tenants.deauthorize(tenant, pipes=pipes):
            self.pipes[index].stats.pop(tenant, None)

    def permissions(self, tenant: int, *, pipe: int = 0) -> Permissions | None:
        return self.ledger.tenants.permissions(tenant, pipe=pipe)

    # -- lane memory -------------------------------------------------------------------------
    def map_segment(
        self,
        tenant: int,
        eu: int,
        lane: int,
        vaddr: int,
        size: int,
        *,
        pipes: Pipes = None,
        pipeline: str = "ingress",
    ) -> list[Segment]:
        """Allocate ``size`` words (first fit) and map the aligned virtual range
        ``[vaddr, vaddr + size)`` of (tenant, EU, lane) onto them. Returns one segment per pipe."""
        memory = self.ledger.memory
        return memory.map_segment(tenant, eu, lane, vaddr, size, pipes=pipes, pipeline=pipeline)

    def map_null_segment(
        self,
        tenant: int,
        eu: int,
        lane: int,
        vaddr: int = 0,
        size: int = WORD_SPACE,
        *,
        pipes: Pipes = None,
        pipeline: str = "ingress",
    ) -> list[Segment]:
        """Map the aligned range onto a single zeroed word, at the lowest priority: every
        address of the range without a direct or ordinary segment mapping reads that word
        (the KVS "null segment mapping maps all misses to a single invalid tuple")."""
        memory = self.ledger.memory
        return memory.map_null_segment(
            tenant, eu, lane, vaddr, size, pipes=pipes, pipeline=pipeline
        )

    def map_direct(
        self,
        tenant: int,
        eu: int,
        lane: int,
        vaddr: int,
        *,
        value: int = 0,
        pipes: Pipes = None,
        pipeline: str = "ingress",
    ) -> list[int]:
        """Allocate one word, initialise it to ``value`` and map virtual ``vaddr`` of
        (tenant, EU, lane) to it exactly. Returns the physical word per pipe."""
        placed = self.ledger.memory.map_direct(
            tenant, eu, lane, vaddr, value=value, pipes=pipes, pipeline=pipeline
        )
        for pipe, physical in placed:
            pipe.memories(pipeline)[eu][lane].words[physical] = value
        return [physical for _, physical in placed]

    def map_direct_range(
        self,
        tenant: int,
        eu: int,
        lane: int,
        vaddr: int,
        count: int,
        *,
        pipes: Pipes = None,
        pipeline: str = "ingress",
    ) -> None:
        """Map virtual ``vaddr .. vaddr+count-1`` of (tenant, EU, lane) directly, one zeroed
        word each (a direct map's indices, mapped when it is installed)."""
        memory = self.ledger.memory
        memory.map_direct_range(tenant, eu, lane, vaddr, count, pipes=pipes, pipeline=pipeline)

    def unmap_direct(
        self,
        tenant: int,
        eu: int,
        lane: int,
        vaddr: int,
        *,
        pipes: Pipes = None,
        pipeline: str = "ingress",
    ) -> None:
        self.ledger.memory.unmap_direct(tenant, eu, lane, vaddr, pipes=pipes, pipeline=pipeline)

    def unmap_segment(
        self,
        tenant: int,
        eu: int,
        lane: int,
        vaddr: int,
        *,
        pipes: Pipes = None,
        pipeline: str = "ingress",
    ) -> None:
        """Remove the segment (ordinary or null) whose virtual base is ``vaddr``."""
        self.ledger.memory.unmap_segment(tenant, eu, lane, vaddr, pipes=pipes, pipeline=pipeline)

    def read_memory(
        self,
        tenant: int,
        eu: int,
        lane: int,
        vaddr: int,
        count: int = 1,
        *,
        pipe: int = 0,
        pipeline: str = "ingress",
    ) -> list[int]:
        """Words at virtual ``vaddr .. vaddr+count-1`` of (tenant, EU, lane), through the
        tenant's translation (every address must be mapped)."""
        state, physical = self.ledger.memory.words_to_read(
            tenant, eu, lane, vaddr, count, pipe=pipe, pipeline=pipeline
        )
        words = state.memories(pipeline)[eu][lane].words
        return [words[p] for p in physical]

    def write_memory(
        self,
        tenant: int,
        eu: int,
        lane: int,
        vaddr: int,
        values: Sequence[int],
        *,
        pipes: Pipes = None,
        pipeline: str = "ingress",
    ) -> None:
        """Write ``values`` at virtual ``vaddr`` onwards (e.g. a KVS value the server sends)."""
        plan = self.ledger.memory.words_to_write(
            tenant, eu, lane, vaddr, values, pipes=pipes, pipeline=pipeline
        )
        for pipe, physical in plan:
            words = pipe.memories(pipeline)[eu][lane].words
            for address, value in zip(physical, values, strict=True):
                words[address] = value

    def set_constant(self, tenant: int, index: int, value: int, *, pipes: Pipes = None) -> None:
        """Entry ``index`` of the tenant's LOAD_CONST table."""
        self.ledger.memory.set_constant(tenant, index, value, pipes=pipes)

    # -- code memory -------------------------------------------------------------------------
    def install_code(
        self,
        stage: int,
        slot: int,
        word: bytes,
        *,
        owners: Iterable[int] | None = None,
        pipes: Pipes = None,
    ) -> None:
        """Write one code-memory slot of ``stage`` (0 prolog, 1..n EUs, 31 epilog) with a
        code-memory word, replacing what was there. ``owners`` limits the slot to some
        tenants (None: any tenant may run it; code memory is shared, §3.6.2)."""
        self.ledger.code.install_code(stage, slot, word, owners=owners, pipes=pipes)

    def remove_code(self, stage: int, slot: int, *, pipes: Pipes = None) -> None:
        self.ledger.code.remove_code(stage, slot, pipes=pipes)

    def code_at(self, stage: int, slot: int, *, pipe: int = 0) -> CodeEntry | None:
        return self.ledger.code.code_at(stage, slot, pipe=pipe)

    # -- steering ----------------------------------------------------------------------------
    def set_forwarding(
        self, tenant: int, index: int, destination: Destination, *, pipes: Pipes = None
    ) -> None:
        """Virtual destination ``index`` of the tenant (what ``FWD forward, index`` names)."""
        self.ledger.steering.set_forwarding(tenant, index, destination, pipes=pipes)

    def remove_forwarding(self, tenant: int, index: int, *, pipes: Pipes = None) -> None:
        self.ledger.steering.remove_forwarding(tenant, index, pipes=pipes)

    def set_multicast_group(
        self,
        tenant: int,
        group: int,
        destinations: Sequence[Destination],
        *,
        pipes: Pipes = None,
    ) -> None:
        """Multicast group ``group`` of the tenant: one copy of the packet per destination."""
        self.ledger.steering.set_multicast_group(tenant, group, destinations, pipes=pipes)

    def set_route(self, ip_dst: bytes, port: int, *, pipes: Pipes = None) -> None:
        """The operator's L3 route: packets to outer IPv4 ``ip_dst`` leave through ``port``."""
        self.ledger.steering.set_route(ip_dst, port, pipes=pipes)

    def set_default_port(self, port: int | None, *, pipes: Pipes = None) -> None:
        self.ledger.steering.set_default_port(port, pipes=pipes)

    # -- read-back ---------------------------------------------------------------------------
    def stats(self, tenant: int, *, pipes: Pipes = None) -> TenantStats:
        """The tenant's counters summed over the pipes."""
        self.ledger.checks.tenant(tenant)
        total = TenantStats()
        for pipe in self._states(pipes):
            one = pipe.stats.get(tenant)
            if one is not None:
                total = replace(
                    total,
                    **{
                        f.name: getattr(total, f.name) + getattr(one, f.name) for f in fields(total)
                    },
                )
        return total

    def usage(self, *, pipes: Pipes = None) -> MemoryUsage:
        targets = self._states(pipes)
        lanes = [m for pipe in targets for m in pipe.all_lanes()]
        return MemoryUsage(
            words=sum(m.allocator.used for m in lanes),
            direct_entries=sum(len(m.direct) for m in lanes),
            segments=sum(m.segment_count for m in lanes),
            permission_entries=sum(len(p.permissions) for p in targets),
            forwarding_entries=sum(p.forwarding_entries_used() for p in targets),
            code_slots=sum(len(slots) for p in targets for slots in p.code.values()),
        )


# The calls that change a table the data path reads (permissions, translation, constants,
# code memory, steering tables, routes). write_memory is not one: it changes words in place,
# which compiled code reads where they are. tests/test_jit.py checks that every public
# method of ControlPlane is here or in READS.
TABLE_CHANGES = (
    "authorize",
    "update_permissions",
    "set_app_token",
    "set_default_dpf",
    "deauthorize",
    "map_segment",
    "map_null_segment",
    "map_direct",
    "map_direct_range",
    "unmap_direct",
    "unmap_segment",
    "set_constant",
    "install_code",
    "remove_code",
    "set_forwarding",
    "remove_forwarding",
    "set_multicast_group",
    "set_route",
    "set_default_port",
)
READS = ("stats", "usage", "permissions", "code_at", "read_memory", "write_memory")


def _changes_tables(method: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(method)
    def counted(self: ControlPlane, *args: Any, **kwargs: Any) -> Any:
        self.generation += 1
        return method(self, *args, **kwargs)

    return counted


for _name in TABLE_CHANGES:
    setattr(ControlPlane, _name, _changes_tables(getattr(ControlPlane, _name)))
