"""Words the scheduler's diagnostics share: the hints, a DPF's name, a pin, "as written".

Contract: pure functions of a problem or profile that return text; no diagnostic is made
here (:mod:`.structure`, :mod:`.chains` and :mod:`.solver` make them).
"""

from __future__ import annotations

from collections.abc import Callable

from dpfc.diagnostics import Note
from dpfc.schedule.problem.tree import Problem
from dpfc.target import BUILTIN_PROFILES, TargetProfile

# The note every bound and proof about a DPF's problem carries: it is about this form.
AS_WRITTEN = Note(
    "this holds for the DPF as written and optimised, not for every equivalent program: "
    'the same computation written another way may need fewer (docs/scheduling.md, "What '
    'the bounds mean")'
)


def hint(profile: TargetProfile, fits: Callable[[TargetProfile], bool], lacking: str) -> str:
    """What to do about a DPF too big for ``profile``: split it, or target a built-in
    profile that ``fits`` (only one that has enough: named when there is one, else the
    hint says none has ``lacking``). Only profiles with at least ``profile``'s lanes are
    named: the DPF may use them all, so one with fewer (tofino2_fit for a DPF of tofino1)
    could refuse it for another reason."""
    better = [
        p.name
        for p in BUILTIN_PROFILES.values()
        if p.name != profile.name and p.lanes >= profile.lanes and fits(p)
    ]
    if better:
        targets = " or ".join(f"--target {name}" for name in better)
        where = f"target a profile with {lacking} ({targets})"
    else:
        where = f"no built-in profile has {lacking}"
    return f"split the DPF in two with `chain`, {where}, or change the @pin of an array"


def memory_units_hint(profile: TargetProfile, needed: int) -> str:
    """:func:`hint` for a path with ``needed`` memory accesses (one per EU and lane)."""
    return hint(profile, lambda p: p.num_eus * p.lanes >= needed, f"{needed} memory units")


def more_eus(profile: TargetProfile, needed: int | None = None) -> str:
    """:func:`hint` for a DPF that needs ``needed`` EUs (None: more than ``profile`` has)."""
    least = profile.num_eus + 1 if needed is None else needed
    return hint(profile, lambda p: p.num_eus >= least, f"{least} EUs or more")


def where(problem: Problem) -> str:
    return f"DPF `{problem.name}`"


def pinned(problem: Problem, array: str) -> str:
    """How an array got its place: ``pinned to EU1 lane 0`` or ``bound to ... by DPF `g```."""
    info = problem.arrays[array]
    assert info.pin is not None
    place = f"EU{info.pin[0]} lane {info.pin[1]}"
    if info.pinned_by == "pin":
        return f"pinned to {place}"
    return f"bound to {place} by DPF `{info.pinned_by}`"
