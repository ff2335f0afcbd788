"""A lane memory's allocation and translation: first-fit words and per-tenant mappings.

Every (EU, lane) of a pipeline of a pipe owns ``memory_words_per_lane`` physical 32-bit
words and two translation tables keyed by tenant id (paper §3.6.1, §5):

* **direct** mappings: exact ``(tenant, virtual address) -> physical word``, at most
  ``direct_entries_per_lane`` per lane (only lane 0 with ``direct_mapping_lanes = first``);
* **segment** mappings: a TCAM entry ``(tenant, value, mask) -> offset`` for an aligned,
  power-of-two virtual range, ``physical = virtual + offset``; at most ``segments_per_lane``
  per lane. A *null segment* (the KVS idiom, "a null segment mapping maps all misses to a
  single invalid tuple") maps a whole aligned range to one physical word and matches with
  the lowest priority.

A direct mapping takes priority over a segment ("giving priority to the direct mapping",
§5). Contract: :class:`LaneMap` is what a switch's control plane records of one lane — which
words are free (:class:`FirstFitAllocator`), and each tenant's mappings, with
:meth:`LaneMap.translate` as the data plane translates. The words themselves are the data
plane's (the simulator's ``LaneMemory`` adds them; a P4 switch holds them in a register).
This module holds no policy about who may call it: :mod:`dpfc.switch.ledger` validates
every request first.
"""

from __future__ import annotations

from dataclasses import dataclass

WORD_SPACE = 1 << 32


@dataclass(frozen=True)
class Segment:
    """A segment mapping: virtual ``[vbase, vbase + size)`` -> physical ``pbase`` onwards.

    ``null`` segments fold the whole range onto the single physical word ``pbase``.
    """

    tenant: int
    vbase: int
    size: int
    pbase: int
    null: bool = False

    @property
    def mask(self) -> int:
        """The TCAM mask: the bits that must equal ``vbase`` for a match."""
        return ~(self.size - 1) & (WORD_SPACE - 1)

    @property
    def offset(self) -> int:
        """The TCAM action value: physical = virtual + offset (not used by null segments)."""
        return self.pbase - self.vbase

    @property
    def words(self) -> int:
        """Physical words the segment occupies."""
        return 1 if self.null else self.size

    def translate(self, vaddr: int) -> int:
        return self.pbase if self.null else vaddr + self.offset


class FirstFitAllocator:
    """First-fit allocation of word ranges in ``[0, capacity)`` ("a simple first-fit
    allocation policy", §3.8). Free ranges are kept sorted and merged on free."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.free_ranges: list[tuple[int, int]] = [(0, capacity)] if capacity else []
        self.used = 0

    def find(self, size: int) -> int | None:
        """Where ``allocate(size)`` would put the range, without allocating it."""
        for start, length in self.free_ranges:
            if length >= size:
                return start
        return None

    def allocate(self, size: int) -> int | None:
        for position, (start, length) in enumerate(self.free_ranges):
            if length >= size:
                if length == size:
                    del self.free_ranges[position]
                else:
                    self.free_ranges[position] = (start + size, length - size)
                self.used += size
                return start
        return None

    def free(self, start: int, size: int) -> None:
        ranges = self.free_ranges
        low, high = 0, len(ranges)
        while low < high:  # insertion point by start
            mid = (low + high) // 2
            if ranges[mid][0] < start:
                low = mid + 1
            else:
                high = mid
        ranges.insert(low, (start, size))
        # merge with the right, then with the left neighbour
        if low + 1 < len(ranges) and ranges[low][0] + ranges[low][1] == ranges[low + 1][0]:
            ranges[low] = (ranges[low][0], ranges[low][1] + ranges[low + 1][1])
            del ranges[low + 1]
        if low > 0 and ranges[low - 1][0] + ranges[low - 1][1] == ranges[low][0]:
            ranges[low - 1] = (ranges[low - 1][0], ranges[low - 1][1] + ranges[low][1])
            del ranges[low]
        self.used -= size


class TenantSegments:
    """One tenant's segments on one lane, indexed for a fast longest-mask-first lookup."""

    def __init__(self) -> None:
        self.by_size: dict[int, dict[int, Segment]] = {}
        self.null: Segment | None = None

    def all(self) -> list[Segment]:
        out = [s for table in self.by_size.values() for s in table.values()]
        if self.null is not None:
            out.append(self.null)
        return out

    def __len__(self) -> int:
        return sum(len(t) for t in self.by_size.values()) + (self.null is not None)

    def lookup(self, vaddr: int) -> Segment | None:
        # Segments of one tenant never overlap, so at most one size class matches;
        # smaller sizes are tried first (the TCAM's longest-prefix priority).
        for size in sorted(self.by_size):
            segment = self.by_size[size].get(vaddr & ~(size - 1))
            if segment is not None:
                return segment
        null = self.null
        if null is not None and (vaddr & null.mask) == null.vbase:
            return null
        return None

    def overlapping(self, vbase: int, size: int) -> Segment | None:
        for segment in self.all():
            if segment.null:
                continue
            if vbase < segment.vbase + segment.size and segment.vbase < vbase + size:
                return segment
        return None


