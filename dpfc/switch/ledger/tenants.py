"""The ledger's tenants: their permission-table entries, added, changed, removed.

:class:`TenantLedger` is a part of :class:`~.requests.RequestLedger`. ``authorize`` adds or
replaces a tenant's entry (app-id tokens, default DPF, unauthorized action, metadata,
privileged steering and recirculation), ``update_permissions`` changes fields of one, and
``deauthorize`` removes the tenant with everything it owns on the pipes (memory mappings,
forwarding entries, multicast groups, constants) except shared code memory, and says which
memory it freed. Each request checks every argument on every targeted pipe before it
changes anything.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import fields
from typing import Generic

from dpfc.catalog import codes
from dpfc.isa import PC
from dpfc.switch.control import SwitchRefused
from dpfc.switch.lanes import LaneMap
from dpfc.switch.tables import LaneT, Permissions, UnauthorizedAction

from .changes import LaneMappings
from .checks import PIPELINES, WORD_MASK, Pipes, RequestChecks


class TenantLedger(Generic[LaneT]):
    """The permission-table requests of :class:`~.requests.RequestLedger`."""

    def __init__(self, checks: RequestChecks[LaneT]) -> None:
        self.checks = checks

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
        pipes: Pipes = None,
    ) -> Permissions:
        """Add (or replace) the permission-table entry of ``tenant``; ``app_ids`` are tokens
        accepted besides ``app_id``."""
        checks = self.checks
        targets = checks.targets(pipes)
        checks.tenant(tenant)
        entry = self.entry(
            app_id, default_dpf, unauthorized, metadata, privileged, recirculate, app_ids
        )
        for pipe in targets:
            if (
                tenant not in pipe.permissions
                and len(pipe.permissions) >= checks.permission_entries
            ):
                raise SwitchRefused(
                    codes.SWITCH_PERMISSIONS_FULL,
                    f"the permission table of pipe {pipe.index} is full "
                    f"({checks.permission_entries} entries)",
                )
        for pipe in targets:
            pipe.permissions[tenant] = entry
        return entry

    def entry(
        self,
        app_id: int,
        default_dpf: PC | None,
        unauthorized: UnauthorizedAction | str,
        metadata: bool,
        privileged: bool,
        recirculate: bool,
        app_ids: Iterable[int] = (),
    ) -> Permissions:
        """The permission entry of these fields, each checked."""
        try:
            tokens = frozenset(app_ids)
        except TypeError:
            raise SwitchRefused(
                codes.SWITCH_BAD_APP_ID, f"app ids {app_ids!r} are not a set of ints"
            ) from None
        for token in (app_id, *tokens):
            if not isinstance(token, int) or not 0 <= token <= WORD_MASK:
                raise SwitchRefused(
                    codes.SWITCH_BAD_APP_ID, f"app id {token!r} does not fit in 32 bits"
                )
        slots = self.checks.profile.code_slots_per_stage
        if default_dpf is not None:
            if not isinstance(default_dpf, PC) or default_dpf.in_packet:
                raise SwitchRefused(
                    codes.SWITCH_BAD_DEFAULT_DPF,
                    f"a default DPF is an in-switch prolog slot (@switch:N), got {default_dpf}",
                )
            if not 0 <= default_dpf.index < slots:
                raise SwitchRefused(
                    codes.SWITCH_BAD_DEFAULT_DPF,
                    f"default DPF {default_dpf} is beyond the {slots} prolog slots",
                )
        try:
            action = UnauthorizedAction(unauthorized)
        except ValueError:
            raise SwitchRefused(
                codes.SWITCH_BAD_PERMISSION_FIELD,
                f"unauthorized action must be drop or pass, got {unauthorized!r}",
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

    def update_permissions(self, tenant: int, *, pipes: Pipes = None, **changes: object) -> None:
        """Change some fields of an existing entry (app_id, default_dpf, unauthorized, ...)."""
        targets = self.checks.targets(pipes)
        self.checks.authorized(tenant, targets)
        known = {f.name for f in fields(Permissions)}
        unknown = sorted(set(changes) - known)
        if unknown:
            raise SwitchRefused(
                codes.SWITCH_BAD_PERMISSION_FIELD,
                f"unknown permission field(s): {', '.join(unknown)}",
            )
        updated = []
        for pipe in targets:
            merged = {
                f.name: getattr(pipe.permissions[tenant], f.name) for f in fields(Permissions)
            }
            merged.update(changes)
            updated.append(
                self.entry(
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

    def deauthorize(self, tenant: int, *, pipes: Pipes = None) -> dict[int, list[LaneMappings]]:
        """Remove the tenant's permission entry and everything it owns on the pipes: memory
        mappings (the words are freed), forwarding entries, multicast groups and constants.
        Code memory is shared and stays. Returns, per pipe, the mappings freed on each lane
        that had some."""
        targets = self.checks.targets(pipes)
        self.checks.authorized(tenant, targets)
        freed: dict[int, list[LaneMappings]] = {}
        for pipe in targets:
            lanes = freed[pipe.index] = []
            for pipeline in PIPELINES:  # the ingress's lane memories and the egress's
                for eu, memories in enumerate(pipe.memories(pipeline)):
                    for lane, memory in enumerate(memories):
                        mine = _free_tenant(memory, tenant, pipeline, eu, lane)
                        if mine.directs or mine.segments:
                            lanes.append(mine)
            del pipe.permissions[tenant]
            pipe.forwarding.pop(tenant, None)
            pipe.multicast.pop(tenant, None)
            pipe.constants.pop(tenant, None)
        return freed

    def permissions(self, tenant: int, *, pipe: int = 0) -> Permissions | None:
        return self.checks.targets(pipe)[0].permissions.get(tenant)


def _free_tenant(memory: LaneMap, tenant: int, pipeline: str, eu: int, lane: int) -> LaneMappings:
    """Remove the tenant's mappings of one lane memory (its words freed); what they were."""
    directs = tuple(
        (vaddr, memory.direct[(tenant, vaddr)]) for vaddr in memory.tenant_directs(tenant)
    )
    for vaddr, _ in directs:
        memory.remove_direct(tenant, vaddr)
    table = memory.segments.get(tenant)
    segments = tuple(table.all()) if table is not None else ()
    for segment in segments:
        memory.remove_segment(segment)
    return LaneMappings(pipeline, eu, lane, directs, segments)


__all__ = ["TenantLedger"]
