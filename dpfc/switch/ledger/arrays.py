"""The ledger's arrays: an image's memory requests, mapped and unmapped whole.

:class:`ArrayLedger` is a part of :class:`~.requests.RequestLedger`: the control
protocol's ``map_memory`` / ``unmap_memory`` (docs/bundle.md's memory requests) over the
:class:`~.memory.MemoryLedger`. A ``direct`` array of n words maps indices 0..n-1 exactly,
one word each; a ``segment`` array maps [0, n) with the aligned power-of-two segments of
n's binary form, largest first (:func:`segment_pieces`), each allocated first fit. Both
are all or nothing: a refused piece unmaps the pieces mapped before it, and an unmap checks
every mapping before it removes one. Each returns what it mapped or freed on the first
pipe it names (:class:`~.changes.LaneMappings`).
"""

from __future__ import annotations

from typing import Generic

from dpfc.catalog import codes
from dpfc.switch.control import SwitchRefused
from dpfc.switch.tables import LaneT

from .changes import LaneMappings
from .checks import Pipes
from .memory import MemoryLedger


def segment_pieces(size: int) -> list[tuple[int, int]]:
    """(vaddr, size) power-of-two segments that cover [0, size) exactly, each aligned."""
    out = []
    base = 0
    for bit in reversed(range(size.bit_length())):
        if size >> bit & 1:
            out.append((base, 1 << bit))
            base += 1 << bit
    return out


class ArrayLedger(Generic[LaneT]):
    """The array requests of :class:`~.requests.RequestLedger` (module docstring)."""

    def __init__(self, memory: MemoryLedger[LaneT]) -> None:
        self.memory = memory

    def map_array(
        self,
        tenant: int,
        eu: int,
        lane: int,
        mapping: str,
        size: int,
        *,
        pipes: Pipes,
        pipeline: str = "ingress",
    ) -> LaneMappings:
        """Allocate and map an array of ``size`` words of (tenant, EU, lane), zeroed."""
        memory = self.memory
        if mapping == "direct":
            memory.map_direct_range(tenant, eu, lane, 0, size, pipes=pipes, pipeline=pipeline)
            first = memory.checks.targets(pipes)[0].memories(pipeline)[eu][lane]
            directs = tuple((v, first.direct[(tenant, v)]) for v in range(size))
            return LaneMappings(pipeline, eu, lane, directs=directs)
        if mapping != "segment":
            raise SwitchRefused(codes.SWITCH_BAD_ADDRESS, f"unknown mapping {mapping!r}")
        done: list[int] = []
        segments = []
        try:
            for vaddr, length in segment_pieces(size):
                placed = memory.map_segment(
                    tenant, eu, lane, vaddr, length, pipes=pipes, pipeline=pipeline
                )
                done.append(vaddr)
                segments.append(placed[0])
        except SwitchRefused:
            for vaddr in done:  # all or nothing
                memory.unmap_segment(tenant, eu, lane, vaddr, pipes=pipes, pipeline=pipeline)
            raise
        return LaneMappings(pipeline, eu, lane, segments=tuple(segments))

    def unmap_array(
        self,
        tenant: int,
        eu: int,
        lane: int,
        mapping: str,
        size: int,
        *,
        pipes: Pipes,
        pipeline: str = "ingress",
    ) -> LaneMappings:
        """Unmap an array :meth:`map_array` mapped (``mapping`` other than ``direct``: its
        segments), freeing its words."""
        memory = self.memory
        targets = memory.lane_targets(tenant, eu, lane, pipeline, pipes)
        if mapping == "direct":
            found = [
                [memory.direct_mapped(pipe, tenant, eu, lane, v, pipeline) for pipe in targets]
                for v in range(size)
            ]
            for vaddr in range(size):
                for pipe in targets:
                    pipe.memories(pipeline)[eu][lane].remove_direct(tenant, vaddr)
            directs = tuple((v, physical[0]) for v, physical in enumerate(found))
            return LaneMappings(pipeline, eu, lane, directs=directs)
        pieces = [
            [memory.segment_at(pipe, tenant, eu, lane, vaddr, pipeline) for pipe in targets]
            for vaddr, _ in segment_pieces(size)
        ]
        for per_pipe in pieces:
            for pipe, segment in zip(targets, per_pipe, strict=True):
                pipe.memories(pipeline)[eu][lane].remove_segment(segment)
        return LaneMappings(pipeline, eu, lane, segments=tuple(p[0] for p in pieces))


__all__ = ["ArrayLedger", "segment_pieces"]
