"""The SwitchVM program's control plane, whatever carries its entries to the switch.

Contract: :class:`EntryControl` is the control protocol (:class:`~dpfc.switch.SwitchControl`)
on the tables and registers of the program ``dpfc p4`` generates for the same profile (the
names of :mod:`.layout`, the same in every architecture). It is a
:class:`~dpfc.switch.LedgerControl`: its :class:`~dpfc.switch.RequestLedger` — the one the
simulator's control plane uses — validates every request (the simulator's codes and
messages) and records it in the switch's tables as the control plane keeps them (what the
data plane cannot tell it back: the tenants' entries, the lane memories' first-fit
allocation and mappings), so that ``read_memory`` translates virtual addresses the way the
data plane does. :class:`EntryDataPlane` turns each accepted change into primitive
operations on an :class:`~dpfc.backends.p4.writer.EntryWriter`, which a back end renders:
simple_switch_CLI commands (:mod:`.bmv2_control`) or a BF-RT Python script (:mod:`.bfrt`).
It keeps the handles of the entries it added and the tenants' slots (a tenant's row of the
constants and counter registers).

Operator settings the protocol leaves to a deployment (routes, the default port, the
switch id, constants) are methods too; the simulator's control plane has the same ones,
and the same ledger validates them.
"""

from __future__ import annotations

from collections.abc import Sequence

from dpfc.backends.p4.layout import INGRESS, MAX_TENANT_SLOTS, Layout
from dpfc.backends.p4.writer import EntryWriter, Match
from dpfc.encoding import slot_fields, slot_layout, stage_kind
from dpfc.switch import (
    EXECUTION_COUNTERS,
    PIPELINES,
    WORD_MASK,
    Change,
    CodeCleared,
    CodeWritten,
    Destination,
    ForwardingSet,
    Granted,
    LaneMap,
    LaneMappings,
    LedgerControl,
    MemoryMapped,
    MemoryUnmapped,
    MulticastSet,
    Permissions,
    PipeTables,
    RequestLedger,
    Revoked,
    UnauthorizedAction,
    WordsWritten,
    lane_grid,
)
from dpfc.target import TargetProfile

PORT_IDS = 1 << 9  # the program's ports are bit<9>, as v1model's and TNA's port ids


