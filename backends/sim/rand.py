"""RAND's generator: xorshift32 (Marsaglia 2003, shifts 13, 17, 5), one state per pipe.

Contract: :class:`Xorshift32` is the generator the prolog's RAND selector draws from, the
same one the generated P4 program computes (``draw_random`` in
:mod:`dpfc.backends.p4.program`), so a simulator and a bmv2 switch seeded with the same
state give the same words in the same order. A state is never 0 (xorshift's fixed point):
seeding with 0 stores :data:`ZERO_SEED_STATE`, as the switch's control plane does.

Why xorshift32 and not Python's Mersenne Twister: it is three shifts and three XORs, which
a P4 action on bmv2 and on Tofino computes in one pass (paper §3.4 only asks for "a random
number"; docs/isa.md records the choice).
"""

from __future__ import annotations

import zlib
from typing import Protocol

MASK = 0xFFFF_FFFF
ZERO_SEED_STATE = 0x2545_F491  # any non-zero word: xorshift never leaves 0


class RandomSource(Protocol):
    """What the prolog needs from a generator (``random.Random`` fits too)."""

    def getrandbits(self, k: int, /) -> int: ...


def next_state(state: int) -> int:
    """One xorshift32 step: the next state, which is also the word drawn."""
    state ^= (state << 13) & MASK
    state ^= state >> 17
    state ^= (state << 5) & MASK
    return state


class Xorshift32:
    """One pipe's RAND generator: each draw advances the state and returns it."""

    def __init__(self, state: int) -> None:
        self.state = ZERO_SEED_STATE
        self.seed(state)

    @classmethod
    def from_text(cls, text: str) -> Xorshift32:
        """A reproducible state from a name (the simulator seeds each pipe this way)."""
        return cls(zlib.crc32(text.encode()))

    def seed(self, state: int) -> None:
        state &= MASK
        self.state = state if state else ZERO_SEED_STATE

    def getrandbits(self, k: int, /) -> int:
        if not 0 < k <= 32:
            raise ValueError("RAND draws words of at most 32 bits")
        self.state = next_state(self.state)
        return self.state & ((1 << k) - 1)


__all__ = ["MASK", "ZERO_SEED_STATE", "RandomSource", "Xorshift32", "next_state"]
