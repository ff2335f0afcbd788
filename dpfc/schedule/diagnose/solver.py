"""What the solver found: DPF6020 (proven not to fit), DPF6024 (undecided), DPF6028 (guard).

Contract: :func:`from_core` turns the keys of an unsat core of the Z3 model at the
profile's EU count (:meth:`dpfc.schedule.z3.model.Z3Model.core`: the constraint groups that
cannot hold together) into DPF6020, at the source of the first group it names — the path
whose epilog needs its values (at the statement the path ends with), the access to a
pinned array, an access that must avoid the lanes of the module's other arrays — with a
note per group; an empty core (the dependences and registers alone) shows the longest chain
of dependent steps, the one that leaves the least room. :func:`undecided` (DPF6024) says
which EU counts were left open and that nothing is proven; :func:`guard_fired` (DPF6028)
that the wall-clock guard stopped the scheduler. Only an unsat answer is called a proof.
"""

from __future__ import annotations

from collections.abc import Sequence

from dpfc.catalog import codes
from dpfc.diagnostics import Diagnostic, Note, Span
from dpfc.schedule.diagnose.hints import AS_WRITTEN, more_eus, pinned, where
from dpfc.schedule.diagnose.source_terms import chain_notes, path_end, path_words, value_words
from dpfc.schedule.problem.bounds import compute_bounds
from dpfc.schedule.problem.chain import critical_path
from dpfc.schedule.problem.tree import Exit, Kind, Problem

MAX_VALUES = 3  # values an epilog note names before "and N more"
# The hint when no profile with more EUs was found to fit the DPF either.
NO_WIDER = (
    "split the DPF in two with `chain`, or do less on its busiest path (more EUs were not "
    "found to help); change the @pin of an array"
)


def _values(problem: Problem, ids: Sequence[int]) -> str:
    words = [value_words(problem, op_id)[0] for op_id in dict.fromkeys(ids)]
    if len(words) > MAX_VALUES:
        return ", ".join(words[:MAX_VALUES]) + f" and {len(words) - MAX_VALUES} more"
    if len(words) > 1:
        return ", ".join(words[:-1]) + " and " + words[-1]
    return words[0] if words else "nothing"


def _core_notes(problem: Problem, key: str) -> tuple[list[Note], Span | None]:
    """The notes for one group of an unsat core, and the span a diagnostic led by this
    group points at."""
    profile = problem.profile
    kind, _, name = key.partition(":")
    if kind == "pin":
        notes = [Note(f"array `{name}` is {pinned(problem, name)}", problem.arrays[name].span)]
        accesses = [o for o in problem.ops if o.kind is Kind.MEM and o.array == name]
        if accesses and accesses[0].span is not None:
            notes.append(Note(f"`{name}` is accessed here", accesses[0].span))
            return notes, accesses[0].span
        return notes, None
    if kind == "exit":
        leaf = int(name)
        end = problem.nodes[leaf].end
        assert isinstance(end, Exit)
        values = list(end.push) + ([end.steer_value] if end.steer_value is not None else [])
        ends, span = path_end(problem, leaf)
        registers = f"A0..A{profile.lanes - 1}, B0..B{profile.lanes - 1}"
        count = len(dict.fromkeys(values))
        return [
            Note(
                f"{path_words(problem, leaf)} {ends}, which needs {count} "
                f"value{'s' if count != 1 else ''} in registers when it ends "
                f"({_values(problem, values)}); {profile.name} has {profile.registers} "
                f"registers ({registers})",
                span,
            )
        ], span
    if kind == "reserved":
        notes = [
            Note(
                f"EU{eu} lane {lane} holds array `{array}` of another DPF of the module "
                f"({pinned(problem, array)}), so no array of this DPF can go there",
                problem.arrays[array].span,
            )
            for (eu, lane), array in sorted(problem.reserved.items())
        ]
        free = [
            o
            for o in problem.ops
            if o.kind is Kind.MEM
            and (info := problem.arrays.get(o.array or "")) is not None
            and info.pin is None
        ]
        return notes, free[0].span if free else None
    if kind == "immediates":
        return [
            Note(f"a bundle holds at most {profile.immediates_per_bundle} distinct immediates")
        ], None
    if kind == "packet-bundles":
        return [
            Note(
                f"in-packet code carries at most {profile.packet_bundles_per_stage} bundles per EU"
            )
        ], None
    return [], None


