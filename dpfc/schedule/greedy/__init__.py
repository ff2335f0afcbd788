"""The greedy list scheduler: a fast, deterministic baseline and the Z3 scheduler's fallback.

Contract: :func:`greedy_schedule` returns a complete schedule of a problem that obeys every
machine rule (the independent checker accepts it) in at most the EUs allowed, or None when
its heuristics cannot fit the DPF; it never raises on a valid problem. It is not optimal:
the Z3 schedule is kept only where it is no worse in every measure.

Modules: :mod:`.scheduler` (the variants, the walk over the tree, the assembled schedule),
:mod:`.facts` (what never changes during a run, liveness, the plan of one step),
:mod:`.prolog` (which register each input word is loaded into), :mod:`.step` (the actions
of one step, added one at a time), :mod:`.realise` (the selectors that carry a plan out
without losing a live value).
"""

from dpfc.schedule.greedy.scheduler import greedy_schedule

__all__ = ["greedy_schedule"]
