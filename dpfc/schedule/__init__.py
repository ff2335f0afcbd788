"""Scheduling: place a DPF's operations on SwitchVM's EUs, lanes and registers.

See docs/scheduling.md: :mod:`.build` (IR -> problem), :mod:`.z3model` (the optimal
scheduler), :mod:`.greedy` (the baseline), :mod:`.check` (the independent checker),
:mod:`.driver` (the search and the reports), :mod:`.explain` (grids and pictures).
"""
