"""One table entry of the stage-structured program, as its control plane writes it.

Contract: an :class:`Entry` names its table, its keys (in the table's key order: an exact
value, a :class:`Ternary` value and mask, or a :class:`Prefix`), its action and the
action's parameters, and a priority among a ternary table's entries (lower first).
:mod:`.entries` makes them; :mod:`.writer` and :mod:`.bfrt` render them.
"""

from __future__ import annotations

from dataclasses import dataclass


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


class EntryError(ValueError):
    """A bundle this program cannot run (the message says which unit and why)."""
