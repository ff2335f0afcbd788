"""What every part of the ledger shares: the limits, the tables, the argument checks.

:class:`RequestChecks` holds the pipes' tables (:class:`~dpfc.switch.tables.PipeTables`),
the switch's port count and profile, and the checks every request makes before it changes
anything (pipes, tenants, EUs and lanes, pipelines, virtual addresses, words, ports); each
raises :class:`~dpfc.switch.control.SwitchRefused` and never changes state. The requests
themselves are the parts of :class:`~.requests.RequestLedger`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Generic

from dpfc.catalog import codes
from dpfc.switch.control import SwitchRefused
from dpfc.switch.lanes import WORD_SPACE
from dpfc.switch.tables import LaneT, PipeTables
from dpfc.target import TargetProfile

TENANT_LIMIT = 1 << 24  # the Geneve VNI
PIPELINES = ("ingress", "egress")  # each pipe's two sets of lane memories
INDEX_LIMIT = 1 << 16  # forwarding indices and multicast groups are 16-bit FWD values
WORD_MASK = 0xFFFF_FFFF

Pipes = int | Iterable[int] | None  # one pipe, some pipes, or (None) every pipe


class RequestChecks(Generic[LaneT]):
    """The pipes and ports of one switch, and the argument checks of every request.

    ``permission_entries`` is the permission table's capacity (the profile's unless a back
    end holds fewer); ``every_pipe``, when given, is why the switch takes requests for all
    of its pipes only (a back end that writes every pipe alike)."""

    def __init__(
        self,
        pipes: Sequence[PipeTables[LaneT]],
        ports: int,
        *,
        permission_entries: int | None = None,
        every_pipe: str | None = None,
    ) -> None:
        self.pipes = list(pipes)
        self.ports = ports
        self.profile: TargetProfile = self.pipes[0].profile
        self.permission_entries = (
            self.profile.permission_entries if permission_entries is None else permission_entries
        )
        self.every_pipe = every_pipe

    def targets(self, pipes: Pipes) -> list[PipeTables[LaneT]]:
        """The tables of the pipes a request names (DPF4016 for a pipe there is not)."""
        if pipes is None:
            return self.pipes
        wanted = [pipes] if isinstance(pipes, int) else list(pipes)
        for index in wanted:
            if not isinstance(index, int) or not 0 <= index < len(self.pipes):
                raise SwitchRefused(
                    codes.SWITCH_NO_SUCH_PIPE,
                    f"no pipe {index!r}: the switch has pipes 0..{len(self.pipes) - 1}",
                )
        if not wanted:
            raise SwitchRefused(codes.SWITCH_NO_SUCH_PIPE, "no pipe given")
        if self.every_pipe is not None and sorted(set(wanted)) != list(range(len(self.pipes))):
            raise SwitchRefused(
                codes.SWITCH_NO_SUCH_PIPE,
                f"a step for pipes {sorted(set(wanted))} of {len(self.pipes)}: {self.every_pipe}",
            )
        return [self.pipes[i] for i in dict.fromkeys(wanted)]

    @staticmethod
    def tenant(tenant: int) -> None:
        if not isinstance(tenant, int) or not 0 <= tenant < TENANT_LIMIT:
            raise SwitchRefused(
                codes.SWITCH_BAD_TENANT,
                f"tenant id {tenant!r} is not a 24-bit Geneve VNI (0..{TENANT_LIMIT - 1})",
            )

    def authorized(self, tenant: int, targets: list[PipeTables[LaneT]]) -> None:
        self.tenant(tenant)
        for pipe in targets:
            if tenant not in pipe.permissions:
                raise SwitchRefused(
                    codes.SWITCH_NO_PERMISSION,
                    f"tenant {tenant} is not authorized on pipe {pipe.index}",
                )

    def lane(self, eu: int, lane: int) -> None:
        p = self.profile
        if not isinstance(eu, int) or not 0 <= eu < p.num_eus:
            raise SwitchRefused(
                codes.SWITCH_NO_SUCH_LANE, f"no EU {eu!r}: {p.name} has EUs 0..{p.num_eus - 1}"
            )
        if not isinstance(lane, int) or not 0 <= lane < p.lanes:
            raise SwitchRefused(
                codes.SWITCH_NO_SUCH_LANE, f"no lane {lane!r}: {p.name} has lanes 0..{p.lanes - 1}"
            )

    @staticmethod
    def pipeline(pipeline: str) -> None:
        if pipeline not in PIPELINES:
            raise SwitchRefused(
                codes.SWITCH_NO_SUCH_PIPELINE,
                f"no pipeline {pipeline!r}: lane memories are ingress or egress",
            )

    @staticmethod
    def address(vaddr: int) -> None:
        if not isinstance(vaddr, int) or not 0 <= vaddr < WORD_SPACE:
            raise SwitchRefused(
                codes.SWITCH_BAD_ADDRESS, f"virtual address {vaddr!r} is not a 32-bit word address"
            )

    @staticmethod
    def word(value: int) -> None:
        if not isinstance(value, int) or not 0 <= value <= WORD_MASK:
            raise SwitchRefused(codes.SWITCH_VALUE_RANGE, f"value {value!r} is not a 32-bit word")

    def port(self, port: int) -> None:
        if not isinstance(port, int) or not 0 <= port < self.ports:
            raise SwitchRefused(
                codes.SWITCH_NO_SUCH_PORT,
                f"no port {port!r}: the switch has ports 0..{self.ports - 1}",
            )


def where(eu: int, lane: int, pipe: PipeTables[LaneT], pipeline: str) -> str:
    """``EU1 lane 0 of pipe 0``, with `` (egress)`` for the egress pipeline's memory."""
    return f"EU{eu} lane {lane} of pipe {pipe.index}{egress(pipeline)}"


def egress(pipeline: str) -> str:
    """What a message adds for the egress pipeline's memory (ingress: nothing)."""
    return " (egress)" if pipeline == "egress" else ""


__all__ = [
    "INDEX_LIMIT",
    "PIPELINES",
    "TENANT_LIMIT",
    "WORD_MASK",
    "Pipes",
    "RequestChecks",
    "egress",
    "where",
]
