"""The simulator as a :class:`~dpfc.target.driver.SwitchDriver`: what ``dpfc.deploy`` calls
to install an image on a simulated switch.

Each method is one :class:`~dpfc.backends.sim.control.ControlPlane` call (or, for memory,
the calls of one mapping), so it validates first and changes nothing when it fails
(``ControlPlaneError`` is a ``DriverError``). Mappings follow the image's memory requests
(docs/bundle.md): a ``direct`` array of n words maps indices 0..n-1 exactly, one word
each; a ``segment`` array maps [0, n) with the aligned power-of-two segments of n's
binary form, largest first. Memory calls name a ``pipeline`` (ingress by default): each
pipe's egress lane memories are other state than its ingress ones; code words, permission
entries and steering serve both pipelines (the simulator keeps one copy of those tables).
"""

from __future__ import annotations

from collections.abc import Sequence

from dpfc.isa.bundle import PC
from dpfc.target.driver import Destination, Grant
from dpfc.target.profile import TargetProfile

from .control import ControlPlane, ControlPlaneError


def pieces(size: int) -> list[tuple[int, int]]:
    """(vaddr, size) power-of-two segments that cover [0, size) exactly, each aligned."""
    out = []
    base = 0
    for bit in reversed(range(size.bit_length())):
        if size >> bit & 1:
            out.append((base, 1 << bit))
            base += 1 << bit
    return out


class SimDriver:
    """Drives one simulated switch through its :class:`ControlPlane`
    (``SimDriver(switch.control)``)."""

    def __init__(self, control: ControlPlane) -> None:
        self.control = control

    @property
    def profile(self) -> TargetProfile:
        return self.control.profile

    @property
    def pipe_count(self) -> int:
        return len(self.control.pipes)

    def write_code(self, stage: int, slot: int, word: bytes, pipes: Sequence[int]) -> None:
        self.control.install_code(stage, slot, word, pipes=list(pipes))

    def clear_code(self, stage: int, slot: int, pipes: Sequence[int]) -> None:
        self.control.remove_code(stage, slot, pipes=list(pipes))

    def grant(self, tenant: int, grant: Grant, pipes: Sequence[int]) -> None:
        if not grant.app_ids:
            raise ControlPlaneError("DPF4018", "a permission entry needs an app id")
        default = None if grant.default_dpf is None else PC(False, grant.default_dpf)
        self.control.authorize(
            tenant,
            app_id=grant.app_ids[0],
            app_ids=grant.app_ids[1:],
            default_dpf=default,
            unauthorized=grant.unauthorized,
            metadata=grant.metadata,
            privileged=grant.privileged,
            recirculate=grant.recirculate,
            pipes=list(pipes),
        )

    def revoke(self, tenant: int, pipes: Sequence[int]) -> None:
        self.control.deauthorize(tenant, pipes=list(pipes))

    def map_memory(
        self,
        tenant: int,
        eu: int,
        lane: int,
        mapping: str,
        size: int,
        pipes: Sequence[int],
        *,
        pipeline: str = "ingress",
    ) -> None:
        control = self.control
        if mapping == "direct":
            control.map_direct_range(
                tenant, eu, lane, 0, size, pipes=list(pipes), pipeline=pipeline
            )
            return
        if mapping != "segment":
            raise ControlPlaneError("DPF4005", f"unknown mapping {mapping!r}")
        done: list[int] = []
        try:
            for vaddr, length in pieces(size):
                control.map_segment(
                    tenant, eu, lane, vaddr, length, pipes=list(pipes), pipeline=pipeline
                )
                done.append(vaddr)
        except ControlPlaneError:
            for vaddr in done:  # all or nothing
                control.unmap_segment(tenant, eu, lane, vaddr, pipes=list(pipes), pipeline=pipeline)
            raise

    def unmap_memory(
        self,
        tenant: int,
        eu: int,
        lane: int,
        mapping: str,
        size: int,
        pipes: Sequence[int],
        *,
        pipeline: str = "ingress",
    ) -> None:
        control = self.control
        if mapping == "direct":
            for vaddr in range(size):
                control.unmap_direct(tenant, eu, lane, vaddr, pipes=list(pipes), pipeline=pipeline)
            return
        for vaddr, _length in pieces(size):
            control.unmap_segment(tenant, eu, lane, vaddr, pipes=list(pipes), pipeline=pipeline)

    def set_forwarding(
        self, tenant: int, index: int, destination: Destination, pipes: Sequence[int]
    ) -> None:
        self.control.set_forwarding(tenant, index, destination, pipes=list(pipes))

    def set_multicast(
        self, tenant: int, group: int, destinations: Sequence[Destination], pipes: Sequence[int]
    ) -> None:
        self.control.set_multicast_group(tenant, group, list(destinations), pipes=list(pipes))

    def read_memory(
        self,
        tenant: int,
        eu: int,
        lane: int,
        vaddr: int,
        count: int,
        pipe: int,
        *,
        pipeline: str = "ingress",
    ) -> list[int]:
        return self.control.read_memory(
            tenant, eu, lane, vaddr, count, pipe=pipe, pipeline=pipeline
        )

    def write_memory(
        self,
        tenant: int,
        eu: int,
        lane: int,
        vaddr: int,
        values: Sequence[int],
        pipes: Sequence[int],
        *,
        pipeline: str = "ingress",
    ) -> None:
        self.control.write_memory(
            tenant, eu, lane, vaddr, list(values), pipes=list(pipes), pipeline=pipeline
        )


__all__ = ["SimDriver", "pieces"]
