"""What the earliest-EU bounds rule out: DPF6027 and DPF6026.

Contract: :func:`from_bounds` takes a problem and its :class:`~dpfc.schedule.problem.Bounds`
and returns DPF6027 for each pinned access whose address or data cannot be ready in the
pinned EU (at the access, with the chain of what it waits for), else DPF6026 when the
bound itself exceeds the profile's EUs: at the step that comes last, with the whole chain
of operations, branches and path ends behind it (``critical_path`` of
:mod:`dpfc.schedule.problem.chain`), latest first, so the chain shown ends in the EU the
message claims. Both are bounds on the DPF as written (:data:`~.hints.AS_WRITTEN`).
"""

from __future__ import annotations

from dpfc.catalog import codes
from dpfc.diagnostics import Diagnostic, Note
from dpfc.schedule.diagnose.hints import AS_WRITTEN, more_eus, pinned, where
from dpfc.schedule.diagnose.source_terms import chain_notes
from dpfc.schedule.problem.bounds import INFEASIBLE, Bounds
from dpfc.schedule.problem.chain import critical_path, operand_path
from dpfc.schedule.problem.tree import Problem


def from_bounds(problem: Problem, bounds: Bounds) -> list[Diagnostic]:
    """DPF6027 for pinned accesses that cannot be ready in their EU; DPF6026 when the
    chain of dependent steps alone needs more EUs than the profile has."""
    profile = problem.profile
    out: list[Diagnostic] = []
    for op, ready in bounds.late_pins:
        if ready >= INFEASIBLE:
            continue  # it waits for an access that cannot run where it is pinned: said once
        info = problem.arrays[op.array or ""]
        assert info.pin is not None
        behind = chain_notes(problem, operand_path(problem, bounds, op.id))
        out.append(
            Diagnostic(
                codes.SCHEDULE_PIN_NOT_READY,
                f"array `{info.name}` is {pinned(problem, info.name)}, but this access can run "
                f"in EU{ready} at the earliest",
                op.span or problem.span,
                notes=(Note(f"`{info.name}` is declared here", info.span), *behind),
                hint=_late_pin_hint(info.name, info.pinned_by),
            )
        )
    if out or bounds.min_eus <= profile.num_eus:
        return out
    notes = chain_notes(problem, critical_path(problem, bounds))
    last = f"EU{bounds.min_eus - 1}"
    return [
        Diagnostic(
            codes.SCHEDULE_DEPENDENCE_CHAIN,
            f"{where(problem)} as written needs at least {bounds.min_eus} EUs but "
            f"{profile.name} has {profile.num_eus}: its longest chain of dependent steps ends "
            f"in {last}",
            (notes[0].span if notes else None) or problem.span,
            notes=(*notes, AS_WRITTEN),
            hint=more_eus(profile, bounds.min_eus),
        )
    ]


def _late_pin_hint(array: str, pinned_by: str) -> str:
    if pinned_by == "pin":
        return (
            "its address (and data) come from values computed in earlier EUs; pin the array "
            "to a later EU, or remove the @pin"
        )
    return (
        f"`{array}` is shared with DPF `{pinned_by}`, scheduled first, whose access bound it "
        "there; pin it with @pin to an EU that both accesses can reach"
    )
