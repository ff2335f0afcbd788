"""Lane memory: a lane's physical words over the control plane's records of it.

:class:`LaneMemory` is a :class:`~dpfc.switch.LaneMap` (the first-fit allocation and the
tenants' direct and segment mappings, which :mod:`dpfc.switch.ledger` validates and
records) with the lane's words, which the data path reads and writes through
:meth:`~dpfc.switch.LaneMap.translate`. Words are zeroed when they are allocated, so
nothing written by one tenant is ever read by the next owner of the word.
"""

from __future__ import annotations

from array import array

from dpfc.switch import LaneMap


class LaneMemory(LaneMap):
    """Physical memory and translation tables of one (EU, lane) of one pipe."""

    def __init__(self, words: int, direct_capacity: int, segment_capacity: int) -> None:
        super().__init__(words, direct_capacity, segment_capacity)
        # 32-bit words in one buffer, allocated on first use (most lanes stay empty): an
        # array('I') rather than a list so that native code (dpfc.backends.jit) reads and
        # writes the same words in place (word_address)
        self._words: array[int] | None = None

    @property
    def words(self) -> array[int]:
        if self._words is None:
            self._words = array("I", bytes(4 * self.allocator.capacity))
        return self._words

    def word_address(self) -> int:
        """The address of physical word 0 (the buffer never moves once allocated)."""
        return self.words.buffer_info()[0]

    def take(self, size: int) -> int:
        """Allocate ``size`` words, zeroed (the ledger checked that they are free)."""
        start = super().take(size)
        words = self.words
        words[start : start + size] = array("I", bytes(4 * size))
        return start


__all__ = ["LaneMemory"]
