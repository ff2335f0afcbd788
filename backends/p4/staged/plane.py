"""The stage-structured program's data plane: each accepted change as table entries.

Contract: :class:`StagedDataPlane` is the :class:`~dpfc.switch.DataPlane` of
:class:`~.control.StagedControl` (whose docstring says what each change becomes): it
keeps the handles of the entries it wrote, so that a change replaces or removes exactly
them, and writes through a :class:`~.writer.StagedWriter`. :func:`refuse` makes the
refusal (DPF4023) of what the program cannot run.
"""

from __future__ import annotations

from collections.abc import Sequence

from dpfc.catalog import codes
from dpfc.isa import (
    EPILOG_STAGE,
    PROLOG_STAGE,
    Bundle,
    CtrlOp,
    EpilogBundle,
    SelectorKind,
    StageBundle,
)
from dpfc.switch import (
    Change,
    CodeCleared,
    CodeWritten,
    Destination,
    ForwardingSet,
    Grant,
    Granted,
    LaneMap,
    LaneMappings,
    MemoryMapped,
    MemoryUnmapped,
    MulticastSet,
    PipeTables,
    Revoked,
    SwitchRefused,
    WordsWritten,
)
from dpfc.target import TargetProfile

from .egress import EGRESS_SUFFIX
from .ends import PERM_METADATA, PERM_PRIVILEGED, PERM_RECIRCULATE
from .entries import (
    Entry,
    Prefix,
    constant_entries,
    direct_entry,
    epilog_entries,
    eu_entries,
    hint,
    prolog_entries,
    segment_entry,
)
from .frame import fixed_frame_entries, set_port_entries
from .grants import DEFAULTS, PERM_PASS, UNAUTHORIZED
from .packet import switch_id_entries
from .plan import StagePlan
from .writer import StagedWriter

UNSUPPORTED = codes.SWITCH_STAGED_UNSUPPORTED
TENANT_SLOTS = 1 << 10  # meta.slot is 10 bits
PORT_IDS = 1 << 9


def refuse(message: str) -> SwitchRefused:
    return SwitchRefused(UNSUPPORTED, f"the stage-structured program: {message}")


