"""The request ledger: one switch's tables and every rule a control request must pass.

Contract: :class:`RequestLedger` is composed of its parts, which share one
:class:`~.checks.RequestChecks` (the pipes' tables, the port count, the common checks):
``tenants`` (:class:`~.tenants.TenantLedger`: permission entries), ``memory``
(:class:`~.memory.MemoryLedger`: lane memory, first-fit allocation, translation,
constants), ``arrays`` (:class:`~.arrays.ArrayLedger`: an image's arrays, whole),
``code`` (:class:`~.code.CodeLedger`: code memory) and ``steering``
(:class:`~.steering.SteeringLedger`: forwarding, multicast, routes). Each request
validates every argument on every pipe it names and raises
:class:`~dpfc.switch.control.SwitchRefused` without changing anything, or records the
change in the tables.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Generic

from dpfc.switch.tables import LaneT, PipeTables
from dpfc.target import TargetProfile

from .arrays import ArrayLedger
from .checks import RequestChecks
from .code import CodeLedger
from .memory import MemoryLedger
from .steering import SteeringLedger
from .tenants import TenantLedger


class RequestLedger(Generic[LaneT]):
    """The tables of a switch's ``pipes`` and the requests that change them (module
    docstring). ``ports``: the switch's port count; ``permission_entries`` and
    ``every_pipe``: see :class:`~.checks.RequestChecks`."""

    def __init__(
        self,
        pipes: Sequence[PipeTables[LaneT]],
        ports: int,
        *,
        permission_entries: int | None = None,
        every_pipe: str | None = None,
    ) -> None:
        self.checks = RequestChecks(
            pipes, ports, permission_entries=permission_entries, every_pipe=every_pipe
        )
        self.tenants = TenantLedger(self.checks)
        self.memory = MemoryLedger(self.checks)
        self.arrays = ArrayLedger(self.memory)
        self.code = CodeLedger(self.checks)
        self.steering = SteeringLedger(self.checks)

    @property
    def pipes(self) -> list[PipeTables[LaneT]]:
        return self.checks.pipes

    @property
    def profile(self) -> TargetProfile:
        return self.checks.profile


__all__ = ["RequestLedger"]