class EntryDataPlane:
    """The program's tables and registers, written through ``writer`` (module docstring);
    ``tables``: the ledger's records of the switch (routes and the default port name the
    ports of multicast copies)."""

    def __init__(self, writer: EntryWriter, layout: Layout, tables: PipeTables[LaneMap]) -> None:
        self.writer = writer
        self.layout = layout
        self.tables = tables
        self.names = layout.name_map()
        self.slots: dict[int, int] = {}  # tenant -> slot
        self.entries: dict[tuple[str, tuple[int, ...]], int] = {}  # (table, key) -> handle
        # (pipeline, eu, lane, tenant, vaddr or vbase) -> handle of a direct / segment entry
        self.directs: dict[tuple[str, int, int, int, int], int] = {}
        self.segments: dict[tuple[str, int, int, int, int], int] = {}
        self.groups: dict[tuple[int, int], tuple[int, list[int]]] = {}  # -> (mgrp, nodes)
        self.next_group = 1
        self.next_rid = 1

    @staticmethod
    def qualified(name: str) -> str:
        """``name`` qualified by the ingress control, as the name map qualifies names."""
        return f"{INGRESS}.{name}"

    def put(self, table: str, action: str, key: tuple[int, ...], params: Sequence[int]) -> None:
        """Add or replace the entry of an exact-match table."""
        handle = self.entries.get((table, key))
        if handle is not None:
            self.writer.modify_entry(table, action, handle, params)
            return
        self.entries[table, key] = self.writer.add_entry(
            table, action, [Match(k) for k in key], params
        )

    def remove(self, table: str, key: tuple[int, ...]) -> None:
        handle = self.entries.pop((table, key), None)
        if handle is not None:
            self.writer.delete_entry(table, handle)

    def slot(self, tenant: int) -> int:
        """The tenant's slot, the lowest free one for a new tenant (the ledger holds no more
        permission entries than there are slots)."""
        if tenant not in self.slots:
            used = set(self.slots.values())
            self.slots[tenant] = next(s for s in range(MAX_TENANT_SLOTS) if s not in used)
        return self.slots[tenant]

    def base(self, pipeline: str) -> int:
        """The first physical word of ``pipeline``'s half of a lane's register: the egress
        pipeline's words follow the ingress's."""
        return PIPELINES.index(pipeline) * self.layout.profile.memory_words_per_lane

    # -- accepted changes ----------------------------------------------------------------------
    def apply(self, change: Change) -> None:
        q = self.qualified
        match change:
            case CodeWritten(stage, slot, word):
                kind = stage_kind(stage)
                values = slot_fields(kind, word, self.layout.profile)
                fields = [values[f.name] for f in slot_layout(kind, self.layout.profile)]
                table, action = self.names["code"][stage], self.names["code_actions"][stage]  # type: ignore[index]
                self.put(table, action, (slot,), fields)
            case CodeCleared(stage, slot):
                self.remove(self.names["code"][stage], (slot,))  # type: ignore[index]
            case Granted(tenant, grant, entry):
                self.grant(tenant, grant.app_ids, entry)
            case Revoked(tenant, freed):
                for table, key in list(self.entries):
                    if key and key[0] == tenant and "code" not in table:
                        self.remove(table, key)
                for mappings in freed:
                    self.unmap(tenant, mappings)
                self.slots.pop(tenant, None)
            case MemoryMapped(tenant, mappings):
                self.map(tenant, mappings)
            case MemoryUnmapped(tenant, mappings):
                self.unmap(tenant, mappings)
            case ForwardingSet(tenant, index, destination):
                params = destination_params(destination)
                self.put(str(self.names["forwarding"]), q("destination"), (tenant, index), params)
            case MulticastSet(tenant, group, destinations):
                self.multicast(tenant, group, destinations)
            case WordsWritten(pipeline, eu, lane, physical, values):
                base = self.base(pipeline)
                register = q(self.layout.memory(eu, lane))
                _, addresses = physical[0]  # one pipe, or every pipe alike
                for address, value in zip(addresses, values, strict=True):
                    self.writer.write_register(register, base + address, value & WORD_MASK)

    def grant(self, tenant: int, app_ids: Sequence[int], entry: Permissions) -> None:
        """The tenant's permission entry and one app-token entry per id, in ``app_ids``'
        order (the tokens it no longer has removed)."""
        q = self.qualified
        default = entry.default_dpf
        params = [
            self.slot(tenant),
            app_ids[0],
            int(entry.metadata),
            int(entry.privileged),
            int(entry.recirculate),
            int(entry.unauthorized is UnauthorizedAction.PASS),
            int(default is not None),
            default.index if default is not None else 0xFFFF,
        ]
        self.put(str(self.names["permissions"]), q("permit"), (tenant,), params)
        tokens = str(self.names["app_tokens"])
        for table, key in list(self.entries):
            if table == tokens and key[0] == tenant and key[1] not in app_ids:
                self.remove(table, key)
        for app_id in app_ids:
            self.put(tokens, q("app_token"), (tenant, app_id), [])

    def map(self, tenant: int, mappings: LaneMappings) -> None:
        q = self.qualified
        pipeline, eu, lane = mappings.pipeline, mappings.eu, mappings.lane
        phase, base = PIPELINES.index(pipeline), self.base(pipeline)
        for vaddr, physical in mappings.directs:
            key = [Match(phase), Match(tenant), Match(vaddr)]
            table = q(self.layout.direct_table(eu, lane))
            handle = self.writer.add_entry(table, q("mapped"), key, [base + physical])
            self.directs[pipeline, eu, lane, tenant, vaddr] = handle
        for segment in mappings.segments:
            key = [Match(phase), Match(tenant), Match(segment.vbase, segment.mask)]
            params = [base + segment.pbase, segment.size - 1]
            # Segments of one tenant never overlap; the priority only has to be given.
            table = q(self.layout.segment_table(eu, lane))
            handle = self.writer.add_entry(table, q("segment"), key, params, 1)
            self.segments[pipeline, eu, lane, tenant, segment.vbase] = handle

    def unmap(self, tenant: int, mappings: LaneMappings) -> None:
        q = self.qualified
        pipeline, eu, lane = mappings.pipeline, mappings.eu, mappings.lane
        base = self.base(pipeline)
        for vaddr, physical in mappings.directs:
            handle = self.directs.pop((pipeline, eu, lane, tenant, vaddr))
            self.writer.delete_entry(q(self.layout.direct_table(eu, lane)), handle)
            self.zero(eu, lane, base + physical, 1)
        for segment in mappings.segments:
            handle = self.segments.pop((pipeline, eu, lane, tenant, segment.vbase))
            self.writer.delete_entry(q(self.layout.segment_table(eu, lane)), handle)
            self.zero(eu, lane, base + segment.pbase, segment.words)

    def zero(self, eu: int, lane: int, start: int, size: int) -> None:
        register = self.qualified(self.layout.memory(eu, lane))
        for index in range(start, start + size):
            self.writer.write_register(register, index, 0)

    def multicast(self, tenant: int, group: int, destinations: Sequence[Destination]) -> None:
        old = self.groups.pop((tenant, group), None)
        if old is not None:
            self.writer.remove_group(*old)
        mgrp, self.next_group = self.next_group, self.next_group + 1
        self.writer.create_group(mgrp)
        nodes: list[int] = []
        copy_rewrite = str(self.names["copy_rewrite"])
        rewrite_copy = f"{copy_rewrite.rsplit('.', 1)[0]}.rewrite_copy"
        for destination in destinations:
            port = destination.port
            if port is None and destination.ip_dst is not None:
                port = self.tables.routes.get(destination.ip_dst, self.tables.default_port)
            if port is None:
                continue  # a destination without a route is skipped (R7)
            rid, self.next_rid = self.next_rid, self.next_rid + 1
            node = self.writer.create_node(rid, port)
            self.writer.associate(mgrp, node)
            nodes.append(node)
            _, _, set_ip, ip, set_eth, eth = destination_params(destination)
            self.put(copy_rewrite, rewrite_copy, (rid,), [set_ip, ip, set_eth, eth])
        self.groups[tenant, group] = (mgrp, nodes)
        self.put(str(self.names["multicast"]), self.qualified("group"), (tenant, group), [mgrp])

    # -- lane words ----------------------------------------------------------------------------
    def read_words(
        self, pipe: int, pipeline: str, eu: int, lane: int, physical: Sequence[int]
    ) -> list[int]:
        del pipe  # one pipe, or every pipe alike
        base = self.base(pipeline)
        register = self.qualified(self.layout.memory(eu, lane))
        return self.writer.read_register(register, [base + p for p in physical])


