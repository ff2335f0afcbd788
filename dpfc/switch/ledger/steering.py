"""The ledger's steering tables: forwarding entries, multicast groups, routes, the default port.

:class:`SteeringLedger` is a part of :class:`~.requests.RequestLedger`. The steering
tables are the tenants' forwarding entries and multicast groups (what ``FWD forward`` and
``FWD multicast`` name) and the operator's L3 routes and default port. Each request checks
every argument on every targeted pipe before it changes anything.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Generic

from dpfc.catalog import codes
from dpfc.switch.control import Destination, SwitchRefused
from dpfc.switch.tables import LaneT

from .checks import INDEX_LIMIT, Pipes, RequestChecks


class SteeringLedger(Generic[LaneT]):
    """The steering-table requests of :class:`~.requests.RequestLedger`."""

    def __init__(self, checks: RequestChecks[LaneT]) -> None:
        self.checks = checks

    def set_forwarding(
        self,
        tenant: int,
        index: int,
        destination: Destination,
        *,
        pipes: Pipes = None,
    ) -> None:
        """Virtual destination ``index`` of the tenant (what ``FWD forward, index`` names)."""
        targets = self.checks.targets(pipes)
        self.checks.authorized(tenant, targets)
        self.steering_index(index, "forwarding index")
        self.destination(destination)
        for pipe in targets:
            present = index in pipe.forwarding.get(tenant, {})
            if (
                not present
                and pipe.forwarding_entries_used() >= self.checks.profile.forwarding_entries
            ):
                raise SwitchRefused(
                    codes.SWITCH_BAD_FORWARDING,
                    f"the forwarding table of pipe {pipe.index} is full",
                )
        for pipe in targets:
            pipe.forwarding.setdefault(tenant, {})[index] = destination

    def remove_forwarding(self, tenant: int, index: int, *, pipes: Pipes = None) -> None:
        targets = self.checks.targets(pipes)
        self.checks.authorized(tenant, targets)
        for pipe in targets:
            if index not in pipe.forwarding.get(tenant, {}):
                raise SwitchRefused(
                    codes.SWITCH_NO_SUCH_MAPPING,
                    f"tenant {tenant} has no forwarding entry {index!r}",
                )
        for pipe in targets:
            del pipe.forwarding[tenant][index]

    def set_multicast_group(
        self,
        tenant: int,
        group: int,
        destinations: Sequence[Destination],
        *,
        pipes: Pipes = None,
    ) -> None:
        """Multicast group ``group`` of the tenant: one copy of the packet per destination."""
        targets = self.checks.targets(pipes)
        self.checks.authorized(tenant, targets)
        self.steering_index(group, "multicast group")
        if not destinations:
            raise SwitchRefused(
                codes.SWITCH_BAD_FORWARDING, "a multicast group needs at least one destination"
            )
        for destination in destinations:
            self.destination(destination)
        for pipe in targets:
            old = len(pipe.multicast.get(tenant, {}).get(group, ()))
            if (
                pipe.forwarding_entries_used() - old + len(destinations)
                > self.checks.profile.forwarding_entries
            ):
                raise SwitchRefused(
                    codes.SWITCH_BAD_FORWARDING,
                    f"the forwarding table of pipe {pipe.index} is full",
                )
        for pipe in targets:
            pipe.multicast.setdefault(tenant, {})[group] = tuple(destinations)

    def steering_index(self, index: int, what: str) -> None:
        if not isinstance(index, int) or not 0 <= index < INDEX_LIMIT:
            raise SwitchRefused(
                codes.SWITCH_BAD_FORWARDING, f"{what} {index!r} is not a 16-bit value"
            )

    def destination(self, destination: Destination) -> None:
        if not isinstance(destination, Destination):
            raise SwitchRefused(codes.SWITCH_BAD_FORWARDING, f"not a Destination: {destination!r}")
        if destination.port is None and destination.ip_dst is None:
            raise SwitchRefused(
                codes.SWITCH_BAD_FORWARDING, "a destination needs a port or an IPv4 address"
            )
        if destination.port is not None:
            self.checks.port(destination.port)
        if destination.ip_dst is not None and len(destination.ip_dst) != 4:
            raise SwitchRefused(
                codes.SWITCH_BAD_FORWARDING, "a destination's IPv4 address is 4 bytes"
            )
        if destination.eth_dst is not None and len(destination.eth_dst) != 6:
            raise SwitchRefused(
                codes.SWITCH_BAD_FORWARDING, "a destination's MAC address is 6 bytes"
            )

    def set_route(self, ip_dst: bytes, port: int, *, pipes: Pipes = None) -> None:
        """The operator's L3 route: packets to outer IPv4 ``ip_dst`` leave through ``port``."""
        targets = self.checks.targets(pipes)
        if not isinstance(ip_dst, bytes) or len(ip_dst) != 4:
            raise SwitchRefused(
                codes.SWITCH_BAD_FORWARDING, f"an IPv4 address is 4 bytes, got {ip_dst!r}"
            )
        self.checks.port(port)
        for pipe in targets:
            pipe.routes[ip_dst] = port

    def set_default_port(self, port: int | None, *, pipes: Pipes = None) -> None:
        targets = self.checks.targets(pipes)
        if port is not None:
            self.checks.port(port)
        for pipe in targets:
            pipe.default_port = port


__all__ = ["SteeringLedger"]
