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

:class:`ControlPlane` gathers the calls of :mod:`.control_permissions` (tenants),
:mod:`.control_memory` (lane memory and translation) and :mod:`.control_tables` (code
memory and steering tables) over the checks of :mod:`.control_common`, and reads the
counters and the memory in use back.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from dataclasses import dataclass, fields, replace
from typing import Any

from .control_common import (
    INDEX_LIMIT,
    PIPELINES,
    TENANT_LIMIT,
    WORD_MASK,
    ControlPlaneError,
)
from .control_memory import MemoryControl
from .control_permissions import PermissionControl
from .control_tables import TableControl
from .state import TenantStats

__all__ = [
    "INDEX_LIMIT",
    "PIPELINES",
    "TENANT_LIMIT",
    "WORD_MASK",
    "ControlPlane",
    "ControlPlaneError",
    "MemoryUsage",
]


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


class ControlPlane(PermissionControl, MemoryControl, TableControl):
    """Operator API of one switch (its pipes' states). Obtain it as ``switch.control``."""

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


# The calls that change a table the data path reads (permissions, translation, constants,
# code memory, steering tables, routes). write_memory is not one: it changes words in place,
# which compiled code reads where they are. tests/test_jit.py checks that every public
# method of ControlPlane is here or in READS.
TABLE_CHANGES = (
    "authorize",
    "update_permissions",
    "set_app_token",
    "set_default_dpf",
    "deauthorize",
    "map_segment",
    "map_null_segment",
    "map_direct",
    "map_direct_range",
    "unmap_direct",
    "unmap_segment",
    "set_constant",
    "install_code",
    "remove_code",
    "set_forwarding",
    "remove_forwarding",
    "set_multicast_group",
    "set_route",
    "set_default_port",
)
READS = ("stats", "usage", "permissions", "code_at", "read_memory", "write_memory")


def _changes_tables(method: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(method)
    def counted(self: ControlPlane, *args: Any, **kwargs: Any) -> Any:
        self.generation += 1
        return method(self, *args, **kwargs)

    return counted


for _name in TABLE_CHANGES:
    setattr(ControlPlane, _name, _changes_tables(getattr(ControlPlane, _name)))
