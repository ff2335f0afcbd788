"""The code of each schedule, generated and encoded once per compile.

The scheduler compares candidate schedules by, last, the bytes of the code they generate
(:class:`~dpfc.schedule.Measures`): :meth:`GeneratedCode.code_bytes` generates and encodes
a schedule's code and keeps it, so that the schedule each DPF ends with — one that was
measured, unless it came from the schedule cache — is not generated again when its unit is
made (:meth:`GeneratedCode.compiled`). A schedule is immutable and its code depends on
nothing else, except the chain targets a caller names (then the code is generated afresh:
the measured code has the linker's placeholders).
"""

from __future__ import annotations

from collections.abc import Mapping

from dpfc.codegen import CompiledDPF, generate
from dpfc.isa import PC
from dpfc.schedule import Schedule


class GeneratedCode:
    """The code generated for each schedule so far (by the schedule's identity)."""

    def __init__(self) -> None:
        # id -> (the schedule, kept alive so that its id is not reused, and its code)
        self.by_schedule: dict[int, tuple[Schedule, CompiledDPF]] = {}

    def compiled(
        self, schedule: Schedule, chain_targets: Mapping[str, PC] | None = None
    ) -> CompiledDPF:
        """The code of ``schedule`` (with ``chain_targets`` resolved, if any)."""
        if chain_targets:
            return generate(schedule, chain_targets=chain_targets)
        found = self.by_schedule.get(id(schedule))
        if found is None:
            found = self.by_schedule[id(schedule)] = (schedule, generate(schedule))
        return found[1]

    def code_bytes(self, schedule: Schedule) -> int:
        """The bytes of the code a schedule generates: the in-packet options of an
        in-packet DPF, the in-switch code words of an in-switch one (the scheduler's last
        measure)."""
        encoded = self.compiled(schedule).encoded
        if encoded.packed is not None:
            return len(encoded.options)
        return sum(len(word) for word in encoded.words.values())