def from_core(problem: Problem, core: Sequence[str] | None, needed_eus: int | None) -> Diagnostic:
    """DPF6020 from the keys of an unsat core (see :class:`~dpfc.schedule.z3.model.Z3Model`):
    Z3 proved that nothing fits. ``core`` is None when the core itself could not be
    computed within the resource limit (the proof stands; its explanation is missing)."""
    profile = problem.profile
    notes: list[Note] = []
    primary: Span | None = None
    for key in core or ():
        found, span = _core_notes(problem, key)
        notes += found
        primary = primary or span
    if not core:
        if core is None:
            said = (
                "Z3 proved that no placement exists, but could not name the conflicting "
                "constraints within its resource limit"
            )
        else:
            said = (
                "the dependences between its operations, the register classes and the "
                f"{profile.registers} registers alone rule out every placement"
            )
        chain = chain_notes(problem, critical_path(problem, compute_bounds(problem)))
        if chain:
            said += "; its longest chain of dependent steps leaves the least room:"
        notes += [Note(said), *chain]
        primary = primary or next((n.span for n in chain if n.span is not None), None)
        primary = primary or _busiest_path_end(problem)
    if needed_eus is not None:
        notes.append(
            Note(f"as written, it would need {needed_eus} EUs (found on a profile with more EUs)")
        )
    notes.append(AS_WRITTEN)
    return Diagnostic(
        codes.SCHEDULE_DOES_NOT_FIT,
        f"{where(problem)} as written does not fit in the {profile.num_eus} EUs x "
        f"{profile.lanes} lanes of {profile.name} (proven)",
        primary or problem.span,
        notes=tuple(notes),
        hint=more_eus(profile, needed_eus) if needed_eus is not None else NO_WIDER,
    )


def _busiest_path_end(problem: Problem) -> Span | None:
    """Where the path with the most operations and epilog values ends."""

    def work(leaf: int) -> int:
        end = problem.nodes[leaf].end
        assert isinstance(end, Exit)
        return sum(len(problem.nodes[n].ops) for n in problem.path(leaf)) + len(end.push)

    leaves = problem.leaves()
    if not leaves:
        return None
    return path_end(problem, max(leaves, key=lambda leaf: (work(leaf), -leaf)))[1]


def undecided(problem: Problem, counts: Sequence[int], rlimit: int) -> Diagnostic:
    """DPF6024: Z3 answered "unknown" (its resource limit) and the greedy scheduler found no
    schedule: neither a schedule nor a proof that none exists."""
    listed = ", ".join(str(k) for k in sorted(set(counts))) or "none"
    return Diagnostic(
        codes.SCHEDULE_UNDECIDED,
        f"the scheduler could neither place {where(problem)} on {problem.profile.name} nor "
        f"prove that it does not fit, within its resource limit of {rlimit:,} Z3 units per "
        "question",
        problem.span,
        notes=(
            Note(f"undecided EU counts: {listed}; the greedy scheduler found no schedule"),
            Note("this is not a proof that the DPF does not fit"),
        ),
        hint="raise the limit with --effort (e.g. --effort 4), or simplify the DPF",
    )


def guard_fired(problem: Problem, seconds: float, decided: Sequence[str] = ()) -> Diagnostic:
    """DPF6028: the wall-clock guard stopped the scheduler (nothing else depends on it);
    ``decided``: what the scheduler had decided by then."""
    return Diagnostic(
        codes.SCHEDULE_TIMEOUT,
        f"scheduling {where(problem)} was stopped by the wall-clock guard after "
        f"{seconds:.1f} s (--timeout)",
        problem.span,
        notes=(
            *(Note(f"when it stopped: {line}") for line in decided),
            Note(
                "the scheduler's answers depend only on its resource limits; the guard stops "
                "it and never changes which schedule is chosen"
            ),
        ),
        hint="raise --timeout (or use --timeout 0 for no guard)",
    )