class LaneMap:
    """The allocation and translation tables of one lane memory (module docstring)."""

    def __init__(self, words: int, direct_capacity: int, segment_capacity: int) -> None:
        self.allocator = FirstFitAllocator(words)
        self.direct: dict[tuple[int, int], int] = {}
        self.direct_by_tenant: dict[int, set[int]] = {}
        self.direct_capacity = direct_capacity
        self.segments: dict[int, TenantSegments] = {}
        self.segment_count = 0
        self.segment_capacity = segment_capacity

    # -- translation (the data path) -------------------------------------------------------
    def translate(self, tenant: int, vaddr: int) -> int | None:
        """Physical word of ``vaddr`` for ``tenant``, or None when it is not mapped."""
        physical = self.direct.get((tenant, vaddr))
        if physical is not None:
            return physical
        table = self.segments.get(tenant)
        if table is None:
            return None
        segment = table.lookup(vaddr)
        return None if segment is None else segment.translate(vaddr)

    # -- allocation (the ledger validates before calling) ---------------------------------
    def take(self, size: int) -> int:
        """Allocate ``size`` words (first fit); the caller checked that they are free."""
        start = self.allocator.allocate(size)
        assert start is not None, "caller checks free space first"
        return start

    def release(self, start: int, size: int) -> None:
        self.allocator.free(start, size)

    def add_segment(self, segment: Segment) -> None:
        table = self.segments.setdefault(segment.tenant, TenantSegments())
        if segment.null:
            table.null = segment
        else:
            table.by_size.setdefault(segment.size, {})[segment.vbase] = segment
        self.segment_count += 1

    def remove_segment(self, segment: Segment) -> None:
        table = self.segments[segment.tenant]
        if segment.null:
            table.null = None
        else:
            by_base = table.by_size[segment.size]
            del by_base[segment.vbase]
            if not by_base:
                del table.by_size[segment.size]
        if not len(table):
            del self.segments[segment.tenant]
        self.segment_count -= 1
        self.release(segment.pbase, segment.words)

    def add_direct(self, tenant: int, vaddr: int) -> int:
        physical = self.take(1)
        self.direct[(tenant, vaddr)] = physical
        self.direct_by_tenant.setdefault(tenant, set()).add(vaddr)
        return physical

    def remove_direct(self, tenant: int, vaddr: int) -> None:
        physical = self.direct.pop((tenant, vaddr))
        mine = self.direct_by_tenant[tenant]
        mine.discard(vaddr)
        if not mine:
            del self.direct_by_tenant[tenant]
        self.release(physical, 1)

    def tenant_directs(self, tenant: int) -> list[int]:
        return sorted(self.direct_by_tenant.get(tenant, ()))

    def is_empty(self) -> bool:
        return not self.direct and not self.segments and self.allocator.used == 0


__all__ = ["WORD_SPACE", "FirstFitAllocator", "LaneMap", "Segment", "TenantSegments"]
