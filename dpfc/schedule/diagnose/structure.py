"""Conflicts visible without a solver: DPF6021, DPF6022, DPF6023.

Contract: :func:`precheck` returns one diagnostic per conflict, each with every location
involved: two arrays that need one (EU, lane) — pinned there on one path or on exclusive
ones, or one of them pinned or bound where an array of another DPF of the module is
(``Problem.reserved``) — (DPF6021); a path with more memory accesses than the profile has
memory units (DPF6022, at its last access); an in-packet DPF with more paths than a packet
carries epilogs (DPF6023, at the branch that makes the first path too many, with a note per
path: its decisions and the statement it ends with).
"""

from __future__ import annotations

from itertools import combinations

from dpfc.catalog import codes
from dpfc.diagnostics import Diagnostic, Note, Span
from dpfc.schedule.diagnose.hints import AS_WRITTEN, memory_units_hint, pinned, where
from dpfc.schedule.diagnose.source_terms import path_end, path_words, source_order
from dpfc.schedule.problem.tree import Kind, Problem


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
    arrays: dict[str, Span | None] = {}
    for leaf in problem.leaves():
        for name, span in _path_arrays(problem, leaf).items():
            arrays.setdefault(name, span)
    return [
        *_same_lane(problem, arrays),
        *_module_lanes(problem, arrays),
        *_accesses(problem),
        *_paths(problem),
    ]


def _same_lane(problem: Problem, arrays: dict[str, Span | None]) -> list[Diagnostic]:
    """Two arrays of the DPF in one lane would share its virtual address space (the
    linker's DPF7004), on one path or not."""
    out: list[Diagnostic] = []
    for a, b in combinations(sorted(arrays), 2):
        pa, pb = problem.arrays[a].pin, problem.arrays[b].pin
        if pa is None or pa != pb:
            continue
        notes = [
            Note(f"array `{a}` is {pinned(problem, a)}", problem.arrays[a].span),
            Note(f"array `{b}` is {pinned(problem, b)}", problem.arrays[b].span),
            Note(f"`{a}` is accessed here", arrays[a]),
            Note(f"`{b}` is accessed here", arrays[b]),
        ]
        out.append(
            Diagnostic(
                codes.SCHEDULE_PIN_CONFLICT,
                f"array `{a}` and array `{b}` both need EU{pa[0]} lane {pa[1]} in "
                f"{where(problem)}, but a lane's memory holds one array (their addresses "
                "would overlap)",
                arrays[b] or problem.span,
                notes=tuple(notes),
                hint="pin one of the arrays to another EU or lane",
            )
        )
    return out


def _module_lanes(problem: Problem, arrays: dict[str, Span | None]) -> list[Diagnostic]:
    """... nor in the lane of an array another DPF of the module uses (the DPFs of a
    module are linked for one tenant)."""
    out: list[Diagnostic] = []
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
                    Note(f"array `{name}` is {pinned(problem, name)}", problem.arrays[name].span),
                    Note(
                        f"array `{other}` is {pinned(problem, other)}; another DPF of the "
                        "module accesses it",
                        problem.arrays[other].span,
                    ),
                ),
                hint="pin one of the arrays to another EU or lane",
            )
        )
    return out


def _accesses(problem: Problem) -> list[Diagnostic]:
    profile = problem.profile
    units = profile.num_eus * profile.lanes
    for leaf in problem.leaves():
        accesses = sorted(
            (
                problem.ops[o]
                for node in problem.path(leaf)
                for o in problem.nodes[node].ops
                if problem.ops[o].kind is Kind.MEM
            ),
            key=source_order,
        )
        if len(accesses) > units:
            return [
                Diagnostic(
                    codes.SCHEDULE_TOO_MANY_ACCESSES,
                    f"{path_words(problem, leaf)} of {where(problem)} makes {len(accesses)} "
                    f"memory accesses but {profile.name} has {units} memory units "
                    f"({profile.num_eus} EUs x {profile.lanes} lanes)",
                    accesses[-1].span or problem.span,
                    notes=tuple(
                        Note(f"access {n} of {len(accesses)}, to `{op.array}`", op.span)
                        for n, op in enumerate(accesses, 1)
                        if op.span is not None
                    ),
                    hint=memory_units_hint(profile, len(accesses)),
                )
            ]
    return []


def _paths(problem: Problem) -> list[Diagnostic]:
    """In-packet code carries one epilog per path."""
    profile = problem.profile
    limit = profile.packet_bundles_per_stage
    leaves = problem.leaves()
    if problem.placement != "packet" or len(leaves) <= limit:
        return []
    # Nodes are numbered in preorder: the first path too many is the leaf after the
    # limit, and the branch that separates it from the paths before it is its parent's.
    extra = leaves[limit]
    parent = problem.nodes[extra].parent
    span = problem.nodes[parent].end.span if parent is not None else None
    notes: list[Note] = []
    for number, leaf in enumerate(leaves, 1):
        ends, at = path_end(problem, leaf)
        notes.append(
            Note(f"path {number} of {len(leaves)}: {path_words(problem, leaf)} {ends}", at)
        )
    return [
        Diagnostic(
            codes.SCHEDULE_TOO_MANY_PATHS,
            f"{where(problem)} as written has {len(leaves)} paths, but in-packet code carries "
            f"at most {limit} epilogs on {profile.name}: this branch makes path {limit + 1}",
            span or problem.span,
            notes=(*notes, AS_WRITTEN),
            hint="place it in the switch with @placement(switch), or merge paths (compute a "
            "value with `select` or `min`/`max` instead of branching)",
        )
    ]
