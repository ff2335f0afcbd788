"""RAND's generator: xorshift32 (Marsaglia 2003), one state per pipeline of a pipe.

Contract: :data:`XORSHIFT32_SHIFTS` is the generator — three shifts, each XORed into the
state — and everything that draws RAND derives from it: :func:`next_state` and
:class:`Xorshift32` here (the simulator's prolog draws from one), the JIT's native prolog
(``dpfc.backends.jit``) and the P4 program's ``draw_random`` action (bmv2's v1model), so
a simulator, its JIT and a bmv2 switch seeded with the same state give the same words in
the same order. A state is never 0 (xorshift's fixed point): :func:`seed_state` turns a
seed of 0 into :data:`ZERO_SEED_STATE`, as every switch's control plane does.

Why xorshift32 and not Python's Mersenne Twister: it is three shifts and three XORs, which
a P4 action on bmv2 and on Tofino computes in one pass (paper §3.4 only asks for "a random
number"; docs/isa.md records the choice).
"""

from __future__ import annotations

import zlib
from typing import Protocol

MASK = 0xFFFF_FFFF
ZERO_SEED_STATE = 0x2545_F491  # any non-zero word: xorshift never leaves 0
# (direction, amount): ``state ^= state << 13``, then ``>> 17``, then ``<< 5`` (32 bits)
XORSHIFT32_SHIFTS: tuple[tuple[str, int], ...] = (("<<", 13), (">>", 17), ("<<", 5))


class RandomSource(Protocol):
    """What the prolog needs from a generator (``random.Random`` fits too)."""

    def getrandbits(self, k: int, /) -> int: ...


def seed_state(state: int) -> int:
    """The state a seed stores: its low 32 bits, and :data:`ZERO_SEED_STATE` for 0."""
    state &= MASK
    return state if state else ZERO_SEED_STATE


def next_state(state: int) -> int:
    """One xorshift32 step: the next state, which is also the word drawn."""
    for direction, amount in XORSHIFT32_SHIFTS:
        state ^= (state << amount) & MASK if direction == "<<" else state >> amount
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
        self.state = seed_state(state)

    def getrandbits(self, k: int, /) -> int:
        if not 0 < k <= 32:
            raise ValueError("RAND draws words of at most 32 bits")
        self.state = next_state(self.state)
        return self.state & ((1 << k) - 1)


__all__ = [
    "MASK",
    "XORSHIFT32_SHIFTS",
    "ZERO_SEED_STATE",
    "RandomSource",
    "Xorshift32",
    "next_state",
    "seed_state",
]
