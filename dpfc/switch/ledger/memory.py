"""The ledger's lane memory: segments, direct mappings, translation and constants.

:class:`MemoryLedger` is a part of :class:`~.requests.RequestLedger`. It maps a tenant's
virtual addresses of one (EU, lane) of the ingress or egress pipeline onto physical words
(aligned power-of-two segments allocated first fit, null segments, direct entries), unmaps
them, translates the addresses a read or a write names (the words are the data plane's),
and sets the tenant's LOAD_CONST table. Each request checks every argument, and the room
in every targeted pipe's tables and memory, before it changes anything.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Generic

from dpfc.catalog import codes
from dpfc.switch.control import SwitchRefused
from dpfc.switch.lanes import WORD_SPACE, LaneMap, Segment
from dpfc.switch.tables import LaneT, PipeTables

from .checks import Pipes, RequestChecks, egress, where


class MemoryLedger(Generic[LaneT]):
    """The lane-memory requests of :class:`~.requests.RequestLedger`."""

    def __init__(self, checks: RequestChecks[LaneT]) -> None:
        self.checks = checks

    def lane_targets(
        self, tenant: int, eu: int, lane: int, pipeline: str, pipes: Pipes
    ) -> list[PipeTables[LaneT]]:
        """The pipes a request on (tenant, EU, lane) of ``pipeline`` names, after the checks
        every lane-memory request makes first."""
        targets = self.checks.targets(pipes)
        self.checks.authorized(tenant, targets)
        self.checks.lane(eu, lane)
        self.checks.pipeline(pipeline)
        return targets

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
        targets = self.lane_targets(tenant, eu, lane, pipeline, pipes)
        self.checks.address(vaddr)
        self.segment_shape(vaddr, size)
        for pipe in targets:
            memory = pipe.memories(pipeline)[eu][lane]
            self.segment_room(memory, pipe, eu, lane, size, pipeline)
            table = memory.segments.get(tenant)
            clash = table.overlapping(vaddr, size) if table else None
            if clash is not None:
                raise SwitchRefused(
                    codes.SWITCH_SEGMENT_OVERLAP,
                    f"segment {vaddr:#x}+{size} overlaps tenant {tenant}'s segment "
                    f"{clash.vbase:#x}+{clash.size} on EU{eu} lane {lane}{egress(pipeline)}",
                )
        out = []
        for pipe in targets:
            memory = pipe.memories(pipeline)[eu][lane]
            segment = Segment(tenant, vaddr, size, memory.take(size))
            memory.add_segment(segment)
            out.append(segment)
        return out

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
        targets = self.lane_targets(tenant, eu, lane, pipeline, pipes)
        self.checks.address(vaddr)
        self.segment_shape(vaddr, size)
        for pipe in targets:
            memory = pipe.memories(pipeline)[eu][lane]
            self.segment_room(memory, pipe, eu, lane, 1, pipeline)
            table = memory.segments.get(tenant)
            if table is not None and table.null is not None:
                raise SwitchRefused(
                    codes.SWITCH_SEGMENT_OVERLAP,
                    f"tenant {tenant} already has a null segment on EU{eu} lane {lane}"
                    f"{egress(pipeline)}",
                )
        out = []
        for pipe in targets:
            memory = pipe.memories(pipeline)[eu][lane]
            segment = Segment(tenant, vaddr, size, memory.take(1), null=True)
            memory.add_segment(segment)
            out.append(segment)
        return out

    @staticmethod
    def segment_shape(vaddr: int, size: int) -> None:
        if not isinstance(size, int) or size <= 0 or size & (size - 1) or size > WORD_SPACE:
            raise SwitchRefused(
                codes.SWITCH_BAD_ADDRESS,
                f"segment size {size!r} is not a power of two between 1 and 2^32",
            )
        if vaddr % size:
            raise SwitchRefused(
                codes.SWITCH_BAD_ADDRESS,
                f"virtual address {vaddr:#x} is not aligned to the segment size {size} "
                "(the TCAM matches value/mask)",
            )

    def segment_room(
        self,
        memory: LaneMap,
        pipe: PipeTables[LaneT],
        eu: int,
        lane: int,
        words: int,
        pipeline: str,
    ) -> None:
        at = where(eu, lane, pipe, pipeline)
        if memory.segment_count >= memory.segment_capacity:
            raise SwitchRefused(
                codes.SWITCH_SEGMENT_TABLE_FULL,
                f"the segment table of {at} is full ({memory.segment_capacity} entries)",
            )
        if memory.allocator.find(words) is None:
            raise SwitchRefused(
                codes.SWITCH_NO_ROOM,
                f"no {words} contiguous free words on {at} "
                f"({memory.allocator.capacity - memory.allocator.used} free in all)",
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
    ) -> list[tuple[PipeTables[LaneT], int]]:
        """Allocate one word and map virtual ``vaddr`` of (tenant, EU, lane) to it exactly;
        ``value`` is the word the data plane initialises it to. Returns (pipe, physical
        word) per pipe."""
        targets = self.lane_targets(tenant, eu, lane, pipeline, pipes)
        self.checks.address(vaddr)
        self.checks.word(value)
        for pipe in targets:
            memory = pipe.memories(pipeline)[eu][lane]
            at = where(eu, lane, pipe, pipeline)
            if memory.direct_capacity == 0:
                raise SwitchRefused(
                    codes.SWITCH_NO_DIRECT_ENTRY,
                    f"{at} has no direct-mapping table ({self.checks.profile.name}: direct mappings "
                    "on the first lane of each EU only)",
                )
            if (tenant, vaddr) in memory.direct:
                raise SwitchRefused(
                    codes.SWITCH_MAPPED_TWICE,
                    f"tenant {tenant} already maps {vaddr:#x} directly on {at}",
                )
            if len(memory.direct) >= memory.direct_capacity:
                raise SwitchRefused(
                    codes.SWITCH_NO_DIRECT_ENTRY,
                    f"the direct table of {at} is full ({memory.direct_capacity} entries)",
                )
            if memory.allocator.find(1) is None:
                raise SwitchRefused(codes.SWITCH_NO_ROOM, f"no free word on {at}")
        return [
            (pipe, pipe.memories(pipeline)[eu][lane].add_direct(tenant, vaddr)) for pipe in targets
        ]

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
        targets = self.lane_targets(tenant, eu, lane, pipeline, pipes)
        self.checks.address(vaddr)
        if not isinstance(count, int) or count < 1:
            raise SwitchRefused(codes.SWITCH_VALUE_RANGE, f"count {count!r} must be a positive int")
        self.checks.address(vaddr + count - 1)
        for pipe in targets:
            memory = pipe.memories(pipeline)[eu][lane]
            at = where(eu, lane, pipe, pipeline)
            if len(memory.direct) + count > memory.direct_capacity:
                raise SwitchRefused(
                    codes.SWITCH_NO_DIRECT_ENTRY,
                    f"the direct table of {at} has room for "
                    f"{memory.direct_capacity - len(memory.direct)} entries, not {count}",
                )
            if memory.allocator.capacity - memory.allocator.used < count:
                raise SwitchRefused(codes.SWITCH_NO_ROOM, f"no {count} free words on {at}")
            mine = memory.direct_by_tenant.get(tenant, set())
            clash = next((v for v in mine if vaddr <= v < vaddr + count), None)
            if clash is not None:
                raise SwitchRefused(
                    codes.SWITCH_MAPPED_TWICE,
                    f"tenant {tenant} already maps {clash:#x} directly on {at}",
                )
        for pipe in targets:
            memory = pipe.memories(pipeline)[eu][lane]
            for address in range(vaddr, vaddr + count):
                memory.add_direct(tenant, address)

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
        targets = self.lane_targets(tenant, eu, lane, pipeline, pipes)
        for pipe in targets:
            self.direct_mapped(pipe, tenant, eu, lane, vaddr, pipeline)
        for pipe in targets:
            pipe.memories(pipeline)[eu][lane].remove_direct(tenant, vaddr)

    @staticmethod
    def direct_mapped(
        pipe: PipeTables[LaneT], tenant: int, eu: int, lane: int, vaddr: int, pipeline: str
    ) -> int:
        """The physical word ``vaddr`` of the tenant is mapped to directly (DPF4011: none)."""
        physical = pipe.memories(pipeline)[eu][lane].direct.get((tenant, vaddr))
        if physical is None:
            raise SwitchRefused(
                codes.SWITCH_NO_SUCH_MAPPING,
                f"tenant {tenant} has no direct mapping of {vaddr!r} on "
                f"{where(eu, lane, pipe, pipeline)}",
            )
        return physical

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
        targets = self.lane_targets(tenant, eu, lane, pipeline, pipes)
        found = [self.segment_at(pipe, tenant, eu, lane, vaddr, pipeline) for pipe in targets]
        for pipe, segment in zip(targets, found, strict=True):
            pipe.memories(pipeline)[eu][lane].remove_segment(segment)

    @staticmethod
    def segment_at(
        pipe: PipeTables[LaneT], tenant: int, eu: int, lane: int, vaddr: int, pipeline: str
    ) -> Segment:
        """The tenant's segment (ordinary or null) based at ``vaddr`` (DPF4011: none)."""
        table = pipe.memories(pipeline)[eu][lane].segments.get(tenant)
        segment = next((s for s in table.all() if s.vbase == vaddr), None) if table else None
        if segment is None:
            raise SwitchRefused(
                codes.SWITCH_NO_SUCH_MAPPING,
                f"tenant {tenant} has no segment at {vaddr!r} on {where(eu, lane, pipe, pipeline)}",
            )
        return segment

    def physical(
        self, pipe: PipeTables[LaneT], tenant: int, eu: int, lane: int, vaddr: int, pipeline: str
    ) -> int:
        physical = pipe.memories(pipeline)[eu][lane].translate(tenant, vaddr)
        if physical is None:
            raise SwitchRefused(
                codes.SWITCH_NO_SUCH_MAPPING,
                f"virtual address {vaddr:#x} of tenant {tenant} is not mapped on "
                f"{where(eu, lane, pipe, pipeline)}",
            )
        return physical

    def words_to_read(
        self,
        tenant: int,
        eu: int,
        lane: int,
        vaddr: int,
        count: int = 1,
        *,
        pipe: int = 0,
        pipeline: str = "ingress",
    ) -> tuple[PipeTables[LaneT], list[int]]:
        """The pipe and the physical words of virtual ``vaddr .. vaddr+count-1`` of (tenant,
        EU, lane) on it, through the tenant's translation (every address must be mapped)."""
        state = self.checks.targets(pipe)[0]
        self.checks.authorized(tenant, [state])
        self.checks.lane(eu, lane)
        self.checks.pipeline(pipeline)
        if not isinstance(count, int) or count < 0:
            raise SwitchRefused(
                codes.SWITCH_VALUE_RANGE, f"count {count!r} must be a non-negative int"
            )
        self.checks.address(vaddr)
        self.checks.address(vaddr + max(count - 1, 0))
        return state, [
            self.physical(state, tenant, eu, lane, vaddr + i, pipeline) for i in range(count)
        ]

    def words_to_write(
        self,
        tenant: int,
        eu: int,
        lane: int,
        vaddr: int,
        values: Sequence[int],
        *,
        pipes: Pipes = None,
        pipeline: str = "ingress",
    ) -> list[tuple[PipeTables[LaneT], list[int]]]:
        """Where ``values`` go, written at virtual ``vaddr`` onwards (e.g. a KVS value the
        server sends): (pipe, physical words) per pipe."""
        targets = self.lane_targets(tenant, eu, lane, pipeline, pipes)
        self.checks.address(vaddr)
        self.checks.address(vaddr + max(len(values) - 1, 0))
        for value in values:
            self.checks.word(value)
        return [
            (
                pipe,
                [
                    self.physical(pipe, tenant, eu, lane, vaddr + i, pipeline)
                    for i in range(len(values))
                ],
            )
            for pipe in targets
        ]

    def set_constant(self, tenant: int, index: int, value: int, *, pipes: Pipes = None) -> None:
        """Entry ``index`` of the tenant's LOAD_CONST table."""
        targets = self.checks.targets(pipes)
        self.checks.authorized(tenant, targets)
        entries = self.checks.profile.const_table_entries
        if not isinstance(index, int) or not 0 <= index < entries:
            raise SwitchRefused(
                codes.SWITCH_VALUE_RANGE, f"constant index {index!r} is not in 0..{entries - 1}"
            )
        self.checks.word(value)
        for pipe in targets:
            pipe.constants.setdefault(tenant, [0] * entries)[index] = value


__all__ = ["MemoryLedger"]
