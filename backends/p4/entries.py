"""The SwitchVM program's control plane, whatever carries its entries to the switch.

Contract: :class:`EntryDriver` implements the switch-driver protocol
(:class:`~dpfc.target.driver.SwitchDriver`) on the tables and registers of the program
``dpfc p4`` generates for the same profile (the names of :mod:`.layout`, the same in every
architecture). It validates before it changes anything (DriverError with the simulator's
codes) and keeps what the data plane cannot tell it back: entry handles, the tenant slots
and the lane memories' allocation (first fit, like the simulator's), so that
``read_memory`` translates virtual addresses the way the data plane does. Each call
becomes primitive operations on an :class:`~dpfc.backends.p4.writer.EntryWriter`, which
a back end renders: simple_switch_CLI commands (:mod:`.driver`) or a BF-RT Python script
(:mod:`.bfrt`).

Operator settings the protocol leaves to a deployment (routes, the default port, the
switch id, constants) are methods too; the simulator's control plane has the same ones.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from dpfc.backends.p4.layout import INGRESS, MAX_TENANT_SLOTS, Layout
from dpfc.backends.p4.writer import EntryWriter, Match
from dpfc.encoding import DecodeError, decode_slot, slot_fields, slot_layout, stage_kind
from dpfc.target.driver import Destination, DriverError, Grant
from dpfc.target.profile import TargetProfile

PIPELINES = ("ingress", "egress")  # memory is per pipeline (isa.md item 20)


def pieces(size: int) -> list[tuple[int, int]]:
    """(vaddr, size) aligned power-of-two segments covering [0, size) (as SimDriver)."""
    out, base = [], 0
    for bit in reversed(range(size.bit_length())):
        if size >> bit & 1:
            out.append((base, 1 << bit))
            base += 1 << bit
    return out


@dataclass
class _Lane:
    """One lane memory of one pipeline: free words (first fit, physical addresses from
    ``base``: the egress pipeline's words follow the ingress's in the lane's register) and
    each tenant's translations."""

    words: int
    base: int = 0
    phase: int = 0  # the translation tables' pipeline key: 0 ingress, 1 egress
    free: list[tuple[int, int]] = field(default_factory=list)  # (start, length), sorted
    direct: dict[tuple[int, int], tuple[int, int]] = field(
        default_factory=dict
    )  # (t, v) -> (phys, handle)
    segments: dict[tuple[int, int], tuple[int, int, int]] = field(
        default_factory=dict
    )  # (t, vbase) -> (size, phys, handle)

    def __post_init__(self) -> None:
        self.free = [(self.base, self.words)]

    def allocate(self, size: int) -> int | None:
        for index, (start, length) in enumerate(self.free):
            if length >= size:
                self.free[index] = (start + size, length - size)
                self.free = [f for f in self.free if f[1] > 0]
                return start
        return None

    def release(self, start: int, size: int) -> None:
        merged = sorted([*self.free, (start, size)])
        out: list[tuple[int, int]] = []
        for s, n in merged:
            if out and out[-1][0] + out[-1][1] == s:
                out[-1] = (out[-1][0], out[-1][1] + n)
            else:
                out.append((s, n))
        self.free = out

    def translate(self, tenant: int, vaddr: int) -> int | None:
        hit = self.direct.get((tenant, vaddr))
        if hit is not None:
            return hit[0]
        for (owner, vbase), (size, phys, _) in self.segments.items():
            if owner == tenant and vbase <= vaddr < vbase + size:
                return phys + (vaddr - vbase)
        return None


class EntryDriver:
    """The switch-driver protocol on the program's tables (see the module docstring)."""

    def __init__(self, writer: EntryWriter, profile: TargetProfile) -> None:
        self.writer = writer
        self.layout = Layout(profile)
        self.names = self.layout.name_map()
        self.slots: dict[int, int] = {}  # tenant -> slot
        self.entries: dict[tuple[str, tuple[int, ...]], int] = {}  # (table, key) -> handle
        words = profile.memory_words_per_lane
        self.lanes = {
            (pipeline, k, i): _Lane(words, phase * words, phase)
            for phase, pipeline in enumerate(PIPELINES)
            for k in range(profile.num_eus)
            for i in range(profile.lanes)
        }
        self.routes: dict[bytes, int] = {}
        self.default_port: int | None = None
        self.groups: dict[tuple[int, int], tuple[int, list[int]]] = {}  # -> (mgrp, nodes)
        self.next_group = 1
        self.next_rid = 1
        self._config: tuple[int, int, int] | None = None  # switch id, ports, pipe id

    # -- protocol ------------------------------------------------------------------------------
    @property
    def profile(self) -> TargetProfile:
        return self.layout.profile

    @property
    def pipe_count(self) -> int:
        return 1

    def _pipes(self, pipes: Sequence[int], pipeline: str = "ingress") -> None:
        """Refuse pipes the switch does not have, and an unknown pipeline."""
        if any(not 0 <= p < self.pipe_count for p in pipes):
            raise DriverError(
                "DPF4016", f"the switch has {self.pipe_count} pipes, not {sorted(set(pipes))}"
            )
        if pipeline not in PIPELINES:
            raise DriverError("DPF4021", f"unknown pipeline {pipeline!r} (ingress or egress)")

    def _q(self, name: str) -> str:
        """``name`` qualified by the ingress control, as the name map qualifies names."""
        return f"{INGRESS}.{name}"

    def _put(self, table: str, action: str, key: tuple[int, ...], params: Sequence[int]) -> None:
        """Add or replace the entry of an exact-match table."""
        handle = self.entries.get((table, key))
        if handle is not None:
            self.writer.modify_entry(table, action, handle, params)
            return
        self.entries[table, key] = self.writer.add_entry(
            table, action, [Match(k) for k in key], params
        )

    def _remove(self, table: str, key: tuple[int, ...]) -> None:
        handle = self.entries.pop((table, key), None)
        if handle is not None:
            self.writer.delete_entry(table, handle)

    def write_code(self, stage: int, slot: int, word: bytes, pipes: Sequence[int]) -> None:
        self._pipes(pipes)
        if stage not in self.layout.stages or not 0 <= slot < self.profile.code_slots_per_stage:
            raise DriverError("DPF4012", f"no code-memory slot {slot} of stage {stage}")
        kind = stage_kind(stage)
        try:
            decode_slot(kind, word, self.profile)  # the same checks as the simulator's
            values = slot_fields(kind, word, self.profile)
        except DecodeError as exc:
            raise DriverError(exc.code, exc.message) from None
        fields = [values[f.name] for f in slot_layout(kind, self.profile)]
        table, action = self.names["code"][stage], self.names["code_actions"][stage]  # type: ignore[index]
        self._put(table, action, (slot,), fields)

    def clear_code(self, stage: int, slot: int, pipes: Sequence[int]) -> None:
        self._pipes(pipes)
        self._remove(self.names["code"][stage], (slot,))  # type: ignore[index]

    def _slot(self, tenant: int) -> int:
        if tenant not in self.slots:
            used = set(self.slots.values())
            free = next((s for s in range(MAX_TENANT_SLOTS) if s not in used), None)
            if free is None:
                raise DriverError("DPF4003", "no tenant slot is free on the switch")
            self.slots[tenant] = free
        return self.slots[tenant]

    def grant(self, tenant: int, grant: Grant, pipes: Sequence[int]) -> None:
        self._pipes(pipes)
        if not grant.app_ids:
            raise DriverError("DPF4018", "a permission entry needs an app id")
        if not 0 <= tenant < 1 << 24:
            raise DriverError("DPF4001", f"tenant {tenant} is not a 24-bit VNI")
        if grant.unauthorized not in ("drop", "pass"):
            raise DriverError("DPF4019", f"unauthorized action {grant.unauthorized!r}")
        default = grant.default_dpf
        params = [
            self._slot(tenant),
            grant.app_ids[0],
            int(grant.metadata),
            int(grant.privileged),
            int(grant.recirculate),
            int(grant.unauthorized == "pass"),
            int(default is not None),
            default if default is not None else 0xFFFF,
        ]
        self._put(str(self.names["permissions"]), self._q("permit"), (tenant,), params)
        for table, key in list(self.entries):
            if (
                table == self.names["app_tokens"]
                and key[0] == tenant
                and key[1] not in grant.app_ids
            ):
                self._remove(table, key)
        for app_id in grant.app_ids:
            self._put(str(self.names["app_tokens"]), self._q("app_token"), (tenant, app_id), [])

    def revoke(self, tenant: int, pipes: Sequence[int]) -> None:
        self._pipes(pipes)
        for table, key in list(self.entries):
            if key and key[0] == tenant and "code" not in table:
                self._remove(table, key)
        for (pipeline, k, i), lane in self.lanes.items():
            for owner, vaddr in [d for d in lane.direct if d[0] == tenant]:
                self._unmap_direct(k, i, owner, vaddr, pipeline)
            for owner, vbase in [s for s in lane.segments if s[0] == tenant]:
                self._unmap_segment(k, i, owner, vbase, pipeline)
        self.slots.pop(tenant, None)

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
        self._pipes(pipes, pipeline)
        memory = self._lane(eu, lane, pipeline)
        if mapping not in ("direct", "segment") or size <= 0:
            raise DriverError("DPF4005", f"cannot map {size} words as {mapping!r}")
        if mapping == "direct" and not self.profile.lane_has_direct_mapping(lane):
            raise DriverError("DPF4009", f"EU{eu} lane {lane} has no direct mappings")
        if mapping == "direct" and any((tenant, v) in memory.direct for v in range(size)):
            raise DriverError("DPF4010", "an address is mapped already")
        base = memory.allocate(size)
        if base is None:
            raise DriverError("DPF4007", f"EU{eu} lane {lane} has no {size} free words")
        table_d = self._q(self.layout.direct_table(eu, lane))
        table_s = self._q(self.layout.segment_table(eu, lane))
        if mapping == "direct":
            for v in range(size):
                key = [Match(memory.phase), Match(tenant), Match(v)]
                handle = self.writer.add_entry(table_d, self._q("mapped"), key, [base + v])
                memory.direct[tenant, v] = (base + v, handle)
            return
        offset = 0
        for vbase, length in pieces(size):
            key = [Match(memory.phase), Match(tenant), Match(vbase, ~(length - 1) & 0xFFFF_FFFF)]
            params = [base + offset, length - 1]
            # Segments of one tenant never overlap; the priority only has to be given.
            handle = self.writer.add_entry(table_s, self._q("segment"), key, params, 1)
            memory.segments[tenant, vbase] = (length, base + offset, handle)
            offset += length

    def _lane(self, eu: int, lane: int, pipeline: str = "ingress") -> _Lane:
        memory = self.lanes.get((pipeline, eu, lane))
        if memory is None:
            raise DriverError("DPF4004", f"no EU{eu} lane {lane} on {self.profile.name}")
        return memory

    def _zero(self, eu: int, lane: int, start: int, size: int) -> None:
        register = self._q(self.layout.memory(eu, lane))
        for index in range(start, start + size):
            self.writer.write_register(register, index, 0)

    def _unmap_direct(self, eu: int, lane: int, tenant: int, vaddr: int, pipeline: str) -> None:
        memory = self.lanes[pipeline, eu, lane]
        phys, handle = memory.direct.pop((tenant, vaddr))
        self.writer.delete_entry(self._q(self.layout.direct_table(eu, lane)), handle)
        self._zero(eu, lane, phys, 1)
        memory.release(phys, 1)

    def _unmap_segment(self, eu: int, lane: int, tenant: int, vbase: int, pipeline: str) -> None:
        memory = self.lanes[pipeline, eu, lane]
        size, phys, handle = memory.segments.pop((tenant, vbase))
        self.writer.delete_entry(self._q(self.layout.segment_table(eu, lane)), handle)
        self._zero(eu, lane, phys, size)
        memory.release(phys, size)

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
        self._pipes(pipes, pipeline)
        memory = self._lane(eu, lane, pipeline)
        if mapping == "direct":
            for v in range(size):
                if (tenant, v) not in memory.direct:
                    raise DriverError("DPF4011", f"address {v} is not mapped")
            for v in range(size):
                self._unmap_direct(eu, lane, tenant, v, pipeline)
            return
        for vbase, _ in pieces(size):
            if (tenant, vbase) not in memory.segments:
                raise DriverError("DPF4011", f"segment at {vbase} is not mapped")
        for vbase, _ in pieces(size):
            self._unmap_segment(eu, lane, tenant, vbase, pipeline)

    def set_forwarding(
        self, tenant: int, index: int, destination: Destination, pipes: Sequence[int]
    ) -> None:
        self._pipes(pipes)
        params = destination_params(destination)
        self._put(str(self.names["forwarding"]), self._q("destination"), (tenant, index), params)

    def set_multicast(
        self, tenant: int, group: int, destinations: Sequence[Destination], pipes: Sequence[int]
    ) -> None:
        self._pipes(pipes)
        if not destinations:
            raise DriverError("DPF4014", "an empty multicast group")
        old = self.groups.pop((tenant, group), None)
        if old is not None:
            old_group, old_nodes = old
            for node in old_nodes:
                self.writer.dissociate(old_group, node)
                self.writer.destroy_node(node)
            self.writer.destroy_group(old_group)
        mgrp, self.next_group = self.next_group, self.next_group + 1
        self.writer.create_group(mgrp)
        nodes: list[int] = []
        copy_rewrite = str(self.names["copy_rewrite"])
        rewrite_copy = f"{copy_rewrite.rsplit('.', 1)[0]}.rewrite_copy"
        for destination in destinations:
            port = destination.port
            if port is None and destination.ip_dst is not None:
                port = self.routes.get(destination.ip_dst, self.default_port)
            if port is None:
                continue  # a destination without a route is skipped (R7)
            rid, self.next_rid = self.next_rid, self.next_rid + 1
            node = self.writer.create_node(rid, port)
            self.writer.associate(mgrp, node)
            nodes.append(node)
            _, _, set_ip, ip, set_eth, eth = destination_params(destination)
            self._put(copy_rewrite, rewrite_copy, (rid,), [set_ip, ip, set_eth, eth])
        self.groups[tenant, group] = (mgrp, nodes)
        self._put(str(self.names["multicast"]), self._q("group"), (tenant, group), [mgrp])

    def _physical(self, memory: _Lane, tenant: int, eu: int, lane: int, vaddr: int) -> int:
        phys = memory.translate(tenant, vaddr)
        if phys is None:
            raise DriverError("DPF4011", f"EU{eu} lane {lane} address {vaddr} is not mapped")
        return phys

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
        self._pipes([pipe], pipeline)
        memory = self._lane(eu, lane, pipeline)
        physical = [
            self._physical(memory, tenant, eu, lane, v) for v in range(vaddr, vaddr + count)
        ]
        return self.writer.read_register(self._q(self.layout.memory(eu, lane)), physical)

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
        self._pipes(pipes, pipeline)
        memory = self._lane(eu, lane, pipeline)
        physical = [
            self._physical(memory, tenant, eu, lane, v) for v in range(vaddr, vaddr + len(values))
        ]
        register = self._q(self.layout.memory(eu, lane))
        for phys, value in zip(physical, values, strict=True):
            self.writer.write_register(register, phys, value & 0xFFFF_FFFF)

    # -- operator settings ---------------------------------------------------------------------
    def configure(self, *, switch_id: int, ports: int, pipe_id: int = 0) -> None:
        default = self.default_port
        params = [switch_id, pipe_id, ports, int(default is not None), default or 0]
        self.writer.set_default(str(self.names["switch"]), self._q("configure"), params)
        self._config = (switch_id, ports, pipe_id)

    def set_default_port(self, port: int | None, *, switch_id: int = 0, ports: int = 0) -> None:
        self.default_port = port
        config = self._config if self._config is not None else (switch_id, ports, 0)
        self.configure(switch_id=config[0], ports=config[1], pipe_id=config[2])

    def set_route(self, ip_dst: bytes, port: int) -> None:
        self.routes[ip_dst] = port
        self._put(
            str(self.names["routes"]), self._q("route"), (int.from_bytes(ip_dst, "big"),), [port]
        )

    def set_constant(self, tenant: int, index: int, value: int) -> None:
        slot = self._slot(tenant)
        position = slot * self.profile.const_table_entries + index
        self.writer.write_register(str(self.names["constants"]), position, value)


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
