"""The control plane's tenants: their permission-table entries, added, changed, removed.

:class:`PermissionControl` is a mixin of :class:`~.control.ControlPlane`. ``authorize`` adds
or replaces a tenant's entry (app-id tokens, default DPF, unauthorized action, metadata,
privileged steering and recirculation), ``update_permissions`` changes fields of one, and
``deauthorize`` removes the tenant with everything it owns on the pipes (memory mappings,
forwarding entries, multicast groups, constants, counters) except shared code memory.
Each call checks every argument on every targeted pipe before it changes anything.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import fields

from dpfc.isa.bundle import PC

from .control_common import WORD_MASK, ControlPlaneBase, ControlPlaneError
from .memory import LaneMemory
from .state import Permissions, UnauthorizedAction


class PermissionControl(ControlPlaneBase):
    """The permission-table calls of :class:`~.control.ControlPlane`."""

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


def _free_tenant(memory: LaneMemory, tenant: int) -> None:
    for vaddr in memory.tenant_directs(tenant):
        memory.remove_direct(tenant, vaddr)
    table = memory.segments.get(tenant)
    if table is not None:
        for segment in table.all():
            memory.remove_segment(segment)
