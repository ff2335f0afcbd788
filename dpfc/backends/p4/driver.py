"""The bmv2 switch driver: the switch-driver protocol (dpfc.target.driver) on the P4 program.

Contract: :class:`Bmv2Driver` implements :class:`~dpfc.target.driver.SwitchDriver` for one
simple_switch running the program ``dpfc p4`` generated for the same profile, through
simple_switch_CLI's commands (:mod:`.cli`) on the names of :mod:`.layout`. It validates
before it changes anything (DriverError with the simulator's codes) and keeps what the
data plane cannot tell it back: table handles, the tenant slots, and the lane memories'
allocation (first fit, like the simulator's), so that ``read_memory`` translates virtual
addresses the way the data plane does. Operator settings the protocol leaves to a
deployment (routes, the default port, the switch id, constants, the RAND seed) are
methods too; the simulator's control plane has the same ones.

One pipe: bmv2's simple_switch has a single pipeline (``pipe_count`` is 1).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from dpfc.backends.p4.cli import Cli, CliError
from dpfc.backends.p4.layout import MAX_TENANT_SLOTS, Layout
from dpfc.encoding.errors import DecodeError
from dpfc.encoding.words import decode_slot, slot_fields, slot_layout, stage_kind
from dpfc.target.driver import Destination, DriverError, Grant
from dpfc.target.profile import HASH_FUNCTIONS, TargetProfile

HANDLE = re.compile(r"handle (\d+)")
READ_ONE_BY_ONE = 8  # more words are read as the whole register array, in one call
REFUSED = "DPF4099"  # bmv2 refused a table or register operation
HASH_ACTION = re.compile(r"\bhash_lane_(\d+)$")
NULL_PRIORITY = 1 << 20  # bmv2 ternary: the lowest number wins; the null segment loses


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
    """One lane memory: free words (first fit) and each tenant's translations."""

    words: int
    free: list[tuple[int, int]] = field(default_factory=list)  # (start, length), sorted
    direct: dict[tuple[int, int], tuple[int, int]] = field(
        default_factory=dict
    )  # (t, v) -> (phys, handle)
    segments: dict[tuple[int, int], tuple[int, int, int]] = field(
        default_factory=dict
    )  # (t, vbase) -> (size, phys, handle)

    def __post_init__(self) -> None:
        self.free = [(0, self.words)]

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


