"""Why a DPF does not fit: diagnostics DPF6020-6049 for the scheduler's failures.

Two sources. :func:`precheck` finds the common structural conflicts without a solver and
names them precisely (two arrays that need the same lane of the same EU on one path, more
memory operations on a path than the machine has memory units, more paths than in-packet
code can carry). :func:`from_core` turns the unsat core of the Z3 model at the profile's
EU count (:meth:`dpfc.schedule.z3.model.Z3Model.core`: the constraint groups that cannot
hold together) into notes that point at the source lines of those constraints.

Codes: DPF6020 does not fit (from the core); DPF6021 two arrays need one (EU, lane) on one
path; DPF6022 a path has more memory operations than memory units; DPF6023 more paths than
in-packet epilogs; DPF6024 neither a schedule nor a proof that none exists within the
resource limit (undecided: nothing is claimed); DPF6026 the dependence chain alone needs
more EUs than the profile has; DPF6027 a pinned array's access cannot be ready in its EU;
DPF6028 the wall-clock guard (--timeout) stopped the scheduler.

Only what was proven is said to be proven: DPF6020 comes from an unsat answer (its core),
DPF6024 from "unknown" answers and says which EU counts were left open.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import combinations

from dpfc.catalog import codes
from dpfc.diagnostics import Diagnostic, Note, Span
from dpfc.schedule.problem.bounds import Bounds, critical_chain
from dpfc.schedule.problem.tree import Kind, Operation, Problem
from dpfc.target import BUILTIN_PROFILES, TargetProfile


def hint(profile: TargetProfile, fits: Callable[[TargetProfile], bool], lacking: str) -> str:
    """What to do about a DPF too big for ``profile``: split it, or target a built-in
    profile that ``fits`` (only one that has enough: named when there is one, else the
    hint says none has ``lacking``)."""
    better = [p.name for p in BUILTIN_PROFILES.values() if p.name != profile.name and fits(p)]
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


def _where(problem: Problem) -> str:
    return f"DPF `{problem.name}`"


def _path_arrays(problem: Problem, leaf: int) -> dict[str, Span | None]:
    """Arrays accessed on the path to ``leaf`` -> the span of one access."""
    out: dict[str, Span | None] = {}
    for node in problem.path(leaf):
        for op_id in problem.nodes[node].ops:
            op = problem.ops[op_id]
            if op.kind is Kind.MEM and op.array is not None:
                out.setdefault(op.array, op.span)
    return out


def precheck(problem: Problem) -> list[Diagnostic]:
    """Conflicts visible without a solver (each stated once, with both locations)."""
    out: list[Diagnostic] = []
    profile = problem.profile
    arrays: dict[str, Span | None] = {}
    for leaf in problem.leaves():
        for name, span in _path_arrays(problem, leaf).items():
            arrays.setdefault(name, span)
    # Two arrays in one lane would share its virtual address space (the linker's DPF7004),
    # on one path or not.
    for a, b in combinations(sorted(arrays), 2):
        pa, pb = problem.arrays[a].pin, problem.arrays[b].pin
        if pa is None or pa != pb:
            continue
        notes = [
            Note(f"array `{a}` is {_pinned(problem, a)}", problem.arrays[a].span),
            Note(f"array `{b}` is {_pinned(problem, b)}", problem.arrays[b].span),
            Note(f"`{a}` is accessed here", arrays[a]),
            Note(f"`{b}` is accessed here", arrays[b]),
        ]
        out.append(
            Diagnostic(
                codes.SCHEDULE_PIN_CONFLICT,
                f"array `{a}` and array `{b}` both need EU{pa[0]} lane {pa[1]} in "
                f"{_where(problem)}, but a lane's memory holds one array (their addresses "
                "would overlap)",
                arrays[b] or problem.span,
                notes=tuple(notes),
                hint="pin one of the arrays to another EU or lane",
            )
        )
    # ... nor in the lane of an array another DPF of the module uses (Problem.reserved).
    for name in sorted(arrays):
        pin = problem.arrays[name].pin
        other = problem.reserved.get(pin) if pin is not None else None
        if pin is None or other is None or other == name:
            continue
        out.append(
            Diagnostic(
                codes.SCHEDULE_PIN_CONFLICT,
                f"array `{name}` and array `{other}` of module `{problem.module}` both need "
                f"EU{pin[0]} lane {pin[1]}, but a lane's memory holds one array of a tenant "
                "(their addresses would overlap)",
                arrays[name] or problem.span,
                notes=(
                    Note(f"array `{name}` is {_pinned(problem, name)}", problem.arrays[name].span),
                    Note(
                        f"array `{other}` is {_pinned(problem, other)}; another DPF of the "
                        "module accesses it",
                        problem.arrays[other].span,
                    ),
                ),
                hint="pin one of the arrays to another EU or lane",
            )
        )
    for leaf in problem.leaves():
        accesses = [
            problem.ops[o]
            for node in problem.path(leaf)
            for o in problem.nodes[node].ops
            if problem.ops[o].kind is Kind.MEM
        ]
        units = profile.num_eus * profile.lanes
        if len(accesses) > units:
            out.append(
                Diagnostic(
                    codes.SCHEDULE_TOO_MANY_ACCESSES,
                    f"a path of {_where(problem)} makes {len(accesses)} memory accesses but "
                    f"{profile.name} has {units} memory units ({profile.num_eus} EUs x "
                    f"{profile.lanes} lanes)",
                    accesses[-1].span or problem.span,
                    hint=memory_units_hint(profile, len(accesses)),
                )
            )
            break
    leaves = problem.leaves()
    if problem.placement == "packet" and len(leaves) > profile.packet_bundles_per_stage:
        spans = [problem.nodes[leaf].end.span for leaf in leaves]
        out.append(
            Diagnostic(
                codes.SCHEDULE_TOO_MANY_PATHS,
                f"{_where(problem)} has {len(leaves)} paths, but in-packet code carries at most "
                f"{profile.packet_bundles_per_stage} epilogs on {profile.name}",
                problem.span,
                notes=tuple(Note("a path ends here", s) for s in spans if s is not None),
                hint="place it in the switch with @placement(switch), or merge paths",
            )
        )
    return out


def _pinned(problem: Problem, array: str) -> str:
    info = problem.arrays[array]
    assert info.pin is not None
    where = f"EU{info.pin[0]} lane {info.pin[1]}"
    if info.pinned_by == "pin":
        return f"pinned to {where}"
    return f"bound to {where} by DPF `{info.pinned_by}`"


def from_core(problem: Problem, core: Sequence[str] | None, needed_eus: int | None) -> Diagnostic:
    """DPF6020 from the keys of an unsat core (see :class:`~dpfc.schedule.z3.model.Z3Model`):
    Z3 proved that nothing fits. ``core`` is None when the core itself could not be
    computed within the resource limit (the proof stands; its explanation is missing)."""
    profile = problem.profile
    notes: list[Note] = []
    for key in core or ():
        kind, _, name = key.partition(":")
        if kind == "pin":
            notes.append(
                Note(f"array `{name}` is {_pinned(problem, name)}", problem.arrays[name].span)
            )
            accesses = [o for o in problem.ops if o.kind is Kind.MEM and o.array == name]
            if accesses and accesses[0].span is not None:
                notes.append(Note(f"`{name}` is accessed here", accesses[0].span))
        elif kind == "exit":
            end = problem.nodes[int(name)].end
            notes.append(
                Note(
                    f"this epilog needs its values in registers when the path ends "
                    f"({profile.registers} registers: A0..A{profile.lanes - 1}, "
                    f"B0..B{profile.lanes - 1})",
                    end.span,
                )
            )
        elif kind == "reserved":
            for (eu, lane), array in sorted(problem.reserved.items()):
                notes.append(
                    Note(
                        f"EU{eu} lane {lane} holds array `{array}` of another DPF of the module "
                        f"({_pinned(problem, array)})",
                        problem.arrays[array].span,
                    )
                )
        elif kind == "immediates":
            notes.append(
                Note(f"a bundle holds at most {profile.immediates_per_bundle} distinct immediates")
            )
        elif kind == "packet-bundles":
            notes.append(
                Note(
                    f"in-packet code carries at most {profile.packet_bundles_per_stage} "
                    "bundles per EU"
                )
            )
    if core is None:
        notes.append(
            Note(
                "Z3 proved that no placement exists, but could not name the conflicting "
                "constraints within its resource limit"
            )
        )
    elif not core:
        notes.append(
            Note(
                "the dependences between its operations, the register classes and the "
                f"{profile.registers} registers alone rule out every placement"
            )
        )
    if needed_eus is not None:
        notes.append(Note(f"it would need {needed_eus} EUs (found on a profile with more EUs)"))
    return Diagnostic(
        codes.SCHEDULE_DOES_NOT_FIT,
        f"{_where(problem)} does not fit in the {profile.num_eus} EUs x {profile.lanes} lanes "
        f"of {profile.name}",
        problem.span,
        notes=tuple(notes),
        hint=more_eus(profile, needed_eus),
    )


def undecided(problem: Problem, counts: Sequence[int], rlimit: int) -> Diagnostic:
    """DPF6024: Z3 answered "unknown" (its resource limit) and the greedy scheduler found no
    schedule: neither a schedule nor a proof that none exists."""
    listed = ", ".join(str(k) for k in sorted(set(counts))) or "none"
    return Diagnostic(
        codes.SCHEDULE_UNDECIDED,
        f"the scheduler could neither place {_where(problem)} on {problem.profile.name} nor "
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
        f"scheduling {_where(problem)} was stopped by the wall-clock guard after "
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


def _describe(op: Operation) -> str:
    if op.kind is Kind.MEM:
        return f"`{op.name}`: {op.mem.name.lower() if op.mem else 'access'} of `{op.array}`"
    if op.kind is Kind.HASH:
        return f"`{op.name}`: hash<{op.lane}>"
    return f"`{op.name}`: {op.alu.name.lower() if op.alu else op.kind.value}"


def from_bounds(problem: Problem, bounds: Bounds) -> list[Diagnostic]:
    """DPF6027 for pinned accesses that cannot be ready in their EU; DPF6026 when the
    dependence chain alone needs more EUs than the profile has."""
    profile = problem.profile
    out: list[Diagnostic] = []
    for op, ready in bounds.late_pins:
        info = problem.arrays[op.array or ""]
        assert info.pin is not None
        out.append(
            Diagnostic(
                codes.SCHEDULE_PIN_NOT_READY,
                f"array `{info.name}` is {_pinned(problem, info.name)}, but this access can run "
                f"in EU{ready} at the earliest",
                op.span or problem.span,
                notes=(Note(f"`{info.name}` is declared here", info.span),),
                hint="its address (and data) come from values computed in earlier EUs; pin the "
                "array to a later EU, or remove the @pin",
            )
        )
    if out or bounds.min_eus <= profile.num_eus:
        return out
    chain = critical_chain(problem, bounds)
    notes = tuple(
        Note(f"{_describe(op)} runs in EU{bounds.run[op.id]} at the earliest", op.span)
        for op in chain
    )
    return [
        Diagnostic(
            codes.SCHEDULE_DEPENDENCE_CHAIN,
            f"{_where(problem)} needs at least {bounds.min_eus} EUs but {profile.name} has "
            f"{profile.num_eus}: its longest chain of dependent operations is too long",
            (chain[0].span if chain else None) or problem.span,
            notes=notes,
            hint=more_eus(profile, bounds.min_eus),
        )
    ]
