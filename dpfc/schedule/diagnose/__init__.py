"""Why a DPF does not fit: the scheduler's diagnostics DPF6020-6028, in the source's words.

Contract: every function here takes a :class:`~dpfc.schedule.problem.Problem` (and what
the scheduler found out about it) and returns :class:`~dpfc.diagnostics.Diagnostic` values;
none decides anything about the schedule. Three sources:

* :func:`precheck` (:mod:`.structure`): conflicts visible without a solver — two arrays
  that need one (EU, lane) in a DPF or in the DPFs of a module (DPF6021), more memory
  accesses on a path than memory units (DPF6022), more paths than in-packet code carries
  epilogs (DPF6023, with a note per path);
* :func:`from_bounds` (:mod:`.chains`): the earliest-EU bounds — a pinned access that
  cannot be ready in its EU (DPF6027), or a chain of dependent operations and branches
  longer than the profile's EUs (DPF6026, the chain shown ending in the last EU it claims);
* the solver (:mod:`.solver`): Z3 proved that nothing fits, and its unsat core names the
  constraints that conflict (DPF6020); Z3 could neither place nor refute within its limit
  (DPF6024: nothing is claimed); the wall-clock guard stopped it (DPF6028).

Every diagnostic points at what is responsible — the branch, value, access or path, at the
source span of that expression or statement (:mod:`.source_terms`: variable names and
source text, never IR value names, the ``@placement`` attribute or the closing brace when
something better exists). A bound or proof about the DPF's scheduling problem holds for the
DPF *as written* (after optimisation, in the form the scheduler was given: docs/scheduling.md,
"What the bounds mean"), and the messages say so. Only what was proven is said to be proven.
"""

from dpfc.schedule.diagnose.chains import from_bounds
from dpfc.schedule.diagnose.hints import AS_WRITTEN, hint, memory_units_hint, more_eus
from dpfc.schedule.diagnose.solver import from_core, guard_fired, undecided
from dpfc.schedule.diagnose.structure import precheck

__all__ = [
    "AS_WRITTEN",
    "from_bounds",
    "from_core",
    "guard_fired",
    "hint",
    "memory_units_hint",
    "more_eus",
    "precheck",
    "undecided",
]