def destination_params(destination: Destination) -> list[int]:
    """The action data of a destination (``destination`` / ``rewrite_copy``)."""
    return [
        int(destination.port is not None),
        destination.port or 0,
        int(destination.ip_dst is not None),
        int.from_bytes(destination.ip_dst, "big") if destination.ip_dst else 0,
        int(destination.eth_dst is not None),
        int.from_bytes(destination.eth_dst, "big") if destination.eth_dst else 0,
    ]


class EntryControl(LedgerControl[LaneMap]):
    """The control protocol on the program's tables of a switch of ``pipes`` pipes (module
    docstring); ``every_pipe``: why it takes requests for all of its pipes only, if so."""

    def __init__(
        self,
        writer: EntryWriter,
        profile: TargetProfile,
        pipes: int = 1,
        *,
        every_pipe: str | None = None,
    ) -> None:
        self.layout = Layout(profile)
        tables = [
            PipeTables(profile, index, lane_grid(profile, LaneMap), lane_grid(profile, LaneMap))
            for index in range(pipes)
        ]
        ledger = RequestLedger(
            tables,
            PORT_IDS,
            # a tenant's constants and counters are a row of registers of MAX_TENANT_SLOTS
            permission_entries=min(profile.permission_entries, MAX_TENANT_SLOTS),
            every_pipe=every_pipe,
        )
        self.writer = writer
        self.entry_plane = EntryDataPlane(writer, self.layout, tables[0])
        super().__init__(ledger, self.entry_plane)
        self._config: tuple[int, int, int] | None = None  # switch id, ports, pipe id

    # -- operator settings ---------------------------------------------------------------------
    def configure(self, *, switch_id: int, ports: int, pipe_id: int = 0) -> None:
        default = self.ledger.pipes[0].default_port
        params = [switch_id, pipe_id, ports, int(default is not None), default or 0]
        plane = self.entry_plane
        self.writer.set_default(str(plane.names["switch"]), plane.qualified("configure"), params)
        self._config = (switch_id, ports, pipe_id)

    def set_default_port(self, port: int | None, *, switch_id: int = 0, ports: int = 0) -> None:
        self.ledger.steering.set_default_port(port)
        config = self._config if self._config is not None else (switch_id, ports, 0)
        self.configure(switch_id=config[0], ports=config[1], pipe_id=config[2])

    def set_route(self, ip_dst: bytes, port: int) -> None:
        self.ledger.steering.set_route(ip_dst, port)
        plane = self.entry_plane
        key = (int.from_bytes(ip_dst, "big"),)
        plane.put(str(plane.names["routes"]), plane.qualified("route"), key, [port])

    def set_constant(self, tenant: int, index: int, value: int) -> None:
        self.ledger.memory.set_constant(tenant, index, value)
        plane = self.entry_plane
        position = plane.slot(tenant) * self.profile.const_table_entries + index
        self.writer.write_register(str(plane.names["constants"]), position, value)

    def counters(self, tenant: int) -> dict[str, int]:
        """The tenant's execution counters (``EXECUTION_COUNTERS``: the registers of its
        slot; 0 for a tenant without one)."""
        plane = self.entry_plane
        slot = plane.slots.get(tenant)
        names = plane.names["counters"]
        assert isinstance(names, dict)
        return {
            counter: 0
            if slot is None
            else self.writer.read_register(str(names[counter]), [slot])[0]
            for counter in EXECUTION_COUNTERS
        }


__all__ = ["PORT_IDS", "EntryControl", "EntryDataPlane", "destination_params"]
