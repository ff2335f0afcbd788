"""The control plane's code memory and steering tables.

:class:`TableControl` is a mixin of :class:`~.control.ControlPlane`. Code arrives as
code-memory words, decoded by :func:`dpfc.encoding.decode_slot` (every ISA rule of the
stage), into a slot of a stage, optionally limited to some tenants. The steering tables
are the tenants' forwarding entries and multicast groups (what ``FWD forward`` and ``FWD
multicast`` name) and the operator's L3 routes and default port. Each call checks every
argument on every targeted pipe before it changes anything.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from dpfc.encoding import DecodeError, decode_slot, stage_kind
from dpfc.isa.bundle import EPILOG_STAGE, PROLOG_STAGE, StageBundle, stage_name

from .control_common import INDEX_LIMIT, ControlPlaneBase, ControlPlaneError
from .state import CodeEntry, Destination


class TableControl(ControlPlaneBase):
    """The code-memory and steering-table calls of :class:`~.control.ControlPlane`."""

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
