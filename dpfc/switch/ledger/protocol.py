"""The control protocol on a request ledger: one implementation for every back end.

Contract: :class:`LedgerControl` implements :class:`~dpfc.switch.control.SwitchControl`.
Each call is one request to its :class:`~.requests.RequestLedger`, which validates it —
raising :class:`~dpfc.switch.control.SwitchRefused` with nothing changed — and records
it; then the accepted change goes to the back end's :class:`~.changes.DataPlane`. A
permission entry needs an app id (the first is the primary token); a default DPF is a
prolog slot of the switch; memory follows the image's arrays (:mod:`.arrays`). The
simulator, bmv2 and the BF-RT script writer are this class with their own data plane, so
they accept and refuse exactly the same requests.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Generic

from dpfc.catalog import codes
from dpfc.isa import PC
from dpfc.switch.control import Destination, Grant, SwitchRefused
from dpfc.switch.tables import LaneT
from dpfc.target import TargetProfile

from .changes import (
    CodeCleared,
    CodeWritten,
    DataPlane,
    ForwardingSet,
    Granted,
    MemoryMapped,
    MemoryUnmapped,
    MulticastSet,
    Revoked,
    WordsWritten,
)
from .requests import RequestLedger

PIPELINES = ("ingress", "egress")


class LedgerControl(Generic[LaneT]):
    """A switch's :class:`~dpfc.switch.control.SwitchControl`: requests validated and
    recorded by ``ledger``, carried out by ``data_plane`` (module docstring)."""

    def __init__(self, ledger: RequestLedger[LaneT], data_plane: DataPlane) -> None:
        self.ledger = ledger
        self.data_plane = data_plane

    @property
    def profile(self) -> TargetProfile:
        return self.ledger.profile

    @property
    def pipe_count(self) -> int:
        return len(self.ledger.pipes)

    @property
    def pipelines(self) -> tuple[str, ...]:
        return PIPELINES

    def write_code(self, stage: int, slot: int, word: bytes, pipes: Sequence[int]) -> None:
        self.ledger.code.install_code(stage, slot, word, pipes=list(pipes))
        self.data_plane.apply(CodeWritten(stage, slot, word))

    def clear_code(self, stage: int, slot: int, pipes: Sequence[int]) -> None:
        self.ledger.code.remove_code(stage, slot, pipes=list(pipes))
        self.data_plane.apply(CodeCleared(stage, slot))

    def grant(self, tenant: int, grant: Grant, pipes: Sequence[int]) -> None:
        if not grant.app_ids:
            raise SwitchRefused(codes.SWITCH_BAD_APP_ID, "a permission entry needs an app id")
        default = None if grant.default_dpf is None else PC(False, grant.default_dpf)
        entry = self.ledger.tenants.authorize(
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
        self.data_plane.apply(Granted(tenant, grant, entry))

    def revoke(self, tenant: int, pipes: Sequence[int]) -> None:
        freed = self.ledger.tenants.deauthorize(tenant, pipes=list(pipes))
        self.data_plane.apply(Revoked(tenant, tuple(next(iter(freed.values())))))

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
        arrays = self.ledger.arrays
        mapped = arrays.map_array(
            tenant, eu, lane, mapping, size, pipes=list(pipes), pipeline=pipeline
        )
        self.data_plane.apply(MemoryMapped(tenant, mapped))

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
        arrays = self.ledger.arrays
        freed = arrays.unmap_array(
            tenant, eu, lane, mapping, size, pipes=list(pipes), pipeline=pipeline
        )
        self.data_plane.apply(MemoryUnmapped(tenant, freed))

    def set_forwarding(
        self, tenant: int, index: int, destination: Destination, pipes: Sequence[int]
    ) -> None:
        self.ledger.steering.set_forwarding(tenant, index, destination, pipes=list(pipes))
        self.data_plane.apply(ForwardingSet(tenant, index, destination))

    def set_multicast(
        self, tenant: int, group: int, destinations: Sequence[Destination], pipes: Sequence[int]
    ) -> None:
        members = tuple(destinations)
        self.ledger.steering.set_multicast_group(tenant, group, members, pipes=list(pipes))
        self.data_plane.apply(MulticastSet(tenant, group, members))

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
        memory = self.ledger.memory
        state, physical = memory.words_to_read(
            tenant, eu, lane, vaddr, count, pipe=pipe, pipeline=pipeline
        )
        return self.data_plane.read_words(state.index, pipeline, eu, lane, physical)

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
        plan = self.ledger.memory.words_to_write(
            tenant, eu, lane, vaddr, list(values), pipes=list(pipes), pipeline=pipeline
        )
        physical = tuple((pipe.index, tuple(words)) for pipe, words in plan)
        self.data_plane.apply(WordsWritten(pipeline, eu, lane, physical, tuple(values)))


__all__ = ["LedgerControl"]