class StagedDataPlane:
    """The program's tables and lane registers, written through ``writer`` (module
    docstring); ``tables``: the ledger's records (code, routes, the default port)."""

    def __init__(
        self, writer: StagedWriter, profile: TargetProfile, tables: PipeTables[LaneMap]
    ) -> None:
        self.writer, self.profile, self.tables = writer, profile, tables
        self.plan = StagePlan.for_profile(profile, writer.arch)
        self.slots: dict[int, int] = {}  # tenant -> slot
        self.code: dict[tuple[int, int], list[tuple[str, int]]] = {}  # (stage, slot) -> handles
        self.hints: dict[tuple[int, int], tuple[int, int]] = {}  # EU (stage, slot) -> hints
        self.tenant_entries: dict[int, dict[tuple[str, tuple[int, ...]], int]] = {}
        self.mapped: dict[tuple[int, int, int, int, str, str], int] = {}  # -> handle
        self.groups: dict[tuple[int, int], tuple[int, list[int]]] = {}
        self.next_group = 1
        self.switch_id = 0
        self.configured: list[tuple[str, int]] = []  # (table, handle) of configure's entries
        self.constants: dict[int, dict[int, int]] = {}  # tenant -> LOAD_CONST index -> value
        self.constant_handles: dict[tuple[int, int], list[tuple[str, int]]] = {}

    def start(self) -> None:
        """The fixed entries and defaults every switch holds (an emptied switch)."""
        for entry in fixed_frame_entries(self.profile, self.plan):
            self.writer.add(entry)
        self.default_route()

    def configure(self, switch_id: int, ports: int) -> None:
        """The operator's settings: the switch's identifier (LOAD_MD switch_id of in-packet
        code, and of in-switch code written after this) and its ports (set_port's)."""
        for table, handle in self.configured:
            self.writer.delete(table, handle)
        self.switch_id = switch_id
        entries = set_port_entries(self.profile, ports)
        entries += switch_id_entries(self.plan, switch_id)
        self.configured = [(e.table, self.writer.add(e)) for e in entries]

    def slot(self, tenant: int) -> int:
        if tenant not in self.slots:
            used = set(self.slots.values())
            self.slots[tenant] = next(s for s in range(TENANT_SLOTS) if s not in used)
        return self.slots[tenant]

    # -- code ----------------------------------------------------------------------------------
    def entries_for(self, stage: int, slot: int, bundle: StageBundle) -> list[Entry]:
        """The entries of ``bundle`` in ``slot`` of ``stage`` (EntryError: not on this program)."""
        profile, plan = self.profile, self.plan
        if stage == PROLOG_STAGE:
            assert isinstance(bundle, Bundle)
            return prolog_entries(profile, plan, slot, bundle, self.switch_id)
        if stage == EPILOG_STAGE:
            assert isinstance(bundle, EpilogBundle)
            return epilog_entries(profile, plan, slot, bundle)
        assert isinstance(bundle, Bundle)
        hints = self.hints_for(stage, bundle)
        tables = {self.slots[t]: c for t, c in self.constants.items() if t in self.slots}
        return eu_entries(profile, plan, stage - 1, slot, bundle, hints, tables)

    # -- constants -----------------------------------------------------------------------------
    def set_constant(self, tenant: int, index: int, value: int) -> None:
        """Entry ``index`` of the tenant's LOAD_CONST table: the in-packet entries of every
        EU, and the in-switch code that loads it written again."""
        self.constants.setdefault(tenant, {})[index] = value
        for table, handle in self.constant_handles.pop((tenant, index), []):
            self.writer.delete(table, handle)
        entries = constant_entries(self.plan, self.slot(tenant), index, value)
        self.constant_handles[tenant, index] = [(e.table, self.writer.add(e)) for e in entries]
        self.rewrite_constant_loads()

    def drop_constants(self, tenant: int) -> None:
        self.constants.pop(tenant, None)
        for key in [k for k in self.constant_handles if k[0] == tenant]:
            for table, handle in self.constant_handles.pop(key):
                self.writer.delete(table, handle)

    def rewrite_constant_loads(self) -> None:
        """Write again the in-switch EU code that has a LOAD_CONST (its entries hold the
        tenants' values)."""
        for stage in range(1, self.plan.num_eus + 1):
            for slot, entry in sorted(self.tables.code.get(stage, {}).items()):
                bundle = entry.bundle
                if isinstance(bundle, Bundle) and any(
                    sel.kind is SelectorKind.LOAD_CONST for sel in bundle.selectors
                ):
                    self.write_code(stage, slot, bundle)

    def hints_for(self, stage: int, bundle: Bundle) -> tuple[int, int]:
        """The successor hints of EU stage ``stage``'s ``bundle``: of the epilog its taken
        PC (the last EU, or a HALT) and its not-taken PC (the last EU) name, if installed."""
        last = stage == self.plan.num_eus
        epilogs = self.tables.code.get(EPILOG_STAGE, {})
        ctrl = bundle.control

        def of(pc: object) -> int:
            index = getattr(pc, "index", None)
            if pc is None or getattr(pc, "in_packet", True) or index not in epilogs:
                return 0
            epilog = epilogs[index].bundle
            return hint(epilog) if isinstance(epilog, EpilogBundle) else 0

        taken = of(ctrl.taken) if last or ctrl.op is CtrlOp.HALT else 0
        return taken, of(ctrl.not_taken) if last else 0

    def write_code(self, stage: int, slot: int, bundle: StageBundle) -> None:
        self.clear_code(stage, slot)
        entries = self.entries_for(stage, slot, bundle)
        self.code[stage, slot] = [(e.table, self.writer.add(e)) for e in entries]
        if stage not in (PROLOG_STAGE, EPILOG_STAGE):
            assert isinstance(bundle, Bundle)
            self.hints[stage, slot] = self.hints_for(stage, bundle)

    def clear_code(self, stage: int, slot: int) -> None:
        for table, handle in self.code.pop((stage, slot), []):
            self.writer.delete(table, handle)
        self.hints.pop((stage, slot), None)

    def rehint(self) -> None:
        """Re-write the EU entries whose successor hints an epilog change altered."""
        for (stage, slot), old in sorted(self.hints.items()):
            entry = self.tables.code.get(stage, {}).get(slot)
            if entry is None or not isinstance(entry.bundle, Bundle):
                continue
            if self.hints_for(stage, entry.bundle) != old:
                self.write_code(stage, slot, entry.bundle)

    # -- accepted changes ----------------------------------------------------------------------
    def apply(self, change: Change) -> None:
        match change:
            case CodeWritten(stage, slot, _word):
                self.write_code(stage, slot, self.tables.code[stage][slot].bundle)
                if stage == EPILOG_STAGE:
                    self.rehint()
            case CodeCleared(stage, slot):
                self.clear_code(stage, slot)
                if stage == EPILOG_STAGE:
                    self.rehint()
            case Granted(tenant, grant, _entry):
                self.grant(tenant, grant)
            case Revoked(tenant, freed):
                for (table, _key), handle in self.tenant_entries.pop(tenant, {}).items():
                    self.writer.delete(table, handle)
                self.drop_constants(tenant)
                for mappings in freed:
                    self.unmap(tenant, mappings)
                for group in [g for t, g in self.groups if t == tenant]:
                    self.drop_group(tenant, group)
                self.slots.pop(tenant, None)
                if self.plan.constants:  # the slot's constants leave its code entries
                    self.rewrite_constant_loads()
            case MemoryMapped(tenant, mappings):
                self.map(tenant, mappings)
            case MemoryUnmapped(tenant, mappings):
                self.unmap(tenant, mappings)
            case ForwardingSet(tenant, index, destination):
                self.put(
                    tenant,
                    forwarding_entry(self.slot(tenant), index, self.port(destination), destination),
                )
            case MulticastSet(tenant, group, destinations):
                self.multicast(tenant, group, destinations)
            case WordsWritten(pipeline, eu, lane, physical, values):
                _, addresses = physical[0]
                for address, value in zip(addresses, values, strict=True):
                    self.writer.write_register(lane_register(eu, lane, pipeline), address, value)

    def put(self, tenant: int, entry: Entry) -> None:
        """Add or replace a tenant's entry of an exact table."""
        key = (entry.table, tuple(v for _, v in entry.keys if isinstance(v, int)))
        mine = self.tenant_entries.setdefault(tenant, {})
        old = mine.pop(key, None)
        if old is not None:
            self.writer.delete(entry.table, old)
        mine[key] = self.writer.add(entry)

    def grant(self, tenant: int, grant: Grant) -> None:
        slot = self.slot(tenant)
        mine = self.tenant_entries.setdefault(tenant, {})
        for key in [k for k in mine if k[0] == "permissions" and k[1][1] not in grant.app_ids]:
            self.writer.delete("permissions", mine.pop(key))
        perm = PERM_METADATA if grant.metadata else 0
        perm |= (PERM_PRIVILEGED if grant.privileged else 0) | (
            PERM_RECIRCULATE if grant.recirculate else 0
        )
        perm |= PERM_PASS if grant.unauthorized == "pass" else 0
        for app_id in grant.app_ids:
            keys = (("geneve_vni", tenant), ("sv_app_id", app_id))
            params = (("slot", slot), ("perm", perm))
            self.put(tenant, Entry("permissions", keys, "grant", params))
        if self.plan.grants:  # the default DPF, and what passes (:mod:`.grants`)
            self.grant_rules(tenant, slot, grant)

    def grant_rules(self, tenant: int, slot: int, grant: Grant) -> None:
        mine = self.tenant_entries.setdefault(tenant, {})
        for key in [k for k in mine if k[0] in (DEFAULTS, UNAUTHORIZED)]:
            self.writer.delete(key[0], mine.pop(key))
        if grant.default_dpf is not None:
            params = (("pc", grant.default_dpf),)
            self.put(tenant, Entry(DEFAULTS, (("slot", slot),), "default_dpf", params))
        if grant.unauthorized == "pass":
            keys = (("geneve_vni", tenant),)
            self.put(tenant, Entry(UNAUTHORIZED, keys, "pass_unauthorized"))

    def port(self, destination: Destination) -> int:
        """The port of a destination: its own, or its address's route (or the default)."""
        port = destination.port
        if port is None and destination.ip_dst is not None:
            port = self.tables.routes.get(destination.ip_dst, self.tables.default_port)
        if port is None:
            raise refuse(f"destination {destination} has no port and no route")
        return port

    def map(self, tenant: int, mappings: LaneMappings) -> None:
        eu, lane, slot, plan = mappings.eu, mappings.lane, self.slot(tenant), self.plan
        pipeline = mappings.pipeline
        entries: list[tuple[int, str, Entry]] = []
        for vaddr, physical in mappings.directs:
            entry = direct_entry(plan, eu, lane, slot, vaddr, physical, pipeline)
            entries.append((vaddr, "d", entry))
        for seg in mappings.segments:
            if seg.null:
                raise refuse("a null segment (every address onto one word) is not on it")
            entry = segment_entry(
                plan, eu, lane, slot, seg.vbase, seg.size, seg.pbase, pipeline=pipeline
            )
            entries.append((seg.vbase, "s", entry))
        for vaddr, kind, entry in entries:  # all checked: now written
            self.mapped[eu, lane, tenant, vaddr, kind, pipeline] = self.writer.add(entry)

    def unmap(self, tenant: int, mappings: LaneMappings) -> None:
        eu, lane, pipeline = mappings.eu, mappings.lane, mappings.pipeline
        register = lane_register(eu, lane, pipeline)
        for vaddr, physical in mappings.directs:
            handle = self.mapped.pop((eu, lane, tenant, vaddr, "d", pipeline))
            self.writer.delete(self.plan.direct(eu, lane), handle)
            self.writer.write_register(register, physical, 0)
        for seg in mappings.segments:
            handle = self.mapped.pop((eu, lane, tenant, seg.vbase, "s", pipeline))
            self.writer.delete(self.plan.segment(eu, lane), handle)
            for address in range(seg.pbase, seg.pbase + seg.words):
                self.writer.write_register(register, address, 0)

    def multicast(self, tenant: int, group: int, destinations: Sequence[Destination]) -> None:
        ports = []
        for destination in destinations:
            if destination.eth_dst is not None or destination.ip_dst is not None:
                raise refuse("a multicast copy that rewrites addresses is not on it")
            if destination.port is not None:
                ports.append(destination.port)
        self.drop_group(tenant, group)
        mgrp, self.next_group = self.next_group, self.next_group + 1
        self.writer.create_group(mgrp)
        nodes = []
        for rid, port in enumerate(ports, 1):
            node = self.writer.create_node(rid, port)
            self.writer.associate(mgrp, node)
            nodes.append(node)
        self.groups[tenant, group] = (mgrp, nodes)
        keys = (("slot", self.slot(tenant)), ("sval", group))
        self.put(tenant, Entry("multicast", keys, "to_group", (("group", mgrp),)))

    def drop_group(self, tenant: int, group: int) -> None:
        old = self.groups.pop((tenant, group), None)
        if old is not None:
            self.writer.remove_group(*old)

    def route(self, ip_dst: bytes, port: int) -> None:
        key = (("ipv4_dst", Prefix(int.from_bytes(ip_dst, "big"), 32)),)
        self.put(-1, Entry("routes", key, "route_port", (("port", port),)))

    def default_route(self) -> None:
        port = self.tables.default_port
        if port is None:
            self.writer.set_default_action("routes", "drop", ())
        else:
            self.writer.set_default_action("routes", "route_port", (port,))

    def read_words(
        self, pipe: int, pipeline: str, eu: int, lane: int, physical: Sequence[int]
    ) -> list[int]:
        del pipe  # one pipe
        return self.writer.read_register(lane_register(eu, lane, pipeline), physical)


def lane_register(eu: int, lane: int, pipeline: str = "ingress") -> str:
    """The register of (EU, lane) of ``pipeline`` (the egress pass's own: :mod:`.egress`)."""
    return f"eu{eu}_lane{lane}" + (EGRESS_SUFFIX if pipeline == "egress" else "")


def forwarding_entry(slot: int, index: int, port: int, destination: Destination) -> Entry:
    """The forwarding entry of destination ``index`` of the tenant in ``slot``."""
    params: list[tuple[str, int]] = [("port", port)]
    if destination.eth_dst is not None:
        params.append(("dmac", int.from_bytes(destination.eth_dst, "big")))
    if destination.ip_dst is not None:
        params.append(("dip", int.from_bytes(destination.ip_dst, "big")))
    names = {("port",): "to_port_only", ("port", "dmac"): "to_port_eth"}
    names |= {("port", "dip"): "to_port_ip", ("port", "dmac", "dip"): "to_port"}
    action = names[tuple(name for name, _ in params)]
    return Entry("forwarding", (("slot", slot), ("sval", index)), action, tuple(params))


__all__ = [
    "PORT_IDS",
    "TENANT_SLOTS",
    "StagedDataPlane",
    "forwarding_entry",
    "lane_register",
    "refuse",
]
