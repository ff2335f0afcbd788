"""The Z3 scheduler: the encoding of a problem at a fixed EU count, and the search over EU
counts under deterministic resource limits.

Contract: :class:`Z3Model` states "the problem runs in at most k EUs" as a propositional
formula; it answers "sat" with a schedule, "unsat" (then :meth:`Z3Model.core` names the
constraint groups that conflict) or "unknown" at its resource limit, and minimises bundles,
then instructions, with Z3's MaxSAT (:meth:`Z3Model.optimise`). :func:`search_eus` asks it
for the fewest EUs in rounds of growing limits and reports honestly what it proved
(:class:`EuSearch`). Every question runs under a resource limit, never a clock
(:class:`Budget`); the wall-clock guard (:class:`WallClockGuard`) only stops, raising
:class:`GuardFired`. The same problem, profile and z3 version give the same answers.

Modules: :mod:`.adapter` (the only module of dpfc importing z3: context, term
constructors, groups, solvers), :mod:`.encoding` (the encoding's state: its literals by
meaning), :mod:`.program` and :mod:`.states` (the constraint families), :mod:`.read`
(model -> schedule), :mod:`.model` (building in one fixed order, solving),
:mod:`.eu_search`, :mod:`.limits`.
"""

from dpfc.schedule.z3.adapter import solver_version
from dpfc.schedule.z3.eu_search import EuSearch, search_eus
from dpfc.schedule.z3.limits import (
    FEASIBILITY_RLIMIT,
    IMPROVE_RLIMIT,
    NEEDED_EUS_RLIMIT,
    SECONDARY_RLIMIT,
    Budget,
    GuardFired,
    WallClockGuard,
    question_rounds,
)
from dpfc.schedule.z3.model import Z3Model

__all__ = [
    "FEASIBILITY_RLIMIT",
    "IMPROVE_RLIMIT",
    "NEEDED_EUS_RLIMIT",
    "SECONDARY_RLIMIT",
    "Budget",
    "EuSearch",
    "GuardFired",
    "WallClockGuard",
    "Z3Model",
    "question_rounds",
    "search_eus",
    "solver_version",
]
