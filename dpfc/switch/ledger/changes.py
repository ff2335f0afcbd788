"""What the ledger accepted, as a data plane is told of it.

Contract: :class:`~.protocol.LedgerControl` validates and records each protocol request in
the :class:`~.requests.RequestLedger` first; then it hands the accepted change — one of
the records below — to the back end's :class:`DataPlane`, which carries it to the switch
(the bmv2 and BF-RT back ends: table entries; the simulator, whose tables are the ledger's
records: nothing but a new table generation). Lane words, which only the data plane holds,
are written (:class:`WordsWritten`) and read through it at the physical addresses the
ledger translated.

Memory changes name what changed on the first pipe the request named: a back end that
writes several pipes at once writes every pipe alike (bmv2 has one; a BF-RT script's
tables are symmetric), and the ledger placed the same words on each of them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from dpfc.switch.control import Destination, Grant
from dpfc.switch.lanes import Segment
from dpfc.switch.tables import Permissions


@dataclass(frozen=True)
class LaneMappings:
    """One tenant's mappings on one lane memory: direct ``(vaddr, physical)`` words and
    segments (physical addresses within the pipeline's lane)."""

    pipeline: str
    eu: int
    lane: int
    directs: tuple[tuple[int, int], ...] = ()
    segments: tuple[Segment, ...] = ()


@dataclass(frozen=True)
class CodeWritten:
    stage: int
    slot: int
    word: bytes


@dataclass(frozen=True)
class CodeCleared:
    stage: int
    slot: int


@dataclass(frozen=True)
class Granted:
    """The tenant's permission entry, as requested (``grant``: app ids in their order) and
    as recorded (``entry``)."""

    tenant: int
    grant: Grant
    entry: Permissions


@dataclass(frozen=True)
class Revoked:
    """The tenant is gone, with the memory it had (on each lane that had some)."""

    tenant: int
    freed: tuple[LaneMappings, ...]


@dataclass(frozen=True)
class MemoryMapped:
    tenant: int
    mappings: LaneMappings


@dataclass(frozen=True)
class MemoryUnmapped:
    tenant: int
    mappings: LaneMappings


@dataclass(frozen=True)
class ForwardingSet:
    tenant: int
    index: int
    destination: Destination


@dataclass(frozen=True)
class MulticastSet:
    tenant: int
    group: int
    destinations: tuple[Destination, ...]


@dataclass(frozen=True)
class WordsWritten:
    """``values`` written at consecutive virtual addresses of one lane memory: the physical
    address of each, per pipe (pipe index, addresses). No table changes."""

    pipeline: str
    eu: int
    lane: int
    physical: tuple[tuple[int, tuple[int, ...]], ...]
    values: tuple[int, ...]


Change = (
    CodeWritten
    | CodeCleared
    | Granted
    | Revoked
    | MemoryMapped
    | MemoryUnmapped
    | ForwardingSet
    | MulticastSet
    | WordsWritten
)


class DataPlane(Protocol):
    """Where a :class:`~.protocol.LedgerControl` carries what its ledger accepted."""

    def apply(self, change: Change) -> None:
        """Carry out an accepted change (the ledger has recorded it)."""

    def read_words(
        self, pipe: int, pipeline: str, eu: int, lane: int, physical: Sequence[int]
    ) -> list[int]:
        """The words at these physical addresses of one lane memory of ``pipe``."""


__all__ = [
    "Change",
    "CodeCleared",
    "CodeWritten",
    "DataPlane",
    "ForwardingSet",
    "Granted",
    "LaneMappings",
    "MemoryMapped",
    "MemoryUnmapped",
    "MulticastSet",
    "Revoked",
    "WordsWritten",
]