class Bmv2Driver:
    """Drives one simple_switch (see the module docstring)."""

    def __init__(
        self, cli: Cli, profile: TargetProfile, program_json: Path | str | None = None
    ) -> None:
        self.cli = cli
        self.layout = Layout(profile)
        self.names = self.layout.name_map()
        self.code_handles: dict[tuple[int, int], int] = {}
        self.slots: dict[int, int] = {}  # tenant -> slot
        self.entries: dict[tuple[str, tuple[int, ...]], int] = {}  # (table, key) -> handle
        self.lanes = {
            (k, i): _Lane(profile.memory_words_per_lane)
            for k in range(profile.num_eus)
            for i in range(profile.lanes)
        }
        self.routes: dict[bytes, int] = {}
        self.default_port: int | None = None
        self.groups: dict[tuple[int, int], tuple[int, list[int]]] = {}  # -> (mgrp, nodes)
        self.next_group = 1
        self.next_rid = 1
        if program_json is not None:
            self.set_hash_functions(program_json)

    def _run(self, command: str) -> str:
        """One CLI command; a refusal is the driver's refusal (so a deployment rolls back)."""
        try:
            return self.cli.run(command)
        except CliError as refused:
            raise DriverError(
                REFUSED, f"bmv2 refused `{command}`: {refused.output.strip()}"
            ) from None

    # -- protocol ------------------------------------------------------------------------------
    @property
    def profile(self) -> TargetProfile:
        return self.layout.profile

    @property
    def pipe_count(self) -> int:
        return 1

    def _pipes(self, pipes: Sequence[int], pipeline: str = "ingress") -> None:
        if any(p != 0 for p in pipes):
            raise DriverError("DPF4016", f"bmv2 has one pipe (0), not {sorted(set(pipes))}")
        if pipeline != "ingress":
            raise DriverError("DPF4016", f"this program has no {pipeline} lane memories")

    def _add(
        self,
        table: str,
        action: str,
        key: Sequence[str],
        params: Sequence[int],
        priority: int | None = None,
    ) -> int:
        line = f"table_add {table} {action} {' '.join(key)} => {' '.join(str(p) for p in params)}"
        if priority is not None:
            line += f" {priority}"
        output = self._run(line)
        found = HANDLE.search(output)
        if found is None:
            raise DriverError("DPF4099", f"bmv2 did not add the entry: {output.strip()}")
        return int(found.group(1))

    def _put(self, table: str, action: str, key: tuple[int, ...], params: Sequence[int]) -> None:
        """Add or replace the entry of an exact-match table."""
        handle = self.entries.get((table, key))
        if handle is not None:
            self._run(
                f"table_modify {table} {action} {handle} => {' '.join(str(p) for p in params)}"
            )
            return
        self.entries[table, key] = self._add(table, action, [str(k) for k in key], params)

    def _remove(self, table: str, key: tuple[int, ...]) -> None:
        handle = self.entries.pop((table, key), None)
        if handle is not None:
            self._run(f"table_delete {table} {handle}")

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
        self._put(str(self.names["permissions"]), f"{self._q('permit')}", (tenant,), params)
        for table, key in list(self.entries):
            if (
                table == self.names["app_tokens"]
                and key[0] == tenant
                and key[1] not in grant.app_ids
            ):
                self._remove(table, key)
        for app_id in grant.app_ids:
            self._put(str(self.names["app_tokens"]), self._q("app_token"), (tenant, app_id), [])

    def _q(self, name: str) -> str:
        return f"{str(self.names['permissions']).rsplit('.', 1)[0]}.{name}"

    def revoke(self, tenant: int, pipes: Sequence[int]) -> None:
        self._pipes(pipes)
        for table, key in list(self.entries):
            if key and key[0] == tenant and "code" not in table:
                self._remove(table, key)
        for (k, i), lane in self.lanes.items():
            for owner, vaddr in [d for d in lane.direct if d[0] == tenant]:
                self._unmap_direct(k, i, owner, vaddr)
            for owner, vbase in [s for s in lane.segments if s[0] == tenant]:
                self._unmap_segment(k, i, owner, vbase)
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
        memory = self._lane(eu, lane)
        if mapping not in ("direct", "segment") or size <= 0:
            raise DriverError("DPF4005", f"cannot map {size} words as {mapping!r}")
        if mapping == "direct" and not self.profile.lane_has_direct_mapping(lane):
            raise DriverError("DPF4009", f"EU{eu} lane {lane} has no direct mappings")
        if mapping == "direct" and any((tenant, v) in memory.direct for v in range(size)):
            raise DriverError("DPF4010", "an address is mapped already")
        base = memory.allocate(size)
        if base is None:
            raise DriverError("DPF4007", f"EU{eu} lane {lane} has no {size} free words")
        table_d = self.layout.direct_table(eu, lane)
        table_s = self.layout.segment_table(eu, lane)
        if mapping == "direct":
            for v in range(size):
                handle = self._add(
                    f"{self._q(table_d)}", self._q("mapped"), [str(tenant), str(v)], [base + v]
                )
                memory.direct[tenant, v] = (base + v, handle)
            return
        offset = 0
        for vbase, length in pieces(size):
            mask = ~(length - 1) & 0xFFFF_FFFF
            handle = self._add(
                self._q(table_s),
                self._q("segment"),
                [str(tenant), f"{vbase}&&&{mask}"],
                [base + offset, length - 1],
                priority=1,
            )
            memory.segments[tenant, vbase] = (length, base + offset, handle)
            offset += length

    def _lane(self, eu: int, lane: int) -> _Lane:
        memory = self.lanes.get((eu, lane))
        if memory is None:
            raise DriverError("DPF4004", f"no EU{eu} lane {lane} on {self.profile.name}")
        return memory

    def _zero(self, eu: int, lane: int, start: int, size: int) -> None:
        register = self._q(self.layout.memory(eu, lane))
        for index in range(start, start + size):
            self._run(f"register_write {register} {index} 0")

    def _unmap_direct(self, eu: int, lane: int, tenant: int, vaddr: int) -> None:
        memory = self.lanes[eu, lane]
        phys, handle = memory.direct.pop((tenant, vaddr))
        self._run(f"table_delete {self._q(self.layout.direct_table(eu, lane))} {handle}")
        self._zero(eu, lane, phys, 1)
        memory.release(phys, 1)

    def _unmap_segment(self, eu: int, lane: int, tenant: int, vbase: int) -> None:
        memory = self.lanes[eu, lane]
        size, phys, handle = memory.segments.pop((tenant, vbase))
        self._run(f"table_delete {self._q(self.layout.segment_table(eu, lane))} {handle}")
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
        memory = self._lane(eu, lane)
        if mapping == "direct":
            for v in range(size):
                if (tenant, v) not in memory.direct:
                    raise DriverError("DPF4011", f"address {v} is not mapped")
            for v in range(size):
                self._unmap_direct(eu, lane, tenant, v)
            return
        for vbase, _ in pieces(size):
            if (tenant, vbase) not in memory.segments:
                raise DriverError("DPF4011", f"segment at {vbase} is not mapped")
        for vbase, _ in pieces(size):
            self._unmap_segment(eu, lane, tenant, vbase)

    def set_forwarding(
        self, tenant: int, index: int, destination: Destination, pipes: Sequence[int]
    ) -> None:
        self._pipes(pipes)
        params = _destination(destination)
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
                self._run(f"mc_node_dissociate {old_group} {node}")
                self._run(f"mc_node_destroy {node}")
            self._run(f"mc_mgrp_destroy {old_group}")
        mgrp, self.next_group = self.next_group, self.next_group + 1
        self._run(f"mc_mgrp_create {mgrp}")
        nodes: list[int] = []
        for destination in destinations:
            port = destination.port
            if port is None and destination.ip_dst is not None:
                port = self.routes.get(destination.ip_dst, self.default_port)
            if port is None:
                continue  # a destination without a route is skipped (R7)
            rid, self.next_rid = self.next_rid, self.next_rid + 1
            output = self._run(f"mc_node_create {rid} {port}")
            found = HANDLE.search(output)
            if found is None:
                raise DriverError("DPF4099", f"bmv2 did not create the node: {output.strip()}")
            node = int(found.group(1))
            self._run(f"mc_node_associate {mgrp} {node}")
            nodes.append(node)
            _, _, set_ip, ip, set_eth, eth = _destination(destination)
            self._put(
                f"{self.names['copy_rewrite']}",
                f"{str(self.names['copy_rewrite']).rsplit('.', 1)[0]}.rewrite_copy",
                (rid,),
                [set_ip, ip, set_eth, eth],
            )
        self.groups[tenant, group] = (mgrp, nodes)
        self._put(str(self.names["multicast"]), self._q("group"), (tenant, group), [mgrp])

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
        memory = self._lane(eu, lane)
        physical = []
        for v in range(vaddr, vaddr + count):
            phys = memory.translate(tenant, v)
            if phys is None:
                raise DriverError("DPF4011", f"EU{eu} lane {lane} address {v} is not mapped")
            physical.append(phys)
        register = self._q(self.layout.memory(eu, lane))
        if count <= READ_ONE_BY_ONE:
            return [
                int(self._run(f"register_read {register} {p}").rsplit("=", 1)[1]) for p in physical
            ]
        # One call reads the whole array ("name= w0, w1, ..."): faster than a call per word.
        words = self._run(f"register_read {register}").split("=", 1)[1].split(",")
        return [int(words[p]) for p in physical]

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
        memory = self._lane(eu, lane)
        physical = []
        for v in range(vaddr, vaddr + len(values)):
            phys = memory.translate(tenant, v)
            if phys is None:
                raise DriverError("DPF4011", f"EU{eu} lane {lane} address {v} is not mapped")
            physical.append(phys)
        for phys, value in zip(physical, values, strict=True):
            self._run(
                f"register_write {self._q(self.layout.memory(eu, lane))} {phys} {value & 0xFFFF_FFFF}"
            )

    # -- operator settings ---------------------------------------------------------------------
    def configure(self, *, switch_id: int, ports: int, pipe_id: int = 0) -> None:
        default = self.default_port
        self._run(
            f"table_set_default {self.names['switch']} {self._q('configure')} {switch_id} {pipe_id} "
            f"{ports} {int(default is not None)} {default or 0}"
        )
        self._config = (switch_id, ports, pipe_id)

    def set_default_port(self, port: int | None, *, switch_id: int = 0, ports: int = 0) -> None:
        self.default_port = port
        config = getattr(self, "_config", (switch_id, ports, 0))
        self.configure(switch_id=config[0], ports=config[1], pipe_id=config[2])

    def set_route(self, ip_dst: bytes, port: int) -> None:
        self.routes[ip_dst] = port
        self._put(
            str(self.names["routes"]), self._q("route"), (int.from_bytes(ip_dst, "big"),), [port]
        )

    def set_constant(self, tenant: int, index: int, value: int) -> None:
        slot = self._slot(tenant)
        position = slot * self.profile.const_table_entries + index
        self._run(f"register_write {self.names['constants']} {position} {value}")

    def seed_random(self, state: int) -> None:
        """The xorshift32 state RAND draws from (the simulator's generator, same seed)."""
        self._run(f"register_write {self._q('rng_state')} 0 {state & 0xFFFF_FFFF}")

    def set_hash_functions(self, program_json: Path | str) -> None:
        """bmv2's crc32_custom calculations get each lane's CRC of the profile. A lane's
        calculations are the ones its ``hash_lane_<i>`` action uses (p4c names them
        ``calc``, ``calc_0``, ... and feeds them temporaries, so only the action tells)."""
        text = program_json.read_text() if isinstance(program_json, Path) else program_json
        for name, lane in hash_calculations(text):
            crc = HASH_FUNCTIONS[self.profile.hash_functions[lane]]
            self._run(
                f"set_crc32_parameters {name} {crc.polynomial:#x} {crc.init:#x} "
                f"{crc.xor_out:#x} {str(crc.reflect_in).lower()} {str(crc.reflect_out).lower()}"
            )


@cache
def hash_calculations(program_json: str) -> tuple[tuple[str, int], ...]:
    """(calculation, lane) of every HASH calculation of a compiled program (its JSON)."""
    program = json.loads(program_json)
    found: list[tuple[str, int]] = []
    for action in program["actions"]:
        lane = HASH_ACTION.search(action["name"])
        if lane is None:
            continue
        for primitive in action["primitives"]:
            for parameter in primitive.get("parameters", []):
                if parameter.get("type") == "calculation":
                    found.append((parameter["value"], int(lane.group(1))))
    return tuple(found)


def _destination(destination: Destination) -> list[int]:
    return [
        int(destination.port is not None),
        destination.port or 0,
        int(destination.ip_dst is not None),
        int.from_bytes(destination.ip_dst, "big") if destination.ip_dst else 0,
        int(destination.eth_dst is not None),
        int.from_bytes(destination.eth_dst, "big") if destination.eth_dst else 0,
    ]


__all__ = ["Bmv2Driver", "CliError"]
