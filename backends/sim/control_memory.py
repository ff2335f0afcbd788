"""The control plane's lane memory: segments, direct mappings, words and constants.

:class:`MemoryControl` is a mixin of :class:`~.control.ControlPlane`. It maps a tenant's
virtual addresses of one (EU, lane) of the ingress or egress pipeline onto physical words
(aligned power-of-two segments allocated first fit, null segments, direct entries), unmaps
them, reads and writes words through the tenant's translation, and sets the tenant's
LOAD_CONST table. Each call checks every argument, and the room in every targeted pipe's
tables and memory, before it changes anything.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from .control_common import WORD_MASK, ControlPlaneBase, ControlPlaneError, _egress, _where
from .memory import WORD_SPACE, LaneMemory, Segment
from .state import PipeState


class MemoryControl(ControlPlaneBase):
    """The lane-memory calls of :class:`~.control.ControlPlane`."""

    def map_segment(
        self,
        tenant: int,
        eu: int,
        lane: int,
        vaddr: int,
        size: int,
        *,
        pipes: int | Iterable[int] | None = None,
        pipeline: str = "ingress",
    ) -> list[Segment]:
        """Allocate ``size`` words (first fit) and map the aligned virtual range
        ``[vaddr, vaddr + size)`` of (tenant, EU, lane) onto them. Returns one segment per pipe."""
        targets = self._targets(pipes)
        self._authorized(tenant, targets)
        self._lane(eu, lane)
        self._pipeline(pipeline)
        self._address(vaddr)
        self._segment_shape(vaddr, size)
        for pipe in targets:
            memory = pipe.memories(pipeline)[eu][lane]
            self._segment_room(memory, pipe, eu, lane, size, pipeline)
            table = memory.segments.get(tenant)
            clash = table.overlapping(vaddr, size) if table else None
            if clash is not None:
                raise ControlPlaneError(
                    "DPF4006",
                    f"segment {vaddr:#x}+{size} overlaps tenant {tenant}'s segment "
                    f"{clash.vbase:#x}+{clash.size} on EU{eu} lane {lane}{_egress(pipeline)}",
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
        pipes: int | Iterable[int] | None = None,
        pipeline: str = "ingress",
    ) -> list[Segment]:
        """Map the aligned range onto a single zeroed word, at the lowest priority: every
        address of the range without a direct or ordinary segment mapping reads that word
        (the KVS "null segment mapping maps all misses to a single invalid tuple")."""
        targets = self._targets(pipes)
        self._authorized(tenant, targets)
        self._lane(eu, lane)
        self._pipeline(pipeline)
        self._address(vaddr)
        self._segment_shape(vaddr, size)
        for pipe in targets:
            memory = pipe.memories(pipeline)[eu][lane]
            self._segment_room(memory, pipe, eu, lane, 1, pipeline)
            table = memory.segments.get(tenant)
            if table is not None and table.null is not None:
                raise ControlPlaneError(
                    "DPF4006",
                    f"tenant {tenant} already has a null segment on EU{eu} lane {lane}"
                    f"{_egress(pipeline)}",
                )
        out = []
        for pipe in targets:
            memory = pipe.memories(pipeline)[eu][lane]
            segment = Segment(tenant, vaddr, size, memory.take(1), null=True)
            memory.add_segment(segment)
            out.append(segment)
        return out

    @staticmethod
    def _segment_shape(vaddr: int, size: int) -> None:
        if not isinstance(size, int) or size <= 0 or size & (size - 1) or size > WORD_SPACE:
            raise ControlPlaneError(
                "DPF4005", f"segment size {size!r} is not a power of two between 1 and 2^32"
            )
        if vaddr % size:
            raise ControlPlaneError(
                "DPF4005",
                f"virtual address {vaddr:#x} is not aligned to the segment size {size} "
                "(the TCAM matches value/mask)",
            )

    def _segment_room(
        self, memory: LaneMemory, pipe: PipeState, eu: int, lane: int, words: int, pipeline: str
    ) -> None:
        where = _where(eu, lane, pipe, pipeline)
        if memory.segment_count >= memory.segment_capacity:
            raise ControlPlaneError(
                "DPF4008",
                f"the segment table of {where} is full ({memory.segment_capacity} entries)",
            )
        if memory.allocator.find(words) is None:
            raise ControlPlaneError(
                "DPF4007",
                f"no {words} contiguous free words on {where} "
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
        pipes: int | Iterable[int] | None = None,
        pipeline: str = "ingress",
    ) -> list[int]:
        """Allocate one word, initialise it to ``value`` and map virtual ``vaddr`` of
        (tenant, EU, lane) to it exactly. Returns the physical word per pipe."""
        targets = self._targets(pipes)
        self._authorized(tenant, targets)
        self._lane(eu, lane)
        self._pipeline(pipeline)
        self._address(vaddr)
        self._word(value)
        for pipe in targets:
            memory = pipe.memories(pipeline)[eu][lane]
            where = _where(eu, lane, pipe, pipeline)
            if memory.direct_capacity == 0:
                raise ControlPlaneError(
                    "DPF4009",
                    f"{where} has no direct-mapping table ({self.profile.name}: direct mappings "
                    "on the first lane of each EU only)",
                )
            if (tenant, vaddr) in memory.direct:
                raise ControlPlaneError(
                    "DPF4010", f"tenant {tenant} already maps {vaddr:#x} directly on {where}"
                )
            if len(memory.direct) >= memory.direct_capacity:
                raise ControlPlaneError(
                    "DPF4009",
                    f"the direct table of {where} is full ({memory.direct_capacity} entries)",
                )
            if memory.allocator.find(1) is None:
                raise ControlPlaneError("DPF4007", f"no free word on {where}")
        out = []
        for pipe in targets:
            memory = pipe.memories(pipeline)[eu][lane]
            physical = memory.add_direct(tenant, vaddr)
            memory.words[physical] = value
            out.append(physical)
        return out

    def map_direct_range(
        self,
        tenant: int,
        eu: int,
        lane: int,
        vaddr: int,
        count: int,
        *,
        pipes: int | Iterable[int] | None = None,
        pipeline: str = "ingress",
    ) -> None:
        """Map virtual ``vaddr .. vaddr+count-1`` of (tenant, EU, lane) directly, one zeroed
        word each (a direct map's indices, mapped when it is installed)."""
        targets = self._targets(pipes)
        self._authorized(tenant, targets)
        self._lane(eu, lane)
        self._pipeline(pipeline)
        self._address(vaddr)
        if not isinstance(count, int) or count < 1:
            raise ControlPlaneError("DPF4015", f"count {count!r} must be a positive int")
        self._address(vaddr + count - 1)
        for pipe in targets:
            memory = pipe.memories(pipeline)[eu][lane]
            where = _where(eu, lane, pipe, pipeline)
            if len(memory.direct) + count > memory.direct_capacity:
                raise ControlPlaneError(
                    "DPF4009",
                    f"the direct table of {where} has room for "
                    f"{memory.direct_capacity - len(memory.direct)} entries, not {count}",
                )
            if memory.allocator.capacity - memory.allocator.used < count:
                raise ControlPlaneError("DPF4007", f"no {count} free words on {where}")
            mine = memory.direct_by_tenant.get(tenant, set())
            clash = next((v for v in mine if vaddr <= v < vaddr + count), None)
            if clash is not None:
                raise ControlPlaneError(
                    "DPF4010", f"tenant {tenant} already maps {clash:#x} directly on {where}"
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
        pipes: int | Iterable[int] | None = None,
        pipeline: str = "ingress",
    ) -> None:
        targets = self._targets(pipes)
        self._authorized(tenant, targets)
        self._lane(eu, lane)
        self._pipeline(pipeline)
        for pipe in targets:
            if (tenant, vaddr) not in pipe.memories(pipeline)[eu][lane].direct:
                raise ControlPlaneError(
                    "DPF4011",
                    f"tenant {tenant} has no direct mapping of {vaddr!r} on "
                    f"{_where(eu, lane, pipe, pipeline)}",
                )
        for pipe in targets:
            pipe.memories(pipeline)[eu][lane].remove_direct(tenant, vaddr)

    def unmap_segment(
        self,
        tenant: int,
        eu: int,
        lane: int,
        vaddr: int,
        *,
        pipes: int | Iterable[int] | None = None,
        pipeline: str = "ingress",
    ) -> None:
        """Remove the segment (ordinary or null) whose virtual base is ``vaddr``."""
        targets = self._targets(pipes)
        self._authorized(tenant, targets)
        self._lane(eu, lane)
        self._pipeline(pipeline)
        found = []
        for pipe in targets:
            table = pipe.memories(pipeline)[eu][lane].segments.get(tenant)
            segment = next((s for s in table.all() if s.vbase == vaddr), None) if table else None
            if segment is None:
                raise ControlPlaneError(
                    "DPF4011",
                    f"tenant {tenant} has no segment at {vaddr!r} on "
                    f"{_where(eu, lane, pipe, pipeline)}",
                )
            found.append(segment)
        for pipe, segment in zip(targets, found, strict=True):
            pipe.memories(pipeline)[eu][lane].remove_segment(segment)

    @staticmethod
    def _word(value: int) -> None:
        if not isinstance(value, int) or not 0 <= value <= WORD_MASK:
            raise ControlPlaneError("DPF4015", f"value {value!r} is not a 32-bit word")

    def _physical(
        self, pipe: PipeState, tenant: int, eu: int, lane: int, vaddr: int, pipeline: str
    ) -> int:
        physical = pipe.memories(pipeline)[eu][lane].translate(tenant, vaddr)
        if physical is None:
            raise ControlPlaneError(
                "DPF4011",
                f"virtual address {vaddr:#x} of tenant {tenant} is not mapped on "
                f"{_where(eu, lane, pipe, pipeline)}",
            )
        return physical

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
        state = self._targets(pipe)[0]
        self._authorized(tenant, [state])
        self._lane(eu, lane)
        self._pipeline(pipeline)
        if not isinstance(count, int) or count < 0:
            raise ControlPlaneError("DPF4015", f"count {count!r} must be a non-negative int")
        self._address(vaddr)
        self._address(vaddr + max(count - 1, 0))
        words = state.memories(pipeline)[eu][lane].words
        return [
            words[self._physical(state, tenant, eu, lane, vaddr + i, pipeline)]
            for i in range(count)
        ]

    def write_memory(
        self,
        tenant: int,
        eu: int,
        lane: int,
        vaddr: int,
        values: Sequence[int],
        *,
        pipes: int | Iterable[int] | None = None,
        pipeline: str = "ingress",
    ) -> None:
        """Write ``values`` at virtual ``vaddr`` onwards (e.g. a KVS value the server sends)."""
        targets = self._targets(pipes)
        self._authorized(tenant, targets)
        self._lane(eu, lane)
        self._pipeline(pipeline)
        self._address(vaddr)
        self._address(vaddr + max(len(values) - 1, 0))
        for value in values:
            self._word(value)
        plan = [
            [
                self._physical(pipe, tenant, eu, lane, vaddr + i, pipeline)
                for i in range(len(values))
            ]
            for pipe in targets
        ]
        for pipe, physicals in zip(targets, plan, strict=True):
            words = pipe.memories(pipeline)[eu][lane].words
            for physical, value in zip(physicals, values, strict=True):
                words[physical] = value

    def set_constant(
        self, tenant: int, index: int, value: int, *, pipes: int | Iterable[int] | None = None
    ) -> None:
        """Entry ``index`` of the tenant's LOAD_CONST table."""
        targets = self._targets(pipes)
        self._authorized(tenant, targets)
        entries = self.profile.const_table_entries
        if not isinstance(index, int) or not 0 <= index < entries:
            raise ControlPlaneError(
                "DPF4015", f"constant index {index!r} is not in 0..{entries - 1}"
            )
        self._word(value)
        for pipe in targets:
            pipe.constants.setdefault(tenant, [0] * entries)[index] = value
