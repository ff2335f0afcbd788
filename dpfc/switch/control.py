"""The control protocol: the one interface through which dpfc changes a SwitchVM switch.

:class:`SwitchControl` is what :mod:`dpfc.deploy` needs from a target to install an image:
code-memory words (bytes: a switch decodes or forwards them, it never receives Python
bundles), memory mappings, permission entries, steering entries and memory reads and
writes. Every back end implements it — the simulator (``dpfc.backends.sim.SimControl``),
bmv2 (``dpfc.backends.p4.bmv2_control.Bmv2Control``) and the BF-RT script writer — so an
image deploys to any of them the same way; all of them validate through one
:class:`~dpfc.switch.ledger.RequestLedger`, so they refuse the same requests.

Contract of every method: it validates first and raises :class:`SwitchRefused` (a DPFxxxx
code and a message) without changing anything; ``pipes`` names the pipes to change (all
given, none skipped).

Ingress and egress (docs/isa.md §6 item 20): code memory is one (stage, slot) address space
for both pipelines of a pipe — a target that holds it twice (ingress and egress tables)
writes every word into both, so ``write_code`` / ``clear_code`` do not name a pipeline.
Memory is per pipeline: the memory calls take ``pipeline`` (``"ingress"``, the default, or
``"egress"``), naming the lane memories of that pipeline, which are distinct state.
Permission entries, app ids, constants, forwarding and multicast serve both pipelines. One call is one atomic update with respect to packets: an install
is atomic for packets because :mod:`dpfc.deploy` writes a DPF's prolog after everything
it reaches (paper §3.6.2, "replacing the prolog only after all other stages of a DPF have
been stored in the switch").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from dpfc.target import TargetProfile


class SwitchRefused(Exception):
    """A switch refused a request; nothing was changed."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{message} [{code}]")
        self.code = code
        self.message = message


@dataclass(frozen=True)
class Destination:
    """A steering destination: where virtual destination #i (or a multicast copy) of a
    tenant really goes. The packet leaves through ``port`` (or the port the pipe's route for
    the new IPv4 destination gives, when ``port`` is None); ``ip_dst`` and ``eth_dst``, when
    set, rewrite the outer headers. The DPF only names the index."""

    port: int | None = None
    ip_dst: bytes | None = None
    eth_dst: bytes | None = None


@dataclass(frozen=True)
class Grant:
    """A permission-table entry (paper §3.3): the app-id tokens the tenant's packets may
    carry (the first is the primary), the capability bits, and the default DPF's prolog
    slot (run on packets that name none)."""

    app_ids: tuple[int, ...]
    metadata: bool = False
    privileged: bool = False
    recirculate: bool = False
    default_dpf: int | None = None
    unauthorized: str = "drop"  # what happens to a packet the tenant may not run: drop|pass


@runtime_checkable
class SwitchControl(Protocol):
    """A SwitchVM switch, as dpfc's deployer changes it (see the module docstring)."""

    @property
    def profile(self) -> TargetProfile: ...

    @property
    def pipe_count(self) -> int: ...

    @property
    def pipelines(self) -> tuple[str, ...]:
        """The pipelines that run DPFs: ``("ingress", "egress")``, or the ingress only."""
        ...

    def write_code(self, stage: int, slot: int, word: bytes, pipes: Sequence[int]) -> None:
        """Store the code-memory word of ``stage`` (0 prolog, 1..n EUs, 31 epilog)."""

    def clear_code(self, stage: int, slot: int, pipes: Sequence[int]) -> None: ...

    def grant(self, tenant: int, grant: Grant, pipes: Sequence[int]) -> None:
        """Add or replace the tenant's permission entry."""

    def revoke(self, tenant: int, pipes: Sequence[int]) -> None:
        """Remove the tenant's entry and everything it owns (memory, steering)."""

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
        """Allocate virtual words [0, size) of (tenant, EU, lane) of ``pipeline``'s lane
        memories, zeroed: ``direct`` maps each index exactly, ``segment`` with aligned
        power-of-two segments."""

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
    ) -> None: ...

    def set_forwarding(
        self, tenant: int, index: int, destination: Destination, pipes: Sequence[int]
    ) -> None: ...

    def set_multicast(
        self, tenant: int, group: int, destinations: Sequence[Destination], pipes: Sequence[int]
    ) -> None: ...

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
    ) -> list[int]: ...

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
    ) -> None: ...


__all__ = ["Destination", "Grant", "SwitchControl", "SwitchRefused"]
