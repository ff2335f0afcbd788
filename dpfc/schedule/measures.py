"""What a schedule costs, in the measures the reports name, and lower bounds on them.

A schedule is compared with another in every measure at once: EUs (the primary objective),
EU bundles before sharing, selectors, instructions (prolog loads, EU selectors and ALU
operations: what the secondary objective lowers after bundles) and, when the caller
measures generated code, the bytes of the in-packet options. The search keeps the greedy
schedule unless the Z3 schedule is no worse in every measure (or uses fewer EUs), so the
final schedule is never worse than greedy's.

:func:`secondary_floor` gives lower bounds on bundles and instructions that hold for every
schedule at a given EU count: a schedule that meets both is optimal in them without asking
Z3.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import astuple, dataclass

from dpfc.schedule.problem.bounds import Bounds
from dpfc.schedule.problem.tree import Branch, Exit, Kind, Problem
from dpfc.schedule.schedule import Schedule

CodeBytes = Callable[[Schedule], int]  # bytes of the code generated from a schedule


@dataclass(frozen=True)
class Measures:
    eus: int
    bundles: int
    selectors: int
    instructions: int
    code_bytes: int = 0  # 0 when the caller does not measure code

    def no_worse_than(self, other: Measures) -> bool:
        return all(a <= b for a, b in zip(astuple(self), astuple(other), strict=True))

    def worse_in(self, other: Measures) -> list[str]:
        """The measures in which ``self`` is worse than ``other``."""
        names = ("EUs", "bundles", "selectors", "instructions", "code bytes")
        pairs = zip(names, astuple(self), astuple(other), strict=True)
        return [name for name, a, b in pairs if a > b]


def instruction_count(schedule: Schedule) -> int:
    """Prolog loads, EU selectors and ALU ops (memory ops and branches are fixed by the
    program): the Z3 model's second secondary objective."""
    return len(schedule.prolog) + sum(len(s.selectors) + len(s.alu) for s in schedule.steps)


def measure(schedule: Schedule, code_bytes: CodeBytes | None = None) -> Measures:
    return Measures(
        schedule.eus_used,
        schedule.bundle_count(),
        schedule.selector_count(),
        instruction_count(schedule),
        code_bytes(schedule) if code_bytes is not None else 0,
    )


def secondary_floor(problem: Problem, bounds: Bounds, eus: int) -> tuple[int, int]:
    """Lower bounds on (bundles, instructions) of any schedule in ``eus`` EUs.

    Bundles: every EU up to the latest earliest-end of a node is owned by some node of the
    longest path; every node owns a bundle of its own, except a leaf whose parent branches
    in the profile's last EU (impossible when ``eus`` is below the profile's count).
    Instructions: every ALU operation and every HASH runs at least once; the prolog reads
    every parameter position, the ``peek()`` word and each metadata and random input; a
    non-zero constant that an ALU or memory operation takes, or an epilog pushes, needs a
    LOAD_IMM (the prolog leaves only zeros)."""
    nodes = problem.nodes
    branches = sum(isinstance(n.end, Branch) for n in nodes)
    owning = len(nodes) if eus < problem.profile.num_eus else branches
    bundles = max(max((bounds.last[n.id] for n in nodes), default=0) + 1, owning)
    ops = problem.ops
    loaded = {o.id for o in ops if o.kind in (Kind.PEEK, Kind.META, Kind.RAND)}
    operands = {x for o in ops if o.kind in (Kind.ALU, Kind.MEM) for x in o.operands}
    pushed = {v for n in nodes if isinstance(n.end, Exit) for v in n.end.push}
    constants = {
        o.id for o in ops if o.kind is Kind.CONST and o.value != 0 and o.id in operands | pushed
    }
    computed = sum(o.kind in (Kind.ALU, Kind.HASH) and o.id not in problem.same_word for o in ops)
    return bundles, problem.params + len(loaded) + len(constants) + computed
