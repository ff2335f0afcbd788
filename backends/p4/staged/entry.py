"""One table entry of the stage-structured program, as its control plane writes it.

Contract: an :class:`Entry` names its table, its keys (in the table's key order: an exact
value, a :class:`Ternary` value and mask, or a :class:`Prefix`), its action and the
action's parameters, and a priority among a ternary table's entries (lower first).
:mod:`.entries` makes them; :mod:`.writer` and :mod:`.bfrt` render them.
"""

from __future__ import annotations

from dataclasses import dataclass

from dpfc.isa import Register

from .plan import StagePlan


@dataclass(frozen=True)
class Ternary:
    value: int
    mask: int


@dataclass(frozen=True)
class Prefix:
    """An LPM key: the ``length`` top bits of ``value``."""

    value: int
    length: int


ANY = Ternary(0, 0)
Key = int | Ternary | Prefix


@dataclass(frozen=True)
class Entry:
    """One table entry; among a ternary table's entries the lower ``priority`` matches first."""

    table: str
    keys: tuple[tuple[str, Key], ...]
    action: str
    params: tuple[tuple[str, int], ...] = ()
    priority: int = 0


PC_MASK = 0xFFFF
IN_PACKET_PC = 0x8000  # @packet:0: a stage's in-packet bundle index 0


def name(register: Register) -> str:
    return f"{register.cls.name.lower()}{register.lane}"


def packet_pc(plan: StagePlan) -> Ternary:
    """The PCs of a stage's in-packet bundles (``0x8000 | index``: :mod:`.bundles` copies
    the one named into the unit's fields, so one entry serves them all)."""
    index_bits = (plan.packet_bundles - 1).bit_length()
    return Ternary(IN_PACKET_PC, PC_MASK & ~((1 << index_bits) - 1))


def pc_key(pc_field: str, slot: int) -> tuple[str, Key]:
    return (pc_field, Ternary(slot, PC_MASK))


class EntryError(ValueError):
    """A bundle this program cannot run (the message says which unit and why)."""
