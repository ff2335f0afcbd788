"""The operator's control-plane API of a simulated switch.

Every method validates all of its arguments against every pipe it targets *before* it
changes anything, and raises :class:`ControlPlaneError` (a code and a message) otherwise, so
a failed call leaves the switch exactly as it was. ``pipes=None`` targets every pipe of the
switch (the usual, symmetric configuration); an int or a list of ints targets some pipes.

Each call is one atomic table update with respect to packets: the simulator processes a
packet between calls, never during one. Installing a DPF in place is therefore atomic when
the prolog slot is written last (:mod:`dpfc.deploy` orders the writes so).

Code arrives as code-memory words (bytes), decoded by :func:`dpfc.encoding.decode_slot`,
which checks every ISA rule of the stage: the simulator runs what a P4 target would be
given, never a Python bundle.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, fields, replace

from dpfc.encoding.errors import DecodeError
from dpfc.encoding.words import decode_slot, stage_kind
from dpfc.isa.bundle import EPILOG_STAGE, PC, PROLOG_STAGE, StageBundle, stage_name
from dpfc.target.driver import DriverError
from dpfc.target.profile import TargetProfile

from .memory import WORD_SPACE, LaneMemory, Segment
from .state import (
    CodeEntry,
    Destination,
    Permissions,
    PipeState,
    TenantStats,
    UnauthorizedAction,
)

TENANT_LIMIT = 1 << 24  # the Geneve VNI
PIPELINES = ("ingress", "egress")  # each pipe's two sets of lane memories
INDEX_LIMIT = 1 << 16  # forwarding indices and multicast groups are 16-bit FWD values
WORD_MASK = 0xFFFF_FFFF


class ControlPlaneError(DriverError):
    """A control-plane request was refused; nothing was changed."""


@dataclass(frozen=True)
class MemoryUsage:
    """Switch memory in use, summed over the pipes and lanes asked for."""

    words: int
    direct_entries: int
    segments: int
    permission_entries: int
    forwarding_entries: int
    code_slots: int

    def is_zero(self) -> bool:
        return all(getattr(self, f.name) == 0 for f in fields(self))


class ControlPlane:
    """Operator API of one switch (its pipes' states). Obtain it as ``switch.control``."""

    def __init__(self, pipes: Sequence[PipeState], ports: int) -> None:
        self.pipes = list(pipes)
        self.ports = ports
        self.profile: TargetProfile = self.pipes[0].profile

    # -- helpers -----------------------------------------------------------------------------
    def _targets(self, pipes: int | Iterable[int] | None) -> list[PipeState]:
        if pipes is None:
            return self.pipes
        wanted = [pipes] if isinstance(pipes, int) else list(pipes)
        for index in wanted:
            if not isinstance(index, int) or not 0 <= index < len(self.pipes):
                raise ControlPlaneError(
                    "DPF4016", f"no pipe {index!r}: the switch has pipes 0..{len(self.pipes) - 1}"
                )
        if not wanted:
            raise ControlPlaneError("DPF4016", "no pipe given")
        return [self.pipes[i] for i in dict.fromkeys(wanted)]

    @staticmethod
    def _tenant(tenant: int) -> None:
        if not isinstance(tenant, int) or not 0 <= tenant < TENANT_LIMIT:
            raise ControlPlaneError(
                "DPF4001",
                f"tenant id {tenant!r} is not a 24-bit Geneve VNI (0..{TENANT_LIMIT - 1})",
            )

    def _authorized(self, tenant: int, targets: list[PipeState]) -> None:
        self._tenant(tenant)
        for pipe in targets:
            if tenant not in pipe.permissions:
                raise ControlPlaneError(
                    "DPF4002", f"tenant {tenant} is not authorized on pipe {pipe.index}"
                )

    def _lane(self, eu: int, lane: int) -> None:
        p = self.profile
        if not isinstance(eu, int) or not 0 <= eu < p.num_eus:
            raise ControlPlaneError("DPF4004", f"no EU {eu!r}: {p.name} has EUs 0..{p.num_eus - 1}")
        if not isinstance(lane, int) or not 0 <= lane < p.lanes:
            raise ControlPlaneError(
                "DPF4004", f"no lane {lane!r}: {p.name} has lanes 0..{p.lanes - 1}"
            )

    @staticmethod
    def _pipeline(pipeline: str) -> None:
        if pipeline not in PIPELINES:
            raise ControlPlaneError(
                "DPF4021", f"no pipeline {pipeline!r}: lane memories are ingress or egress"
            )

    @staticmethod
    def _address(vaddr: int) -> None:
        if not isinstance(vaddr, int) or not 0 <= vaddr < WORD_SPACE:
            raise ControlPlaneError(
                "DPF4005", f"virtual address {vaddr!r} is not a 32-bit word address"
            )

    def _port(self, port: int) -> None:
        if not isinstance(port, int) or not 0 <= port < self.ports:
            raise ControlPlaneError(
                "DPF4017", f"no port {port!r}: the switch has ports 0..{self.ports - 1}"
            )

    # -- permissions --------------------------------------------------------------------------
    def authorize(
        self,
        tenant: int,
        *,
        app_id: int = 0,
        default_dpf: PC | None = None,
        unauthorized: UnauthorizedAction | str = UnauthorizedAction.DROP,
        metadata: bool = False,
        privileged: bool = False,
        recirculate: bool = False,
        app_ids: Iterable[int] = (),
        pipes: int | Iterable[int] | None = None,
    ) -> Permissions:
        """Add (or replace) the permission-table entry of ``tenant``; ``app_ids`` are tokens
        accepted besides ``app_id``."""
        targets = self._targets(pipes)
        self._tenant(tenant)
        entry = self._permissions(
            app_id, default_dpf, unauthorized, metadata, privileged, recirculate, app_ids
        )
        for pipe in targets:
            if (
                tenant not in pipe.permissions
                and len(pipe.permissions) >= self.profile.permission_entries
            ):
                raise ControlPlaneError(
                    "DPF4003",
                    f"the permission table of pipe {pipe.index} is full "
                    f"({self.profile.permission_entries} entries)",
                )
        for pipe in targets:
            pipe.permissions[tenant] = entry
        return entry

    def _permissions(
        self,
        app_id: int,
        default_dpf: PC | None,
        unauthorized: UnauthorizedAction | str,
        metadata: bool,
        privileged: bool,
        recirculate: bool,
        app_ids: Iterable[int] = (),
    ) -> Permissions:
        try:
            tokens = frozenset(app_ids)
        except TypeError:
            raise ControlPlaneError(
                "DPF4018", f"app ids {app_ids!r} are not a set of ints"
            ) from None
        for token in (app_id, *tokens):
            if not isinstance(token, int) or not 0 <= token <= WORD_MASK:
                raise ControlPlaneError("DPF4018", f"app id {token!r} does not fit in 32 bits")
        if default_dpf is not None:
            if not isinstance(default_dpf, PC) or default_dpf.in_packet:
                raise ControlPlaneError(
                    "DPF4013",
                    f"a default DPF is an in-switch prolog slot (@switch:N), got {default_dpf}",
                )
            if not 0 <= default_dpf.index < self.profile.code_slots_per_stage:
                raise ControlPlaneError(
                    "DPF4013",
                    f"default DPF {default_dpf} is beyond the {self.profile.code_slots_per_stage} "
                    "prolog slots",
                )
        try:
            action = UnauthorizedAction(unauthorized)
        except ValueError:
            raise ControlPlaneError(
                "DPF4019", f"unauthorized action must be drop or pass, got {unauthorized!r}"
            ) from None
        return Permissions(
            app_id,
            default_dpf,
            action,
            bool(metadata),
            bool(privileged),
            bool(recirculate),
            tokens,
        )

    def update_permissions(
        self, tenant: int, *, pipes: int | Iterable[int] | None = None, **changes: object
    ) -> None:
        """Change some fields of an existing entry (app_id, default_dpf, unauthorized, ...)."""
        targets = self._targets(pipes)
        self._authorized(tenant, targets)
        known = {f.name for f in fields(Permissions)}
        unknown = sorted(set(changes) - known)
        if unknown:
            raise ControlPlaneError("DPF4019", f"unknown permission field(s): {', '.join(unknown)}")
        updated = []
        for pipe in targets:
            merged = {
                f.name: getattr(pipe.permissions[tenant], f.name) for f in fields(Permissions)
            }
            merged.update(changes)
            updated.append(
                self._permissions(
                    merged["app_id"],
                    merged["default_dpf"],
                    merged["unauthorized"],
                    bool(merged["metadata"]),
                    bool(merged["privileged"]),
                    bool(merged["recirculate"]),
                    merged["app_ids"],
                )
            )
        for pipe, entry in zip(targets, updated, strict=True):
            pipe.permissions[tenant] = entry

    def set_app_token(
        self, tenant: int, app_id: int, *, pipes: int | Iterable[int] | None = None
    ) -> None:
        self.update_permissions(tenant, app_id=app_id, pipes=pipes)

    def set_default_dpf(
        self, tenant: int, default_dpf: PC | None, *, pipes: int | Iterable[int] | None = None
    ) -> None:
        self.update_permissions(tenant, default_dpf=default_dpf, pipes=pipes)

    def deauthorize(self, tenant: int, *, pipes: int | Iterable[int] | None = None) -> None:
        """Remove the tenant's permission entry and everything it owns on the pipes: memory
        mappings (the words are freed), forwarding entries, multicast groups, constants and
        counters. Code memory is shared and stays; remove it with :meth:`remove_code`."""
        targets = self._targets(pipes)
        self._authorized(tenant, targets)
        for pipe in targets:
            for memory in pipe.all_lanes():  # the ingress's and the egress's
                _free_tenant(memory, tenant)
            del pipe.permissions[tenant]
            pipe.forwarding.pop(tenant, None)
            pipe.multicast.pop(tenant, None)
            pipe.constants.pop(tenant, None)
            pipe.stats.pop(tenant, None)

    def permissions(self, tenant: int, *, pipe: int = 0) -> Permissions | None:
        return self._targets(pipe)[0].permissions.get(tenant)

    # -- memory -------------------------------------------------------------------------------
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

    # -- code memory ----------------------------------------------------------------------------
    def install_code(
        self,
        stage: int,
        slot: int,
        word: bytes,
        *,
        owners: Iterable[int] | None = None,
        pipes: int | Iterable[int] | None = None,
    ) -> None:
        """Write one code-memory slot of ``stage`` (0 prolog, 1..n EUs, 31 epilog) with a
        code-memory word, replacing what was there. ``owners`` limits the slot to some
        tenants (None: any tenant may run it; code memory is shared, §3.6.2)."""
        targets = self._targets(pipes)
        self._stage_slot(stage, slot)
        bundle = self._decode(stage, slot, word)
        owner_set = None
        if owners is not None:
            owner_set = frozenset(owners)
            for tenant in owner_set:
                self._tenant(tenant)
        for pipe in targets:
            pipe.code.setdefault(stage, {})[slot] = CodeEntry(bundle, owner_set)

    def remove_code(
        self, stage: int, slot: int, *, pipes: int | Iterable[int] | None = None
    ) -> None:
        targets = self._targets(pipes)
        self._stage_slot(stage, slot)
        for pipe in targets:
            if slot not in pipe.code.get(stage, {}):
                raise ControlPlaneError(
                    "DPF4020", f"slot {slot} of {stage_name(stage)} is empty on pipe {pipe.index}"
                )
        for pipe in targets:
            del pipe.code[stage][slot]

    def code_at(self, stage: int, slot: int, *, pipe: int = 0) -> CodeEntry | None:
        self._stage_slot(stage, slot)
        return self._targets(pipe)[0].code.get(stage, {}).get(slot)

    def _stage_slot(self, stage: int, slot: int) -> None:
        valid = [PROLOG_STAGE, *range(1, self.profile.num_eus + 1), EPILOG_STAGE]
        if stage not in valid:
            raise ControlPlaneError(
                "DPF4012",
                f"no stage {stage!r}: stages are 0 (prolog), 1..{self.profile.num_eus} (EUs), 31 (epilog)",
            )
        if not isinstance(slot, int) or not 0 <= slot < self.profile.code_slots_per_stage:
            raise ControlPlaneError(
                "DPF4012", f"slot {slot!r} is not in 0..{self.profile.code_slots_per_stage - 1}"
            )

    def _decode(self, stage: int, slot: int, word: bytes) -> StageBundle:
        if not isinstance(word, bytes):
            raise ControlPlaneError(
                "DPF4012", f"slot {slot} of {stage_name(stage)} takes a code-memory word (bytes)"
            )
        try:
            return decode_slot(stage_kind(stage), word, self.profile)
        except DecodeError as exc:
            raise ControlPlaneError(
                exc.code, f"word for slot {slot} of {stage_name(stage)} is invalid: {exc.message}"
            ) from None

    # -- steering -------------------------------------------------------------------------------
    def set_forwarding(
        self,
        tenant: int,
        index: int,
        destination: Destination,
        *,
        pipes: int | Iterable[int] | None = None,
    ) -> None:
        """Virtual destination ``index`` of the tenant (what ``FWD forward, index`` names)."""
        targets = self._targets(pipes)
        self._authorized(tenant, targets)
        self._index(index, "forwarding index")
        self._destination(destination)
        for pipe in targets:
            present = index in pipe.forwarding.get(tenant, {})
            if not present and pipe.forwarding_entries_used() >= self.profile.forwarding_entries:
                raise ControlPlaneError(
                    "DPF4014", f"the forwarding table of pipe {pipe.index} is full"
                )
        for pipe in targets:
            pipe.forwarding.setdefault(tenant, {})[index] = destination

    def remove_forwarding(
        self, tenant: int, index: int, *, pipes: int | Iterable[int] | None = None
    ) -> None:
        targets = self._targets(pipes)
        self._authorized(tenant, targets)
        for pipe in targets:
            if index not in pipe.forwarding.get(tenant, {}):
                raise ControlPlaneError(
                    "DPF4011", f"tenant {tenant} has no forwarding entry {index!r}"
                )
        for pipe in targets:
            del pipe.forwarding[tenant][index]

    def set_multicast_group(
        self,
        tenant: int,
        group: int,
        destinations: Sequence[Destination],
        *,
        pipes: int | Iterable[int] | None = None,
    ) -> None:
        """Multicast group ``group`` of the tenant: one copy of the packet per destination."""
        targets = self._targets(pipes)
        self._authorized(tenant, targets)
        self._index(group, "multicast group")
        if not destinations:
            raise ControlPlaneError("DPF4014", "a multicast group needs at least one destination")
        for destination in destinations:
            self._destination(destination)
        for pipe in targets:
            old = len(pipe.multicast.get(tenant, {}).get(group, ()))
            if (
                pipe.forwarding_entries_used() - old + len(destinations)
                > self.profile.forwarding_entries
            ):
                raise ControlPlaneError(
                    "DPF4014", f"the forwarding table of pipe {pipe.index} is full"
                )
        for pipe in targets:
            pipe.multicast.setdefault(tenant, {})[group] = tuple(destinations)

    def _index(self, index: int, what: str) -> None:
        if not isinstance(index, int) or not 0 <= index < INDEX_LIMIT:
            raise ControlPlaneError("DPF4014", f"{what} {index!r} is not a 16-bit value")

    def _destination(self, destination: Destination) -> None:
        if not isinstance(destination, Destination):
            raise ControlPlaneError("DPF4014", f"not a Destination: {destination!r}")
        if destination.port is None and destination.ip_dst is None:
            raise ControlPlaneError("DPF4014", "a destination needs a port or an IPv4 address")
        if destination.port is not None:
            self._port(destination.port)
        if destination.ip_dst is not None and len(destination.ip_dst) != 4:
            raise ControlPlaneError("DPF4014", "a destination's IPv4 address is 4 bytes")
        if destination.eth_dst is not None and len(destination.eth_dst) != 6:
            raise ControlPlaneError("DPF4014", "a destination's MAC address is 6 bytes")

    def set_route(
        self, ip_dst: bytes, port: int, *, pipes: int | Iterable[int] | None = None
    ) -> None:
        """The operator's L3 route: packets to outer IPv4 ``ip_dst`` leave through ``port``."""
        targets = self._targets(pipes)
        if not isinstance(ip_dst, bytes) or len(ip_dst) != 4:
            raise ControlPlaneError("DPF4014", f"an IPv4 address is 4 bytes, got {ip_dst!r}")
        self._port(port)
        for pipe in targets:
            pipe.routes[ip_dst] = port

    def set_default_port(
        self, port: int | None, *, pipes: int | Iterable[int] | None = None
    ) -> None:
        targets = self._targets(pipes)
        if port is not None:
            self._port(port)
        for pipe in targets:
            pipe.default_port = port

    # -- read-back ------------------------------------------------------------------------------
    def stats(self, tenant: int, *, pipes: int | Iterable[int] | None = None) -> TenantStats:
        """The tenant's counters summed over the pipes."""
        self._tenant(tenant)
        total = TenantStats()
        for pipe in self._targets(pipes):
            one = pipe.stats.get(tenant)
            if one is not None:
                total = replace(
                    total,
                    **{
                        f.name: getattr(total, f.name) + getattr(one, f.name) for f in fields(total)
                    },
                )
        return total

    def usage(self, *, pipes: int | Iterable[int] | None = None) -> MemoryUsage:
        targets = self._targets(pipes)
        lanes = [m for pipe in targets for m in pipe.all_lanes()]
        return MemoryUsage(
            words=sum(m.allocator.used for m in lanes),
            direct_entries=sum(len(m.direct) for m in lanes),
            segments=sum(m.segment_count for m in lanes),
            permission_entries=sum(len(p.permissions) for p in targets),
            forwarding_entries=sum(p.forwarding_entries_used() for p in targets),
            code_slots=sum(len(slots) for p in targets for slots in p.code.values()),
        )


def _where(eu: int, lane: int, pipe: PipeState, pipeline: str) -> str:
    """``EU1 lane 0 of pipe 0``, with `` (egress)`` for the egress pipeline's memory."""
    return f"EU{eu} lane {lane} of pipe {pipe.index}{_egress(pipeline)}"


def _egress(pipeline: str) -> str:
    """What a message adds for the egress pipeline's memory (ingress: nothing)."""
    return " (egress)" if pipeline == "egress" else ""


def _free_tenant(memory: LaneMemory, tenant: int) -> None:
    for vaddr in memory.tenant_directs(tenant):
        memory.remove_direct(tenant, vaddr)
    table = memory.segments.get(tenant)
    if table is not None:
        for segment in table.all():
            memory.remove_segment(segment)
