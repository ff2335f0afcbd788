"""What every part of the control plane shares: limits, the error, argument checks.

:class:`ControlPlaneError` (a code and a message) is how every control-plane call refuses.
:class:`ControlPlaneBase` holds the switch's pipes, ports and profile and the checks all the
calls make before they change anything (pipes, tenants, EUs and lanes, pipelines, virtual
addresses, ports); they raise and never change state. The calls themselves are mixins of
:class:`~.control.ControlPlane`: :mod:`.control_permissions` (tenants' permission entries),
:mod:`.control_memory` (lane memory, translation and constants) and
:mod:`.control_tables` (code memory and steering tables).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from dpfc.target.driver import DriverError
from dpfc.target.profile import TargetProfile

from .memory import WORD_SPACE
from .state import PipeState

TENANT_LIMIT = 1 << 24  # the Geneve VNI
PIPELINES = ("ingress", "egress")  # each pipe's two sets of lane memories
INDEX_LIMIT = 1 << 16  # forwarding indices and multicast groups are 16-bit FWD values
WORD_MASK = 0xFFFF_FFFF


class ControlPlaneError(DriverError):
    """A control-plane request was refused; nothing was changed."""


class ControlPlaneBase:
    """The pipes and ports of one switch, and the argument checks of every call."""

    def __init__(self, pipes: Sequence[PipeState], ports: int) -> None:
        self.pipes = list(pipes)
        self.ports = ports
        self.profile: TargetProfile = self.pipes[0].profile
        # Bumped by every call that changes a table (ControlPlane.TABLE_CHANGES): what
        # dpfc.backends.jit compiled from the tables is stale once it moves.
        self.generation = 0

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


def _where(eu: int, lane: int, pipe: PipeState, pipeline: str) -> str:
    """``EU1 lane 0 of pipe 0``, with `` (egress)`` for the egress pipeline's memory."""
    return f"EU{eu} lane {lane} of pipe {pipe.index}{_egress(pipeline)}"


def _egress(pipeline: str) -> str:
    """What a message adds for the egress pipeline's memory (ingress: nothing)."""
    return " (egress)" if pipeline == "egress" else ""
