"""The stage-structured program's control plane: the switch-control protocol as its entries.

Contract: :class:`StagedControl` is the control protocol (:class:`~dpfc.switch.SwitchControl`)
on the tables of the program :func:`~.program.generate` writes for the same profile. It is
a :class:`~dpfc.switch.LedgerControl`: the :class:`~dpfc.switch.RequestLedger` the
simulator uses validates every request (the simulator's codes and messages) and records
it; :class:`~.plane.StagedDataPlane` turns each accepted change into :class:`~.entries.Entry`
values (:mod:`.entries`) written through a :class:`StagedWriter`:

* a tenant gets a 10-bit slot (the lowest free) and one ``permissions`` entry per app id
  (on v1model also its default DPF and whether unauthorized packets pass: :mod:`.grants`);
* code written to a stage's slot: the prolog's, an EU's or the epilog's entries; an EU
  entry whose taken PC (the last EU's, or a HALT's) or not-taken PC (the last EU's) names
  an installed epilog slot carries that epilog's successor hint (:func:`.entries.hint`),
  and an epilog written or cleared later re-writes the EU entries that lead to it;
* memory: direct and segment entries (a segment must be a power of two of at most 65,536
  words, aligned to its size virtually and physically), with the pipeline in the key on a
  program with an egress pass (:mod:`.egress`), the words in the lane registers (the
  egress pipeline's own there; none on TNA);
* forwarding, multicast groups (replication without per-copy rewrites), routes and the
  default port (the ``routes`` table's default action), and the fixed entries at reset.

What the program cannot run is refused before anything changes, with
:data:`~dpfc.catalog.codes.SWITCH_STAGED_UNSUPPORTED` and the reason: on TNA a default
DPF, ``unauthorized = "pass"`` (:mod:`.grants`) and egress memory; a bundle :mod:`.entries` refuses
(:class:`~.entries.EntryError`), a segment of another shape, a multicast copy that
rewrites addresses, a destination without a port or route.
"""

from __future__ import annotations

from collections.abc import Sequence

from dpfc.switch import (
    Destination,
    Grant,
    LaneMap,
    LedgerControl,
    MemoryMapped,
    PipeTables,
    RequestLedger,
    SwitchRefused,
    lane_grid,
)
from dpfc.target import TargetProfile

from .entries import EntryError
from .plane import PORT_IDS, TENANT_SLOTS, StagedDataPlane, forwarding_entry, refuse
from .writer import StagedWriter


class StagedControl(LedgerControl[LaneMap]):
    """The control protocol on the stage-structured program of one switch (one pipe)."""

    def __init__(self, writer: StagedWriter, profile: TargetProfile) -> None:
        tables = PipeTables(profile, 0, lane_grid(profile, LaneMap), lane_grid(profile, LaneMap))
        entries = min(profile.permission_entries, TENANT_SLOTS)
        ledger = RequestLedger([tables], PORT_IDS, permission_entries=entries)
        self.writer = writer
        self.plane = StagedDataPlane(writer, profile, tables)
        super().__init__(ledger, self.plane)

    @property
    def pipelines(self) -> tuple[str, ...]:
        # without an egress pass (TNA) a deployment refuses egress DPFs (DPF4022)
        return ("ingress", "egress") if self.plane.plan.egress_pass else ("ingress",)

    def start(self) -> None:
        """Write the fixed entries (on an emptied switch)."""
        self.plane.start()

    def set_constant(self, tenant: int, index: int, value: int) -> None:
        """Entry ``index`` of the tenant's LOAD_CONST table (validated by the ledger as the
        simulator's; refused when the profile has none)."""
        self.ledger.memory.set_constant(tenant, index, value)
        self.plane.set_constant(tenant, index, value)

    def configure(self, *, switch_id: int, ports: int) -> None:
        """The switch's identifier and ports (:meth:`StagedDataPlane.configure`): before
        code is written, so that in-switch LOAD_MD switch_id loads it."""
        self.plane.configure(switch_id, ports)

    def write_code(self, stage: int, slot: int, word: bytes, pipes: Sequence[int]) -> None:
        self.ledger.code.stage_slot(stage, slot)
        bundle = self.ledger.code.decode(stage, slot, word)
        try:
            self.plane.entries_for(stage, slot, bundle)  # refused before anything changes
        except EntryError as error:
            raise refuse(str(error)) from None
        super().write_code(stage, slot, word, pipes)

    def grant(self, tenant: int, grant: Grant, pipes: Sequence[int]) -> None:
        if grant.default_dpf is not None and not self.plane.plan.grants:
            raise refuse("a default DPF is not on it (a packet without a DPF runs none)")
        if grant.unauthorized != "drop" and not self.plane.plan.grants:
            raise refuse('unauthorized packets are dropped (`unauthorized = "pass"` is not on it)')
        super().grant(tenant, grant, pipes)

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
        if pipeline not in self.pipelines:
            raise refuse("it has no egress pipeline (its lane registers are the ingress's)")
        arrays, at = self.ledger.arrays, list(pipes)
        mapped = arrays.map_array(tenant, eu, lane, mapping, size, pipes=at, pipeline=pipeline)
        try:
            self.plane.apply(MemoryMapped(tenant, mapped))
        except (EntryError, SwitchRefused) as error:
            arrays.unmap_array(tenant, eu, lane, mapping, size, pipes=at, pipeline=pipeline)
            if isinstance(error, SwitchRefused):
                raise
            raise refuse(str(error)) from None

    def set_forwarding(
        self, tenant: int, index: int, destination: Destination, pipes: Sequence[int]
    ) -> None:
        self.plane.port(destination)  # refused before the ledger records it
        super().set_forwarding(tenant, index, destination, pipes)

    def set_multicast(
        self, tenant: int, group: int, destinations: Sequence[Destination], pipes: Sequence[int]
    ) -> None:
        for destination in destinations:
            if destination.eth_dst is not None or destination.ip_dst is not None:
                raise refuse("a multicast copy that rewrites addresses is not on it")
        super().set_multicast(tenant, group, destinations, pipes)

    # -- operator settings ---------------------------------------------------------------------
    def set_route(self, ip_dst: bytes, port: int) -> None:
        self.ledger.steering.set_route(ip_dst, port)
        self.plane.route(ip_dst, port)

    def set_default_port(self, port: int | None) -> None:
        self.ledger.steering.set_default_port(port)
        self.plane.default_route()


__all__ = ["PORT_IDS", "StagedControl", "StagedDataPlane", "forwarding_entry", "refuse"]
