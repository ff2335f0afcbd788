"""Address translation as entries: a lane's direct map and its segments.

Contract: :func:`direct_entry` maps one virtual word of a tenant's lane memory to a word
of the lane register, :func:`segment_entry` a power-of-two segment aligned to its size
(virtually and physically). The register index is the XOR16 fold of A (:func:`fold16`)
XOR the entry's word, so each entry holds ``physical`` XOR the fold of ``virtual``; a
segment of another shape is refused with :class:`~.entry.EntryError`.
"""

from __future__ import annotations

from .egress import PHASE_KEY
from .entry import Entry, EntryError, Key, Ternary
from .plan import StagePlan

WORD = 0xFFFF_FFFF


def _phase(plan: StagePlan, pipeline: str) -> tuple[tuple[str, int], ...]:
    """The pipeline key of a program with an egress pass (:mod:`.egress`): 1 for egress."""
    if not plan.egress_pass:
        if pipeline != "ingress":
            raise EntryError("this program has no egress pipeline")
        return ()
    return ((PHASE_KEY, int(pipeline == "egress")),)


def direct_entry(
    plan: StagePlan,
    eu: int,
    lane: int,
    tenant: int,
    virtual: int,
    physical: int,
    pipeline: str = "ingress",
) -> Entry:
    """Direct mapping of ``virtual`` to word ``physical`` of the lane register. The register
    index is the XOR of A's two halves and the two translation words (XOR16), so the entry
    holds ``physical`` XOR A's fold: the index comes out as ``physical``."""
    keys = (("slot", tenant), *_phase(plan, pipeline), (f"r_a{lane}", virtual & WORD))
    word = physical ^ fold16(virtual)
    return Entry(plan.direct(eu, lane), keys, f"{plan.direct(eu, lane)}_hit", (("entry", word),))


def segment_entry(
    plan: StagePlan,
    eu: int,
    lane: int,
    tenant: int,
    virtual: int,
    size: int,
    physical: int,
    priority: int = 0,
    pipeline: str = "ingress",
) -> Entry:
    """A segment of ``size`` words (a power of two, at most 2^16) at ``virtual`` (a multiple
    of ``size``) mapped to ``physical`` (a multiple of ``size``): A's fold XOR the entry's
    word is ``physical`` plus A's offset in the segment."""
    if size & (size - 1) or not 0 < size <= 1 << 16:
        raise EntryError(f"a segment of {size} words: this program maps powers of two up to 65536")
    if virtual % size or physical % size:
        raise EntryError(f"a segment of {size} words must start at a multiple of its size")
    mask = WORD & ~(size - 1)
    keys: tuple[tuple[str, Key], ...] = (
        ("slot", tenant),
        *_phase(plan, pipeline),
        (f"r_a{lane}", Ternary(virtual, mask)),
    )
    word = physical ^ fold16(virtual)
    table = plan.segment(eu, lane)
    return Entry(table, keys, f"{table}_hit", (("entry", word),), priority)


def fold16(word: int) -> int:
    """XOR of a 32-bit word's two halves (what the XOR16 hash unit makes of it)."""
    return ((word >> 16) ^ word) & 0xFFFF


__all__ = ["direct_entry", "fold16", "segment_entry"]
